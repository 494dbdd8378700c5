//! The evolution faces end to end: `covenant diff` in its three outputs and exit codes,
//! `covenant check --base` from a directory and from a git ref, the live-object check from
//! `--context`, and a real CRD UPDATE review through the webhook over TLS.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;
use serde_json::{json, Value};

fn covenant() -> Command {
    Command::cargo_bin("covenant").unwrap()
}

/// `covenant diff` under a config that enforces every CRD and XRD (the platform's own, as in
/// a platform repository's CI): what the policy refuses is refused, not only advised.
fn diff() -> Command {
    let mut c = covenant();
    c.arg("diff").arg("--config").arg(common::fixtures().join("cli/enforce.yaml"));
    c
}

fn peer(path: &str) -> PathBuf {
    common::fixtures().join("peer-cases").join(path)
}

fn rules_fixture(rule: &str, file: &str) -> PathBuf {
    common::fixtures().join("rules").join(rule).join(file)
}

/// `covenant check` under a config that enforces the evolution rules on every CRD.
fn enforced() -> Command {
    let mut c = covenant();
    c.args(["check", "--config"]).arg(common::fixtures().join("cli/enforce.yaml"));
    c
}

fn stdout(cmd: &mut Command, code: i32) -> String {
    String::from_utf8(cmd.assert().code(code).get_output().stdout.clone()).unwrap()
}

/// What `cmd` wrote to stderr, asserting it exits with `code`.
fn stderr(cmd: &mut Command, code: i32) -> String {
    String::from_utf8(cmd.assert().code(code).get_output().stderr.clone()).unwrap()
}

/// A named pipe at a fresh path, fed `text` by a thread, as a shell's `<(…)` hands one over.
fn piped(dir: &Path, name: &str, text: Vec<u8>) -> std::path::PathBuf {
    let fifo = dir.join(name);
    assert!(Process::new("mkfifo").arg(&fifo).status().unwrap().success());
    let to = fifo.clone();
    // Not joined: a covenant that never opened the pipe fails the caller's assertion rather
    // than hanging the test.
    std::thread::spawn(move || std::fs::write(to, text));
    fifo
}

#[test]
fn check_reads_a_pipe_for_the_checked_documents_and_for_the_base() {
    // `covenant check <(helm template …)` and `check crd.yaml --base <(git show main:crd.yaml)`:
    // a pipe can be read once, so it is read whole, as stdin is (before, a pipe was taken for
    // a directory, and the check failed with "No such file or directory").
    let (old, new) = (rules_fixture("CVN-205", "base.yaml"), rules_fixture("CVN-205", "input.yaml"));
    let dir = tempfile::tempdir().unwrap();
    let checked = piped(dir.path(), "checked.yaml", std::fs::read(&new).unwrap());
    let base = piped(dir.path(), "base.yaml", std::fs::read(&old).unwrap());
    let text = stdout(enforced().arg(&checked).arg("--base").arg(&base), 1);
    let line =
        std::fs::read_to_string(&new).unwrap().lines().position(|l| l.contains("maxLength: 40")).unwrap();
    let at = format!("{}:{}:", checked.display(), line + 1);
    assert!(text.contains(&at) && text.contains("error[CVN-205]"), "{text}");
    assert!(text.contains("1 document(s) checked: 1 denied (in 1 document)"), "{text}");
    // A pipe whose text is not UTF-8 is said as the file it names, as stdin's is.
    let bad = piped(dir.path(), "bad.yaml", b"kind: \xff\n".to_vec());
    let err = stderr(enforced().arg(&bad), 2);
    assert!(err.contains(&format!("cannot read {}", bad.display())), "{err}");
}

#[test]
fn diff_reads_a_pipe_and_stdin_and_says_what_is_not_one_document() {
    let (old, new) = (rules_fixture("CVN-205", "base.yaml"), rules_fixture("CVN-205", "input.yaml"));
    let refused = "maxLength of \"spec.name\" changed from 63 to 40";
    // `git show main:crd.yaml | covenant diff - crd.yaml`.
    let text = stdout(diff().arg("-").arg(&new).write_stdin(std::fs::read(&old).unwrap()), 1);
    assert!(text.contains(refused), "{text}");
    // `covenant diff <(git show main:crd.yaml) crd.yaml`: the shell hands over a pipe.
    let dir = tempfile::tempdir().unwrap();
    let fifo = piped(dir.path(), "old.yaml", std::fs::read(&old).unwrap());
    let text = stdout(diff().arg(&fifo).arg(&new), 1);
    assert!(text.contains(refused), "{text}");
    // What is not one document is said as what it is.
    let said = |args: &[&std::ffi::OsStr]| stderr(diff().args(args), 2);
    let err = said(&[old.as_os_str(), "/dev/null".as_ref()]);
    assert!(err.contains("/dev/null: holds no document"), "{err}");
    let err = said(&[old.as_os_str(), dir.path().as_os_str()]);
    assert!(err.contains("is a directory; covenant diff compares two documents"), "{err}");
    let err = said(&["-".as_ref(), "-".as_ref()]);
    assert!(err.contains("not both"), "{err}");
    // A list of one item (`kubectl get crd -l … -o yaml`, or `-o json`) is compared as its
    // item; a list of more is refused, naming how to compare lists.
    let crd = std::fs::read_to_string(&old).unwrap();
    let listed = format!("apiVersion: v1\nkind: List\nitems:\n{}\n", common::as_item(&crd));
    let text = stdout(diff().arg("-").arg(&new).write_stdin(listed), 1);
    assert!(text.contains(refused), "{text}");
    let object: Value = covenant::source::parse_stream(&crd).0.remove(0).value;
    let json_list =
        |items: Vec<Value>| json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    let text = stdout(diff().arg("-").arg(&new).write_stdin(json_list(vec![object.clone()])), 1);
    assert!(text.contains(refused), "{text}");
    let mut two = covenant();
    two.arg("diff").arg("-").arg(&new).write_stdin(json_list(vec![object.clone(), object]));
    let err = stderr(&mut two, 2);
    assert!(err.contains("-: a List of 2 items") && err.contains("covenant check NEW --base OLD"), "{err}");
}

#[test]
fn diff_says_where_kubectl_reads_a_scalar_as_another_value() {
    // `default: "on"` made `default: on`: text to covenant both times, a boolean to kubectl
    // after. The diff finds no change; it says why it may be wrong, where.
    let scratch = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(rules_fixture("CVN-205", "base.yaml")).unwrap();
    let mode = "mode: {type: string}";
    let at = base.find(mode).expect("the mode property");
    let with = |default: &str| base.replacen(mode, &format!("mode: {{type: string, default: {default}}}"), 1);
    std::fs::write(scratch.path().join("old.yaml"), with("\"on\"")).unwrap();
    std::fs::write(scratch.path().join("new.yaml"), with("on")).unwrap();
    let line = base[..at].lines().count();
    let column = at - base[..at].rfind('\n').unwrap() + "mode: {type: string, default: ".len();
    let out = covenant().current_dir(scratch.path()).args(["diff", "old.yaml", "new.yaml"]).assert().code(0);
    let out = out.get_output();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("no changes"), "{stdout}");
    assert!(stderr.contains(&format!("new.yaml:{line}:{column}: warning[CVN-110]")), "{stderr}");
    assert!(stderr.contains("the boolean true to kubectl"), "{stderr}");
    assert!(!stderr.contains("old.yaml"), "{stderr}");
    // `check --base` where the base held the scalar kubectl read as a boolean: the checked
    // document is clean, and what the base is compared as is said.
    for (dir, default) in [("base", "on"), ("checked", "\"on\"")] {
        std::fs::create_dir(scratch.path().join(dir)).unwrap();
        std::fs::write(scratch.path().join(dir).join("crd.yaml"), with(default)).unwrap();
    }
    let out =
        covenant().current_dir(scratch.path()).args(["check", "checked", "--base", "base"]).assert().code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let at = format!("base/crd.yaml:{line}:{column}: warning[CVN-110]");
    assert!(stderr.contains(&at) && stderr.contains("covenant check --base compares the string"), "{stderr}");
}

#[test]
fn check_reads_a_list_document_as_its_items() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = (dir.path().join("base"), dir.path().join("head"));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&head).unwrap();
    // `kubectl get -o yaml` output: a custom resource and the CRD, before and after a tightening.
    let configmap = "- apiVersion: example.com/v1\n  kind: Gadget\n  metadata: {name: settings}";
    let list = |crd: &str| {
        format!(
            "apiVersion: v1\nkind: List\nitems:\n{configmap}\n{}\n",
            common::as_item(&std::fs::read_to_string(rules_fixture("CVN-205", crd)).unwrap())
        )
    };
    std::fs::write(base.join("crds.yaml"), list("base.yaml")).unwrap();
    let listed = list("input.yaml");
    std::fs::write(head.join("crds.yaml"), &listed).unwrap();
    // Each item judged as the object it is, paired with its previous version; the finding is
    // at the tightened line of the file, and the Gadget (no CRD for it given) is said to be
    // unjudged.
    let line = listed.lines().position(|l| l.contains("maxLength: 40")).unwrap() + 1;
    let text = stdout(enforced().arg(&head).arg("--base").arg(&base), 1);
    assert!(text.contains(&format!("crds.yaml:{line}:")) && text.contains("error[CVN-205]"), "{text}");
    assert!(text.contains("2 document(s) checked: 1 denied (in 1 document)"), "{text}");
    assert!(text.contains("1 of kinds no rule judges (example.com/v1 Gadget)"), "{text}");
    // Unpaired, the CRD is new and nothing is tightened: no item is judged deleted either.
    stdout(enforced().arg(&head), 0);
    // A base directory that holds no document file is an error, not a base of nothing against
    // which every document would be new and nothing tightened.
    let empty = tempfile::tempdir().unwrap();
    let err = stderr(enforced().arg(&head).arg("--base").arg(empty.path()), 2);
    assert!(err.contains("--base") && err.contains("holds no *.yaml, *.yml or *.json file"), "{err}");
    // JSON: the pointer is the item's own, and the item is named.
    let out = stdout(enforced().arg(&head).arg("--base").arg(&base).args(["--output", "json"]), 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    let finding = &report["findings"][0];
    assert_eq!((finding["document"].as_u64(), finding["item"].as_u64()), (Some(0), Some(1)), "{finding}");
    assert_eq!(finding["line"].as_u64(), Some(line as u64), "{finding}");
    assert_eq!(finding["pointer"], "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/name");
    assert_eq!(finding["name"], "widgets.example.com");
    assert_eq!(report["unjudged"][0]["item"], 0);
    // JUnit: a case per item.
    let out = stdout(enforced().arg(&head).arg("--base").arg(&base).args(["--output", "junit"]), 1);
    assert!(
        out.contains("name=\"Gadget settings (document 0, item 0)\"") && out.contains("<skipped"),
        "{out}"
    );
    assert!(
        out.contains("name=\"CustomResourceDefinition widgets.example.com (document 0, item 1)\""),
        "{out}"
    );
    assert!(out.contains("tests=\"2\" failures=\"1\""), "{out}");
    // The API's typed list: its items name no kind, and take the list's.
    let typed = listed
        .replace(
            "apiVersion: v1\nkind: List",
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinitionList",
        )
        .replace("- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n", "- ")
        .replace(configmap, "- metadata: {name: no-kind-of-its-own}")
        .replace("-   metadata:", "- metadata:");
    assert!(!typed.contains("  kind: CustomResourceDefinition\n"), "{typed}");
    std::fs::write(head.join("crds.yaml"), &typed).unwrap();
    let text = stdout(enforced().arg(&head).arg("--base").arg(&base), 1);
    assert!(text.contains("error[CVN-205]") && text.contains("2 document(s) checked"), "{text}");
    // A list of no items holds nothing to check; items that are not a list are a finding.
    std::fs::write(head.join("crds.yaml"), "apiVersion: v1\nkind: List\nitems: []\n").unwrap();
    let out = enforced().arg(&head).assert().code(2).get_output().clone();
    assert!(String::from_utf8(out.stdout).unwrap().contains("lists of no items"));
    std::fs::write(head.join("crds.yaml"), "apiVersion: v1\nkind: List\nitems: {a: 1}\n").unwrap();
    let text = stdout(enforced().arg(&head), 1);
    assert!(
        text.contains("crds.yaml:3:1: error[CVN-109] /items: the items of a List are a mapping"),
        "{text}"
    );
    // A list within the list stands for its items, as kubectl flattens it: the CRD inside
    // one is judged (and paired with its base) as it is at the top, its finding where it is.
    let crd_item = common::as_item(&std::fs::read_to_string(rules_fixture("CVN-205", "input.yaml")).unwrap());
    let nested = format!(
        "apiVersion: v1\nkind: List\nitems:\n{configmap}\n- apiVersion: v1\n  kind: List\n  items:\n{}\n",
        crd_item.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
    );
    std::fs::write(head.join("crds.yaml"), &nested).unwrap();
    let line = nested.lines().position(|l| l.contains("maxLength: 40")).unwrap() + 1;
    let out = stdout(enforced().arg(&head).arg("--base").arg(&base).args(["--output", "json"]), 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    let finding = &report["findings"][0];
    assert_eq!(
        (finding["rule"].as_str(), finding["item"].as_u64(), finding["line"].as_u64()),
        (Some("CVN-205"), Some(1), Some(line as u64)),
        "{report}"
    );
    assert_eq!(finding["pointer"], "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/name");
    assert_eq!(report["summary"]["documents"], 2, "{report}");
    std::fs::write(
        head.join("crds.yaml"),
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: {a: 1}\n",
    )
    .unwrap();
    let text = stdout(enforced().arg(&head), 1);
    assert!(
        text.contains("crds.yaml:6:3: error[CVN-109] /items/0/items: the items of a List are a mapping"),
        "{text}"
    );
    // A key the list repeats is said beside them, never dropped with the items.
    std::fs::write(head.join("crds.yaml"), "apiVersion: v1\nkind: List\nkind: List\nitems: {a: 1}\n")
        .unwrap();
    let text = stdout(enforced().arg(&head), 1);
    assert!(text.contains("crds.yaml:3:1: error[CVN-108] /kind"), "{text}");
}

#[test]
fn diff_prints_every_change_with_its_bump_and_rule_and_fails_on_a_refusal() {
    let (old, new) =
        (peer("crdify/e2e/enumvalueremoved/old.yaml"), peer("crdify/e2e/enumvalueremoved/new.yaml"));
    let text = stdout(diff().arg(&old).arg(&new), 1);
    assert!(text.starts_with("CustomResourceDefinition memcacheds.cache.example.com\n"), "{text}");
    assert!(text.contains("v1alpha1  MAJOR  CVN-204  enum-value-removed"), "{text}");
    assert!(
        text.contains("implied: MAJOR   declared: none   verdict: refused   refused by policy (always): 1"),
        "{text}"
    );

    // The JSON contract.
    let json: Value =
        serde_json::from_str(&stdout(diff().args(["--output", "json"]).arg(&old).arg(&new), 1)).unwrap();
    assert_eq!(json["implied"], "MAJOR");
    assert_eq!(json["declared"], Value::Null);
    assert_eq!(json["verdict"], "refused", "never ok beside an exit 1");
    let change = &json["changes"][0];
    for key in ["pointer", "change", "bump", "rule", "before", "after", "message", "version"] {
        assert!(change.get(key).is_some(), "{key} missing from {change}");
    }
    assert_eq!(change["pointer"], "/spec/mode");
    assert_eq!(change["change"], "enum-value-removed");
    assert_eq!(change["bump"], "MAJOR");
    assert_eq!(change["rule"], "CVN-204");
    assert_eq!(change["before"], "Unmanaged");
    assert_eq!(change["version"], "v1alpha1");
    assert_eq!(change["direction"], "written", "spec is what users write");

    // An additive change passes; the pull-request body shows the rows that change nothing.
    let (old, new) = (peer("crdify/e2e/enumvalueadded/old.yaml"), peer("crdify/e2e/enumvalueadded/new.yaml"));
    let md = stdout(diff().args(["--output", "markdown"]).arg(&old).arg(&new), 0);
    assert!(md.starts_with("## Contract diff: CustomResourceDefinition"), "{md}");
    assert!(md.contains("**Implied bump: MINOR**"), "{md}");
    assert!(md.contains("### Additions (MINOR)"), "{md}");
    let (old, new) =
        (peer("crdify/e2e/descriptionchanged/old.yaml"), peer("crdify/e2e/descriptionchanged/new.yaml"));
    let md = stdout(diff().args(["--output", "markdown"]).arg(&old).arg(&new), 0);
    assert!(md.contains("### No contract change (PATCH)"), "{md}");
}

#[test]
fn diff_of_packages_compares_the_declared_bump_with_the_implied_one() {
    let (old, new) = (rules_fixture("CVN-212", "base.yaml"), rules_fixture("CVN-212", "input.yaml"));
    let json: Value =
        serde_json::from_str(&stdout(diff().args(["--output", "json"]).arg(&old).arg(&new), 1)).unwrap();
    assert_eq!(
        (json["implied"].as_str(), json["declared"].as_str(), json["verdict"].as_str()),
        (Some("MAJOR"), Some("MINOR"), Some("bump-too-small"))
    );
    // A bump larger than the changes need breaks no one: CVN-213 warns, so `diff` says so and
    // exits 0, as `check --base` and the webhook warn; a config that makes it deny fails it.
    let (old, new) = (rules_fixture("CVN-213", "base.yaml"), rules_fixture("CVN-213", "input.yaml"));
    let json: Value =
        serde_json::from_str(&stdout(diff().args(["--output", "json"]).arg(&old).arg(&new), 0)).unwrap();
    assert_eq!(json["verdict"], "bump-too-large");
    let strict = tempfile::tempdir().unwrap();
    std::fs::write(
        strict.path().join("covenant.yaml"),
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  actions: {CVN-213: deny}\n",
    )
    .unwrap();
    let config = strict.path().join("covenant.yaml");
    let json: Value = serde_json::from_str(&stdout(
        covenant().args(["diff", "--output", "json", "--config"]).arg(&config).arg(&old).arg(&new),
        1,
    ))
    .unwrap();
    assert_eq!(json["verdict"], "bump-too-large");
    // Mismatched kinds are an input error naming both.
    let out = covenant()
        .args(["diff"])
        .arg(&old)
        .arg(peer("crdify/e2e/enumvalueadded/new.yaml"))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("covenant diff compares two"), "{err}");
}

#[test]
fn check_with_a_base_directory_runs_the_evolution_rules() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = (dir.path().join("base"), dir.path().join("head"));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&head).unwrap();
    std::fs::copy(rules_fixture("CVN-205", "base.yaml"), base.join("widgets.yaml")).unwrap();
    std::fs::copy(rules_fixture("CVN-205", "input.yaml"), head.join("widgets.yaml")).unwrap();
    // Without a base the document is a create: nothing to diff.
    covenant().arg("check").arg(&head).assert().success();
    // The default advises on a CRD that is not opted in: the same finding, as a warning.
    let text = stdout(covenant().arg("check").arg(&head).arg("--base").arg(&base), 0);
    assert!(
        text.contains("warning[CVN-205]") && text.contains("advisory (CustomResourceDefinition not opted in"),
        "{text}"
    );
    let text = stdout(enforced().arg(&head).arg("--base").arg(&base), 1);
    assert!(text.contains("error[CVN-205]"), "{text}");
    assert!(text.contains("maxLength of \"spec.name\" changed from 63 to 40"), "{text}");
    // With the live objects, the failing one is named (CVN-215).
    let text = stdout(
        enforced()
            .arg(&head)
            .arg("--base")
            .arg(&base)
            .arg("--context")
            .arg(rules_fixture("CVN-215", "context")),
        1,
    );
    assert!(text.contains("error[CVN-215]") && text.contains("shop/long at /spec/name"), "{text}");
    // When every live object satisfies it, the tightening is allowed with a warning.
    let ok = dir.path().join("ok");
    std::fs::create_dir_all(&ok).unwrap();
    let objects = std::fs::read_to_string(rules_fixture("CVN-215", "context/widgets.yaml")).unwrap();
    std::fs::write(ok.join("w.yaml"), objects.split("---").next().unwrap()).unwrap();
    let text = stdout(enforced().arg(&head).arg("--base").arg(&base).arg("--context").arg(&ok), 0);
    assert!(text.contains("warning[CVN-205]") && text.contains("warning[CVN-215]"), "{text}");
    assert!(text.contains("all 1 live object(s) satisfy the tightened schema"), "{text}");
    // The live objects as `kubectl get widgets -o yaml` writes them (`kind: List`) and as the
    // API answers a list (`WidgetList`, its items naming no kind): read as their items, so the
    // failing one is found. Read as one object of kind List, the tightening passed as
    // "no live object exists".
    let widgets: Vec<&str> = objects.split("---").map(str::trim).collect();
    let listed = dir.path().join("listed");
    std::fs::create_dir_all(&listed).unwrap();
    let items: Vec<String> = widgets.iter().map(|w| common::as_item(w)).collect();
    std::fs::write(
        listed.join("w.yaml"),
        format!("apiVersion: v1\nkind: List\nitems:\n{}\n", items.join("\n")),
    )
    .unwrap();
    let text = stdout(enforced().arg(&head).arg("--base").arg(&base).arg("--context").arg(&listed), 1);
    assert!(text.contains("error[CVN-215]") && text.contains("1 of 2 live object(s)"), "{text}");
    let typed: Vec<String> = widgets
        .iter()
        .map(|w| {
            common::as_item(
                &w.lines()
                    .filter(|l| !l.starts_with("apiVersion") && !l.starts_with("kind"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })
        .collect();
    std::fs::write(
        listed.join("w.yaml"),
        format!("apiVersion: example.com/v1alpha1\nkind: WidgetList\nmetadata: {{resourceVersion: \"7\"}}\nitems:\n{}\n", typed.join("\n")),
    )
    .unwrap();
    let text = stdout(enforced().arg(&head).arg("--base").arg(&base).arg("--context").arg(&listed), 1);
    assert!(text.contains("error[CVN-215]") && text.contains("shop/long at /spec/name"), "{text}");
    // What cannot be a cluster's object is an error naming where it is, never left out; and a
    // context of no objects is refused rather than answering "none exist".
    std::fs::write(
        listed.join("w.yaml"),
        "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: nameless-kind}\n",
    )
    .unwrap();
    let err = stderr(enforced().arg(&head).arg("--context").arg(&listed), 2);
    assert!(err.contains("w.yaml: document 0 (line 1) /items/0: it names no apiVersion"), "{err}");
    // An object that repeats a key is refused there, never read with the first winning.
    std::fs::write(
        listed.join("w.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
    )
    .unwrap();
    let err = stderr(enforced().arg(&head).arg("--context").arg(&listed), 2);
    assert!(
        err.contains("w.yaml: the key \"name\" is repeated in one mapping (first at line 4)")
            && err.contains("at line 5, column 3"),
        "{err}"
    );
    std::fs::write(listed.join("w.yaml"), "# nothing here yet\n").unwrap();
    let err = stderr(enforced().arg(&head).arg("--context").arg(&listed), 2);
    assert!(err.contains("holds no objects; leave --context out"), "{err}");

    // A base file that is not YAML stops the check, named with where it stops: read in part,
    // its later documents would be judged as new without a word.
    let broken = dir.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let text = std::fs::read_to_string(base.join("widgets.yaml")).unwrap();
    std::fs::write(broken.join("widgets.yaml"), format!("{text}\n---\nkind: [unclosed\n")).unwrap();
    let err = stderr(covenant().arg("check").arg(&head).arg("--base").arg(&broken), 2);
    assert!(
        err.contains("--base: cannot read the previous version of") && err.contains("widgets.yaml: line"),
        "{err}"
    );
}

#[test]
fn a_lookup_that_cannot_finish_in_budget_follows_the_failure_policy() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = |f: &str| rules_fixture("CVN-901", f);
    for (policy, code, rule_level) in [("deny", 1, "error"), ("allow", 0, "warning")] {
        let config = dir.path().join(format!("{policy}.yaml"));
        std::fs::write(
            &config,
            format!("apiVersion: covenant.dev/v1alpha1\nkind: Config\nevolution:\n  enforceGroups: [\"*\"]\ncluster:\n  lookupBudget: 0s\n  failurePolicy: {policy}\n"),
        )
        .unwrap();
        let text = stdout(
            covenant()
                .arg("check")
                .arg(fixture("input.yaml"))
                .arg("--base")
                .arg(dir_of(&fixture("base.yaml"), dir.path()))
                .arg("--context")
                .arg(fixture("context"))
                .arg("--config")
                .arg(&config),
            code,
        );
        assert!(text.contains(&format!("{rule_level}[CVN-901]")), "{policy}: {text}");
        assert!(text.contains(&format!("{rule_level}[CVN-205]")), "{policy}: {text}");
        assert!(!text.contains("[CVN-215]"), "{policy}: nothing was listed, so nothing is claimed: {text}");
    }
}

/// A directory holding only `file`, as `--base` reads directories.
fn dir_of(file: &Path, scratch: &Path) -> PathBuf {
    let d = scratch.join("base");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(file, d.join("base.yaml")).unwrap();
    d
}

fn git(dir: &Path, args: &[&str]) {
    let out = Process::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// An empty git repository with an identity to commit as.
fn init_repo(repo: &Path) {
    git(repo, &["init", "-q"]);
    git(repo, &["config", "user.email", "ci@example.com"]);
    git(repo, &["config", "user.name", "ci"]);
}

#[test]
fn check_with_a_base_git_ref_reads_the_same_paths_at_that_ref() {
    if Process::new("git").arg("--version").output().is_err() {
        panic!("git is required for this test");
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    init_repo(repo);
    std::fs::create_dir_all(repo.join("crds")).unwrap();
    std::fs::copy(rules_fixture("CVN-204", "base.yaml"), repo.join("crds/widgets.yaml")).unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "base"]);
    git(repo, &["branch", "-q", "main-before"]);
    std::fs::copy(rules_fixture("CVN-204", "input.yaml"), repo.join("crds/widgets.yaml")).unwrap();
    std::fs::write(
        repo.join("crds/new.yaml"),
        std::fs::read_to_string(rules_fixture("CVN-201", "base.yaml")).unwrap().replace("widgets", "gadgets"),
    )
    .unwrap();
    let enforce = common::fixtures().join("cli/enforce.yaml");
    let text = stdout(
        covenant()
            .current_dir(repo)
            .args(["check", "crds", "--base", "main-before", "--config"])
            .arg(&enforce),
        1,
    );
    assert!(text.contains("crds/widgets.yaml") && text.contains("error[CVN-204]"), "{text}");
    assert!(text.contains("enum value \"large\" was removed"), "{text}");
    assert!(!text.contains("new.yaml"), "a file the ref lacks is new, with no base: {text}");
    // Stdin (`kustomize build | covenant check - --base REF`): paired wherever the ref holds
    // the object, here under crds/ although stdin has no path.
    let input = std::fs::read_to_string(repo.join("crds/widgets.yaml")).unwrap();
    let text = stdout(
        covenant()
            .current_dir(repo)
            .args(["check", "-", "--base", "main-before", "--config"])
            .arg(&enforce)
            .write_stdin(input.clone()),
        1,
    );
    assert!(text.contains("-:") && text.contains("error[CVN-204]"), "{text}");
    // A file as the base.
    let before = repo.join("before.yaml");
    std::fs::copy(rules_fixture("CVN-204", "base.yaml"), &before).unwrap();
    let text = stdout(
        covenant()
            .current_dir(repo)
            .args(["check", "crds/widgets.yaml", "--base"])
            .arg(&before)
            .arg("--config")
            .arg(&enforce),
        1,
    );
    assert!(text.contains("error[CVN-204]"), "{text}");
    // An unknown ref is an input error.
    let said = stderr(covenant().current_dir(repo).args(["check", "crds", "--base", "no-such-ref"]), 2);
    assert!(said.contains("not a directory, and not a git ref") && said.contains("git branch -a"), "{said}");
    // In a shallow clone (CI's default checkout) the base was never fetched: said so, with
    // how to fetch it.
    let shallow = dir.path().join("shallow");
    let out = Process::new("git")
        .args(["clone", "-q", "--depth", "1"])
        .arg(format!("file://{}", repo.display()))
        .arg(&shallow)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said =
        stderr(covenant().current_dir(&shallow).args(["check", "crds", "--base", "origin/main-before"]), 2);
    assert!(said.contains("this clone is shallow") && said.contains("fetch-depth: 0"), "{said}");
}

/// The base is read as the checked files are: what `--exclude` leaves out of the walk, and
/// what a kustomization reads as a patch, is no previous version (a chart's template at the
/// ref stopped the whole check; a patch read as the previous version of the CRD it patches
/// hid the enum the CRD narrowed). Not left out, the template stops it, saying how.
#[test]
fn a_base_git_ref_is_read_as_the_checked_files_are() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    init_repo(repo);
    let write = |name: &str, text: &str| {
        let file = repo.join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("charts/shop/Chart.yaml", "apiVersion: v2\nname: shop\nversion: 0.1.0\n");
    write(
        "charts/shop/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
    );
    std::fs::create_dir_all(repo.join("crds")).unwrap();
    std::fs::copy(rules_fixture("CVN-204", "base.yaml"), repo.join("crds/widgets.yaml")).unwrap();
    let kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";
    write(
        "overlay/kustomization.yaml",
        &format!("{kustomization}resources: [../crds]\npatches:\n  - path: widgets.yaml\n"),
    );
    // A patch of the widgets CRD, identified as it is: read as its previous version, it would
    // stand for the whole CRD and every field it leaves out would read as removed.
    write(
        "overlay/widgets.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n  \
         labels: {team: shop}\n",
    );
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "base"]);
    std::fs::copy(rules_fixture("CVN-204", "input.yaml"), repo.join("crds/widgets.yaml")).unwrap();
    let enforce = common::fixtures().join("cli/enforce.yaml");
    let text = stdout(
        covenant()
            .current_dir(repo)
            .args(["check", ".", "--exclude", "shop", "--base", "HEAD", "--config"])
            .arg(&enforce),
        1,
    );
    // The CRD is judged against its own previous version (the enum it narrowed), not the patch.
    assert!(text.contains("./crds/widgets.yaml") && text.contains("error[CVN-204]"), "{text}");
    assert!(text.contains("enum value \"large\" was removed"), "{text}");
    assert!(!text.contains("shop") && !text.contains("overlay/widgets.yaml:"), "{text}");
    assert!(text.contains("; ./overlay/widgets.yaml, a patch)"), "{text}");
    let err = stderr(covenant().current_dir(repo).args(["check", ".", "--base", "HEAD"]), 2);
    assert!(
        err.contains("HEAD:charts/shop/templates/cm.yaml: line 4") && err.contains("same --exclude"),
        "{err}"
    );
}

/// One identity in several places (a CRD per environment's folder, each at its own version):
/// a document is paired with the previous version in its own place, never another
/// environment's; where its place cannot tell them apart (stdin), it is judged as new and a
/// note says why.
#[test]
fn a_document_is_paired_with_the_previous_version_in_its_own_place() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    init_repo(repo);
    for (env, version) in [("prod", "input.yaml"), ("staging", "base.yaml")] {
        std::fs::create_dir_all(repo.join("clusters").join(env)).unwrap();
        std::fs::copy(
            rules_fixture("CVN-204", version),
            repo.join("clusters").join(env).join("widgets.yaml"),
        )
        .unwrap();
    }
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "base"]);
    let enforce = common::fixtures().join("cli/enforce.yaml");
    // Unchanged, each against its own: nothing (paired with staging's wider enum, prod's
    // would read as narrowed).
    let text = stdout(
        covenant().current_dir(repo).args(["check", ".", "--base", "HEAD", "--config"]).arg(&enforce),
        0,
    );
    assert!(!text.contains("CVN-204") && !text.contains("note:"), "{text}");
    // Staging narrows its enum as prod did: refused in staging's file alone.
    std::fs::copy(rules_fixture("CVN-204", "input.yaml"), repo.join("clusters/staging/widgets.yaml"))
        .unwrap();
    let text = stdout(
        covenant().current_dir(repo).args(["check", ".", "--base", "HEAD", "--config"]).arg(&enforce),
        1,
    );
    assert_eq!(text.matches("error[CVN-204]").count(), 1, "{text}");
    assert!(text.contains("./clusters/staging/widgets.yaml:"), "{text}");
    // From stdin, nothing says which it was.
    let input = std::fs::read_to_string(repo.join("clusters/staging/widgets.yaml")).unwrap();
    let text = stdout(
        covenant()
            .current_dir(repo)
            .args(["check", "-", "--base", "HEAD", "--config"])
            .arg(&enforce)
            .write_stdin(input),
        0,
    );
    assert!(
        text.contains(
            "note: -: CustomResourceDefinition widgets.example.com was judged as new: 2 previous versions share its identity"
        ),
        "{text}"
    );
}

/// A document the ref holds under the checked paths and the working tree no longer does was
/// deleted: deleting a construct version that consumers still pin is reported, as it is with
/// a base directory.
#[test]
fn check_with_a_base_git_ref_judges_deleted_files_as_deletions() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    init_repo(repo);
    std::fs::create_dir_all(repo.join("types")).unwrap();
    std::fs::copy(rules_fixture("CVN-410", "base.yaml"), repo.join("types/ruby-service-v1.yaml")).unwrap();
    // Not a document: listed at the ref, never read.
    std::fs::write(repo.join("types/NOTES.md"), "notes\n").unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "base"]);
    git(repo, &["branch", "-q", "main-before"]);
    // The pull request replaces v1 with v2: the v1 file is gone.
    std::fs::remove_file(repo.join("types/ruby-service-v1.yaml")).unwrap();
    std::fs::copy(rules_fixture("CVN-410", "input.yaml"), repo.join("types/ruby-service-v2.yaml")).unwrap();
    let fixture = |f: &str| rules_fixture("CVN-410", f).display().to_string();
    let args = ["check", "types", "--base", "main-before", "--config", &fixture("covenant.yaml")];
    let text = stdout(covenant().current_dir(repo).args(args).args(["--context", &fixture("context")]), 0);
    assert!(text.contains("main-before:types/ruby-service-v1.yaml"), "{text}");
    assert!(text.contains("warning[CVN-410]") && text.contains("bakery/bakery-web"), "{text}");
    // In JSON the deletion names the document it was, at the top of its file at the ref.
    let json = stdout(
        covenant().current_dir(repo).args(args).args(["--context", &fixture("context"), "--output", "json"]),
        0,
    );
    let report: Value = serde_json::from_str(&json).unwrap();
    let deleted = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "CVN-410")
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(deleted["file"], "main-before:types/ruby-service-v1.yaml", "{deleted}");
    assert_eq!(
        (&deleted["kind"], &deleted["name"], &deleted["line"]),
        (&json!("ClusterComponentType"), &json!("ruby-service-v1"), &json!(1)),
        "{deleted}"
    );
    // Checking a path the ref does not hold at all: nothing there was deleted.
    std::fs::create_dir_all(repo.join("fresh")).unwrap();
    std::fs::copy(rules_fixture("CVN-410", "input.yaml"), repo.join("fresh/ruby-service-v2.yaml")).unwrap();
    let args = ["check", "fresh", "--base", "main-before", "--config", &fixture("covenant.yaml")];
    let text = stdout(covenant().current_dir(repo).args(args).args(["--context", &fixture("context")]), 0);
    assert!(!text.contains("CVN-410"), "{text}");
}

#[tokio::test]
async fn a_crd_update_review_is_judged_over_tls() {
    let server = common::TestServer::start().await;
    // A real 390 KB review: Gateway API HTTPRoute v1.2.0 → v1.3.0 as a CRD UPDATE.
    let review: Value = serde_json::from_slice(
        &std::fs::read(common::fixtures().join("bench/crd-update-400k.json")).unwrap(),
    )
    .unwrap();
    let (old, new) = (review["request"]["oldObject"].clone(), review["request"]["object"].clone());
    let e = covenant::families::schema_bearing::evolve(&old, &new);
    assert_eq!(e.implied(), covenant::versioning::Bump::Major, "the fixture tightens");
    // Another project's CRD, not opted in: admitted, every breaking change a warning.
    let resp =
        common::post(&server.h2(), &server.url("/api/v0/validate?timeout=10s"), review.to_string()).await;
    assert_eq!(resp.status(), 200);
    let got: Value = resp.json().await.unwrap();
    let r = &got["response"];
    assert_eq!(r["allowed"], true, "{r}");
    let warnings = r["warnings"].as_array().unwrap();
    // Every breaking change is an advisory warning; offline, the live proof is said to be
    // unchecked.
    let said = |w: &Value| {
        let w = w.as_str().unwrap();
        w.contains("advisory") || w.starts_with("covenant: CVN-215 not checked: no cluster state")
    };
    assert!(warnings.iter().all(said), "{warnings:?}");
    // Labelled `covenant.dev/evolution: enforce`, the same update is refused.
    let mut enforced = review.clone();
    enforced["request"]["object"]["metadata"]["labels"]["covenant.dev/evolution"] = "enforce".into();
    let got: Value =
        common::post(&server.h2(), &server.url("/api/v0/validate?timeout=10s"), enforced.to_string())
            .await
            .json()
            .await
            .unwrap();
    let r = &got["response"];
    // The offline server has no live objects, so every breaking change stands.
    let causes = r["status"]["details"]["causes"].as_array().cloned().unwrap_or_default();
    let reasons: std::collections::BTreeSet<&str> =
        causes.iter().filter_map(|c| c["reason"].as_str()).collect();
    assert_eq!(r["allowed"], false, "{reasons:?}");
    assert!(!reasons.is_empty());
    assert!(reasons.iter().all(|r| r.starts_with("CVN-2")), "{reasons:?}");
    // A CRD UPDATE that only adds is allowed.
    let old: Value = serde_yaml_like(&peer("crdify/e2e/enumvalueadded/old.yaml"));
    let new: Value = serde_yaml_like(&peer("crdify/e2e/enumvalueadded/new.yaml"));
    let mut review = common::review("u-crd", "apiextensions.k8s.io", "CustomResourceDefinition", new);
    review["request"]["operation"] = "UPDATE".into();
    review["request"]["oldObject"] = old;
    review["request"]["namespace"] = Value::Null;
    let got: Value = common::post(&server.h1(), &server.url("/api/v0/validate"), review.to_string())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(got["response"]["allowed"], true, "{got}");
}

fn serde_yaml_like(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    covenant::source::parse_stream(&text).0.remove(0).value
}

/// Each distinct schema is loaded and diffed once per update and shared between the versions
/// written with it; what each version reports must be exactly what diffing it on its own
/// reports. The Gateway API HTTPRoute update (v1.2 → v1.3) serves v1 and v1beta1 with one
/// schema; a copy where only v1beta1 changes, and one where only v1 does, cover the versions
/// parting ways.
#[test]
fn versions_sharing_a_schema_report_what_each_would_on_its_own() {
    use covenant::families::schema_bearing::evolve;
    use covenant::pointer::Location;
    use covenant::rules::evolution::judge_resource;
    use covenant::schema::diff::diff;
    use covenant::schema::openapi::{load_keeping_unknown, Dialect};

    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench/crd-update-400k.json"),
    )
    .unwrap();
    let review: Value = serde_json::from_str(&text).unwrap();
    let (old, new) = (&review["request"]["oldObject"], &review["request"]["object"]);
    let schema = |doc: &Value, i: usize| {
        let raw = &doc["spec"]["versions"][i]["schema"]["openAPIV3Schema"];
        load_keeping_unknown(raw, &Location::default(), Dialect::OpenApi).unwrap()
    };
    let on_its_own =
        |old: &Value, new: &Value, i: usize| judge_resource(diff(&schema(old, i), &schema(new, i), ""));

    // Only v1beta1 moves to the new schema; v1 stays as it was.
    let mut only_beta = old.clone();
    only_beta["spec"]["versions"][1] = new["spec"]["versions"][1].clone();
    // Only v1 moves.
    let mut only_v1 = old.clone();
    only_v1["spec"]["versions"][0] = new["spec"]["versions"][0].clone();

    for (what, after) in [("both", new), ("v1beta1 only", &only_beta), ("v1 only", &only_v1)] {
        let e = evolve(old, after);
        assert!(e.unreadable.is_empty(), "{what}: {:?}", e.unreadable);
        assert_eq!(e.versions.len(), 2, "{what}");
        for v in &e.versions {
            let expected = on_its_own(old, after, v.index);
            assert_eq!(v.changes, expected, "{what}: version {}", v.version);
        }
        let changed: Vec<bool> = e.versions.iter().map(|v| !v.changes.is_empty()).collect();
        let want = match what {
            "both" => [true, true],
            "v1beta1 only" => [false, true],
            _ => [true, false],
        };
        assert_eq!(changed, want, "{what}");
        // The two served versions part ways without conversion: said once, as CVN-216.
        let parted = e.structural.iter().filter(|s| s.rule == "CVN-216").count();
        assert_eq!(parted, usize::from(what != "both"), "{what}: {:?}", e.structural);
    }
}

/// `diff` reports what changed in `spec.versions` besides the schemas: a version added
/// (MINOR, refused by no policy), the storage version moved, a version made unserved and one
/// removed while `status.storedVersions` lists it (refused), and one removed that it does not
/// list, with the note that this is safe only if nothing is stored at it. An additive version
/// passes.
#[test]
fn diff_reports_every_version_level_change() {
    let dir = tempfile::tempdir().unwrap();
    let crd = |versions: Value, stored: &[&str]| {
        serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
                     "versions": versions},
            "status": {"storedVersions": stored}})
    };
    let schema = serde_json::json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}});
    let v = |name: &str, served: bool, storage: bool| serde_json::json!({"name": name, "served": served, "storage": storage, "schema": schema});
    let old = crd(serde_json::json!([v("v1alpha1", true, false), v("v1", true, true)]), &["v1alpha1", "v1"]);
    let new = crd(serde_json::json!([v("v1", false, false), v("v2", true, true)]), &[]);
    let added =
        crd(serde_json::json!([v("v1alpha1", true, false), v("v1", true, true), v("v2", true, false)]), &[]);
    let write = |name: &str, doc: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let (old, new, added) = (write("old.json", &old), write("new.json", &new), write("added.json", &added));
    let text = stdout(diff().arg(&old).arg(&new), 1);
    for expected in [
        "version v2 was added (served)",
        "the storage version moved from v1 to v2",
        "version v1 is no longer served (refused)",
        "version v1alpha1 was removed from spec.versions while status.storedVersions still lists it",
        "verdict: refused",
    ] {
        assert!(text.contains(expected), "{expected} missing from:\n{text}");
    }
    let unlisted = crd(serde_json::json!([v("v1alpha1", false, false), v("v1", true, true)]), &["v1"]);
    let unlisted = write("unlisted.json", &unlisted);
    let only_v1 = write("only-v1.json", &crd(serde_json::json!([v("v1", true, true)]), &[]));
    let text = stdout(diff().arg(&unlisted).arg(&only_v1), 0);
    assert!(
        text.contains("version v1alpha1 was removed from spec.versions; that is safe only if no object is stored at it (status.storedVersions (v1) does not list it)"),
        "{text}"
    );
    let text = stdout(diff().arg(&old).arg(&added), 0);
    assert!(text.contains("version v2 was added (served)"), "{text}");
    assert!(text.contains("implied: MINOR   declared: none   verdict: ok"), "{text}");
    let json: Value =
        serde_json::from_str(&stdout(diff().args(["--output", "json"]).arg(&old).arg(&added), 0)).unwrap();
    assert_eq!(json["findings"][0]["bump"], "MINOR");
    assert_eq!(json["findings"][0]["refused"], false);
}

fn crd_history(path: &str) -> PathBuf {
    common::fixtures().join("crd-history").join(path)
}

/// The changes of `covenant diff --output json OLD NEW` whose pointer starts with `under`,
/// as (pointer, change, bump, rule), and the implied bump.
fn contract_rows(old: &Path, new: &Path, under: &str) -> (Vec<(String, String, String, String)>, String) {
    let out = diff().args(["--output", "json"]).arg(old).arg(new).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let rows = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["pointer"].as_str().unwrap_or_default().starts_with(under))
        .map(|c| (s(&c["pointer"]), s(&c["change"]), s(&c["bump"]), s(&c["rule"])))
        .collect();
    (rows, s(&json["implied"]))
}

/// OpenChoreo's compact schema syntax reads into the same model as `openAPIV3Schema`: the
/// corpus pair that spells one ClusterComponentType both ways shows exactly the two
/// tightenings the JSON Schema spelling adds (replicas gains `minimum: 0`, imagePullPolicy an
/// enum), each located in the new document; the same type spelled without them diffs as no
/// schema change at all; a shorthand edit that removes `replicas` is MAJOR.
#[test]
fn the_compact_schema_syntax_diffs_like_its_json_schema_spelling() {
    let shorthand = crd_history("openchoreo/componenttype-parameters/7b3f5c772c09__ocSchema-service.yaml");
    let json_schema =
        crd_history("openchoreo/componenttype-parameters/7b3f5c772c09__getting-started-service.yaml");
    let (rows, implied) = contract_rows(&shorthand, &json_schema, "/environmentConfigs");
    assert_eq!(implied, "MAJOR");
    let base = "/environmentConfigs";
    assert_eq!(
        rows,
        [
            (format!("{base}/imagePullPolicy"), "enum-introduced".into(), "MAJOR".into(), "CVN-204".into()),
            (format!("{base}/replicas"), "bound-tightened".into(), "MAJOR".into(), "CVN-205".into()),
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&json_schema).unwrap();
    let equivalent = text.replace("          minimum: 0\n", "").replace(
        "          enum:\n            - Always\n            - IfNotPresent\n            - Never\n",
        "",
    );
    assert_ne!(equivalent, text, "the fixture still carries the two tightenings");
    let equivalent_path = dir.path().join("equivalent.yaml");
    std::fs::write(&equivalent_path, &equivalent).unwrap();
    let (rows, _) = contract_rows(&shorthand, &equivalent_path, "/environmentConfigs");
    assert_eq!(rows, [], "one type in two spellings has no schema change");
    let (rows, _) = contract_rows(&equivalent_path, &shorthand, "/environmentConfigs");
    assert_eq!(rows, [], "and none the other way");

    let removed =
        std::fs::read_to_string(&shorthand).unwrap().replace("      replicas: \"integer | default=1\"\n", "");
    let removed_path = dir.path().join("removed.yaml");
    std::fs::write(&removed_path, removed).unwrap();
    let (rows, implied) = contract_rows(&shorthand, &removed_path, "/environmentConfigs");
    assert_eq!(implied, "MAJOR");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].1.as_str(), rows[0].2.as_str()), ("property-removed", "MAJOR"), "{rows:?}");
    assert_eq!(rows[0].0, "/environmentConfigs/replicas", "{rows:?}");

    // A field added without a default is required: MAJOR. With a default: MINOR.
    for (leaf, bump) in [("\"string\"", "MAJOR"), ("\"string | default=x\"", "MINOR")] {
        let added = std::fs::read_to_string(&shorthand).unwrap().replace(
            "      replicas: \"integer | default=1\"\n",
            &format!("      replicas: \"integer | default=1\"\n      zone: {leaf}\n"),
        );
        let added_path = dir.path().join("added.yaml");
        std::fs::write(&added_path, added).unwrap();
        let (rows, implied) = contract_rows(&shorthand, &added_path, "/environmentConfigs");
        assert_eq!(implied, bump, "{leaf}: {rows:?}");
        assert!(rows.iter().any(|r| r.0 == "/environmentConfigs/zone"), "{leaf}: {rows:?}");
    }
}

/// A schema section in a shape covenant does not read is never "no schema changes": a change
/// to it is CVN-220 (MAJOR), and `check` names what it could not read.
#[test]
fn a_schema_shape_covenant_cannot_read_is_an_unclassified_change() {
    let shorthand = crd_history("openchoreo/componenttype-parameters/7b3f5c772c09__ocSchema-service.yaml");
    let text = std::fs::read_to_string(&shorthand).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let unknown = dir.path().join("unknown.yaml");
    std::fs::write(&unknown, text.replace("    ocSchema:\n", "    cueSchema:\n")).unwrap();
    let misspelled = dir.path().join("misspelled.yaml");
    std::fs::write(&misspelled, text.replace("\"integer | default=1\"", "\"integr | default=1\"")).unwrap();
    for broken in [&unknown, &misspelled] {
        let (rows, implied) = contract_rows(&shorthand, broken, "/environmentConfigs");
        assert_eq!(implied, "MAJOR", "{}", broken.display());
        assert_eq!(
            rows,
            [("/environmentConfigs".to_string(), "unclassified".into(), "MAJOR".into(), "CVN-220".into())],
            "{}",
            broken.display()
        );
    }
    let out = covenant().arg("check").arg(&unknown).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("CVN-109") && report.contains("undeclared member \"cueSchema\""), "{report}");
    let out = covenant().arg("check").arg(&misspelled).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("spec.environmentConfigs.ocSchema.replicas: unknown type \"integr\""),
        "{report}"
    );
}

/// An Airframe-style XRD, enforced, with these versions.
fn hangar_xrd(versions: Value) -> Value {
    serde_json::json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositeResourceDefinition",
        "metadata": {"name": "xdatabases.catalog.hangar.io", "labels": {"covenant.dev/evolution": "enforce"}},
        "spec": {"group": "catalog.hangar.io", "names": {"kind": "XDatabase", "plural": "xdatabases"},
                 "defaultCompositionRef": {"name": "xdatabases-aws"}, "versions": versions}})
}

fn hangar_version(
    name: &str,
    served: bool,
    referenceable: bool,
    deprecated: Option<&str>,
    fields: &[&str],
) -> Value {
    let properties: serde_json::Map<String, Value> =
        fields.iter().map(|f| (f.to_string(), serde_json::json!({"type": "string"}))).collect();
    let mut v = serde_json::json!({"name": name, "served": served, "referenceable": referenceable,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}}}});
    if let Some(warning) = deprecated {
        v["deprecated"] = true.into();
        v["deprecationWarning"] = warning.into();
    }
    v
}

/// The five steps of shipping a new XRD version (Airframe API versioning, "Shipping a new
/// version"), each admitted in order by the webhook on UPDATE and by `check --base` and
/// `diff`: add the new version (same shape, served, not referenceable); flip referenceable
/// and deprecate the old one naming its replacement; stop serving the deprecated one a
/// release later; remove it. Skipping the deprecation release is refused (CVN-217, said
/// once), as is a deprecation warning that names no replacement; a CREATE whose served
/// versions differ in shape is CVN-216.
#[tokio::test]
async fn an_xrd_promotion_is_admitted_step_by_step_and_only_skipping_deprecation_is_refused() {
    let warning = "catalog.hangar.io/v1alpha1 XDatabase is deprecated; use v1beta1";
    let fields = ["size", "region"];
    let v = |name, served, referenceable, deprecated| {
        hangar_version(name, served, referenceable, deprecated, &fields)
    };
    let steps = [
        hangar_xrd(serde_json::json!([v("v1alpha1", true, true, None)])),
        hangar_xrd(serde_json::json!([v("v1alpha1", true, true, None), v("v1beta1", true, false, None)])),
        hangar_xrd(serde_json::json!([
            v("v1alpha1", true, false, Some(warning)),
            v("v1beta1", true, true, None)
        ])),
        hangar_xrd(serde_json::json!([
            v("v1alpha1", false, false, Some(warning)),
            v("v1beta1", true, true, None)
        ])),
        hangar_xrd(serde_json::json!([v("v1beta1", true, true, None)])),
    ];
    let server = common::TestServer::start().await;
    let review = |old: &Value, new: &Value| {
        let mut r = common::review(
            "promo",
            "apiextensions.crossplane.io",
            "CompositeResourceDefinition",
            new.clone(),
        );
        r["request"]["operation"] = "UPDATE".into();
        r["request"]["oldObject"] = old.clone();
        r["request"]["namespace"] = Value::Null;
        r
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    for (i, pair) in steps.windows(2).enumerate() {
        let got: Value = common::post(
            &server.h2(),
            &server.url("/api/v0/validate"),
            review(&pair[0], &pair[1]).to_string(),
        )
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(got["response"]["allowed"], true, "step {} → {}: {got}", i, i + 1);
        let (old, new) = (write("old.json", &pair[0]), write("new.json", &pair[1]));
        let text = stdout(covenant().arg("check").arg(&new).arg("--base").arg(&old), 0);
        assert!(text.contains("0 denied"), "step {i}: {text}");
        let text = stdout(diff().arg(&old).arg(&new), 0);
        assert!(text.contains("verdict: ok"), "step {i}: {text}");
    }
    let (deprecated, unserved) = (write("deprecated.json", &steps[2]), write("unserved.json", &steps[3]));
    let text = stdout(diff().arg(&deprecated).arg(&unserved), 0);
    assert!(
        text.contains("version v1alpha1 is no longer served; it was deprecated in the previous release"),
        "{text}"
    );

    // Skipping the deprecation release, from either of the first two steps: refused once.
    let skipped =
        hangar_xrd(serde_json::json!([v("v1alpha1", false, false, None), v("v1beta1", true, true, None)]));
    for base in [&steps[1], &steps[2]] {
        let mut base = base.clone();
        base["spec"]["versions"][0].as_object_mut().unwrap().remove("deprecated");
        let got: Value =
            common::post(&server.h1(), &server.url("/api/v0/validate"), review(&base, &skipped).to_string())
                .await
                .json()
                .await
                .unwrap();
        assert_eq!(got["response"]["allowed"], false, "{got}");
        let message = got["response"]["status"]["message"].as_str().unwrap();
        assert_eq!(message.matches("CVN-").count(), 1, "{message}");
        assert!(
            message.contains("CVN-217") && message.contains("without a release in which it was deprecated"),
            "{message}"
        );
    }
    // A deprecation that names no replacement.
    let unnamed = hangar_xrd(serde_json::json!([
        v("v1alpha1", true, false, Some("going away")),
        v("v1beta1", true, true, None)
    ]));
    let got: Value =
        common::post(&server.h1(), &server.url("/api/v0/validate"), review(&steps[1], &unnamed).to_string())
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(got["response"]["allowed"], false, "{got}");
    assert!(
        got["response"]["status"]["message"].as_str().unwrap().contains("names none of the other versions"),
        "{got}"
    );

    // CREATE: served versions of different shapes are refused, with or without a base.
    let reshaped = hangar_xrd(serde_json::json!([
        hangar_version("v1alpha1", true, false, None, &["size"]),
        hangar_version("v1beta1", true, true, None, &["size", "tier"])
    ]));
    let mut create = review(&Value::Null, &reshaped);
    create["request"]["operation"] = "CREATE".into();
    create["request"]["oldObject"] = Value::Null;
    let got: Value = common::post(&server.h2(), &server.url("/api/v0/validate"), create.to_string())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(got["response"]["allowed"], false, "{got}");
    assert!(got["response"]["status"]["message"].as_str().unwrap().contains("CVN-216"), "{got}");
    let text = stdout(covenant().arg("check").arg(write("reshaped.json", &reshaped)), 1);
    assert!(text.contains("error[CVN-216]") && text.contains("\"spec.tier\""), "{text}");
    // The same shape in both is a clean CREATE.
    let text = stdout(covenant().arg("check").arg(write("same.json", &steps[1])), 0);
    assert!(text.contains("0 denied, 0 warned"), "{text}");
}

/// CVN-218, built: an XRD declares the names it derives (`covenant.dev/derived-names`); the
/// fields they use must be limited so each fits 63 characters, with the limit's reason
/// stated; a composite whose values derive a longer name is refused when its definition is
/// known (`check --context`), and said to be unchecked when it is not.
#[test]
fn derived_names_fit_63_characters_on_the_definition_and_the_composite() {
    let xrd = |app: Value| {
        serde_json::json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositeResourceDefinition",
            "metadata": {"name": "xapplicationenvironments.catalog.hangar.io",
                         "labels": {"covenant.dev/evolution": "enforce"},
                         "annotations": {"covenant.dev/derived-names": "app-{spec.app}-{spec.env}\n{metadata.name}-tektoncicd\n"}},
            "spec": {"group": "catalog.hangar.io", "names": {"kind": "XApplicationEnvironment", "plural": "xapplicationenvironments"},
                     "claimNames": {"kind": "ApplicationEnvironment", "plural": "applicationenvironments"},
                     "defaultCompositionRef": {"name": "xapplicationenvironments"},
                     "versions": [{"name": "v1alpha1", "served": true, "referenceable": true,
                        "schema": {"openAPIV3Schema": {"type": "object",
                            "x-kubernetes-validations": [{"rule": "size(self.metadata.name) <= 52", "message": "<name>-tektoncicd is a Helm release name"}],
                            "properties": {"spec": {"type": "object", "properties": {
                                "app": app,
                                "env": {"type": "string", "enum": ["dev", "staging", "prod"]}}}}}}}]}})
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let limited = serde_json::json!({"type": "string", "maxLength": 40, "description": "app-<app>-<env> is a namespace: at most 63"});
    let good = write("good.json", &xrd(limited.clone()));
    stdout(covenant().arg("check").arg(&good), 0);
    for (app, says) in [
        (serde_json::json!({"type": "string"}), "has no bound: spec.app"),
        (
            serde_json::json!({"type": "string", "maxLength": 60, "description": "namespace"}),
            "can reach 72 characters",
        ),
        (serde_json::json!({"type": "string", "maxLength": 40}), "the limit on spec.app states no reason"),
    ] {
        let bad = write("bad.json", &xrd(app));
        let text = stdout(covenant().arg("check").arg(&bad), 1);
        assert!(text.contains("error[CVN-218]") && text.contains(says), "{says}: {text}");
        // The same on UPDATE, from the good definition.
        let text = stdout(covenant().arg("check").arg(&bad).arg("--base").arg(&good), 1);
        assert!(text.contains("error[CVN-218]") && text.contains(says), "{says}: {text}");
    }

    // The composite side.
    let context = dir.path().join("context");
    std::fs::create_dir(&context).unwrap();
    std::fs::write(context.join("xrd.json"), xrd(limited).to_string()).unwrap();
    let config = dir.path().join("covenant.yaml");
    std::fs::write(&config, "apiVersion: covenant.dev/v1alpha1\nkind: Config\nevolution:\n  compositeGroups: [catalog.hangar.io]\n").unwrap();
    let claim = |app: &str| {
        serde_json::json!({"apiVersion": "catalog.hangar.io/v1alpha1", "kind": "ApplicationEnvironment",
            "metadata": {"name": "shop", "namespace": "tenants"}, "spec": {"app": app, "env": "staging"}})
    };
    let short = write("short.json", &claim("web"));
    stdout(
        covenant().arg("check").arg(&short).arg("--config").arg(&config).arg("--context").arg(&context),
        0,
    );
    let long = write("long.json", &claim(&"a".repeat(60)));
    let text = stdout(
        covenant().arg("check").arg(&long).arg("--config").arg(&config).arg("--context").arg(&context),
        1,
    );
    assert!(text.contains("error[CVN-218] /spec/app: ApplicationEnvironment shop: derives"), "{text}");
    assert!(text.contains("(72 characters, over the 63"), "{text}");
    let text = stdout(covenant().arg("check").arg(&long).arg("--config").arg(&config), 0);
    assert!(text.contains("CVN-218 not checked: no cluster state"), "{text}");

    // At admission: the webhook, its cluster view holding the definition, refuses the claim.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let config = covenant::config::Config::from_text(
            "test.yaml",
            "apiVersion: covenant.dev/v1alpha1\nkind: Config\nevolution:\n  compositeGroups: [catalog.hangar.io]\n",
            None,
        )
        .unwrap();
        let cluster: std::sync::Arc<dyn covenant::cluster::ClusterView> = std::sync::Arc::new(
            covenant::cluster::OfflineCluster::from_objects([serde_json::from_str(&std::fs::read_to_string(context.join("xrd.json")).unwrap()).unwrap()]),
        );
        let server = common::TestServer::with(common::Setup { config, cluster: Some(cluster), ..common::Setup::default() }).await;
        for (app, allowed) in [("web".to_string(), true), ("a".repeat(60), false)] {
            let review = common::review("claim", "catalog.hangar.io", "ApplicationEnvironment", claim(&app));
            let got: Value = common::post(&server.h2(), &server.url("/api/v0/validate"), review.to_string())
                .await
                .json()
                .await
                .unwrap();
            assert_eq!(got["response"]["allowed"], allowed, "{got}");
            if !allowed {
                let message = got["response"]["status"]["message"].as_str().unwrap();
                assert!(message.contains("CVN-218") && message.contains("72 characters"), "{message}");
            }
        }
    });
}

/// A CRD serving more distinct schemas than are compared pairwise (here 20, each with its own
/// description, one shape) still has a version that leaves the shared shape refused as
/// CVN-216: it is compared with the first version's schema, so the work stays linear in the
/// versions and the finding names the pair (v1, v20).
#[test]
fn many_distinct_served_schemas_are_compared_with_the_first_one() {
    let crd = |extra: bool| {
        let versions: Vec<Value> = (1..=20)
            .map(|i| {
                let mut props = serde_json::json!({"size": {"type": "string", "description": format!("size, as of v{i}")}});
                if extra && i == 20 {
                    props["colour"] = serde_json::json!({"type": "string"});
                }
                serde_json::json!({"name": format!("v{i}"), "served": true, "storage": i == 1,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}}})
            })
            .collect();
        serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"}, "versions": versions}})
    };
    let e = covenant::families::schema_bearing::evolve(&crd(false), &crd(true));
    let parted: Vec<_> = e.structural.iter().filter(|s| s.rule == "CVN-216").collect();
    assert_eq!(parted.len(), 1, "{parted:?}");
    assert!(
        parted[0].args.contains(&("a", "v1".to_string()))
            && parted[0].args.contains(&("b", "v20".to_string()))
    );
    assert_eq!(parted[0].pointer, "/spec/versions/19");
    // Nothing parts: nothing is said.
    assert!(covenant::families::schema_bearing::evolve(&crd(false), &crd(false)).structural.is_empty());
}

/// A CRD update as the apiserver sends it (Gateway API HTTPRoute v1.2.0 → v1.3.0, two served
/// versions written with one schema): each version's schema is read from the review's text,
/// a schema the document repeats is parsed and loaded once, and the object is never parsed
/// whole. The verdict is the one the parsed objects get.
#[test]
fn a_reviewed_crd_update_reads_each_distinct_schema_once_from_the_text() {
    use covenant::families::schema_bearing::{evolve, evolve_outlines, Outline};
    let body = std::fs::read(common::fixtures().join("bench/crd-update-400k.json")).unwrap();
    let review = covenant::admission::decode(body).unwrap();
    let (new, old) = (review.subject.object.as_ref().unwrap(), review.subject.old_object.as_ref().unwrap());
    let (new_outline, old_outline) =
        (Outline::of_text(new.text().unwrap()).unwrap(), Outline::of_text(old.text().unwrap()).unwrap());
    let e = evolve_outlines(&old_outline, &new_outline);
    assert!(std::sync::Arc::ptr_eq(&e.schemas["v1"], &e.schemas["v1beta1"]), "one schema, loaded once");
    assert!(!e.versions.is_empty() && e.versions.iter().any(|v| !v.changes.is_empty()));
    assert!(!new.is_parsed() && !old.is_parsed());
    assert_eq!(e, evolve(old.value().unwrap(), new.value().unwrap()));

    // Through the engine: the family reads the outlines, and leaves the objects unparsed.
    let engine = covenant::engine::Engine::new(&covenant::config::Config::embedded().unwrap());
    let review = covenant::admission::decode(
        std::fs::read(common::fixtures().join("bench/crd-update-400k.json")).unwrap(),
    )
    .unwrap();
    let verdict = engine.evaluate(&review.subject, &covenant::cluster::EmptyCluster);
    assert_eq!(verdict.family, Some("crd"));
    assert!(!verdict.findings.is_empty(), "the update changes the schema; something is said about it");
    assert!(!review.subject.object.as_ref().unwrap().is_parsed(), "the object was parsed whole");
    let mut parsed = covenant::subject::Subject::from_document(new.value().unwrap().clone());
    parsed.gvk = review.subject.gvk.clone();
    parsed.operation = review.subject.operation.clone();
    parsed.old_object = Some(covenant::subject::Object::from_value(old.value().unwrap().clone()));
    let lines = |v: &covenant::engine::Verdict| v.findings.iter().map(|f| f.line()).collect::<Vec<_>>();
    assert_eq!(lines(&verdict), lines(&engine.evaluate(&parsed, &covenant::cluster::EmptyCluster)));
}

/// `covenant diff` on JSON files reads their text (each version schema straight into the
/// model) and says exactly what it says on the same documents in YAML; a file that repeats a
/// key, JSON or YAML, is refused, never read with the first or the last key winning.
#[test]
fn diff_of_json_files_says_what_diff_of_their_yaml_says_and_refuses_a_repeated_key() {
    let scratch = tempfile::tempdir().unwrap();
    for (old, new) in [
        ("cert-manager/certificates/v1.5.0.yaml", "cert-manager/certificates/v1.6.0.yaml"),
        ("kyverno/clusterpolicies/v1.12.0.yaml", "kyverno/clusterpolicies/v1.13.0.yaml"),
    ] {
        let (old, new) = (crd_history(old), crd_history(new));
        let json = |yaml: &Path, name: &str| {
            let path = scratch.path().join(name);
            std::fs::write(&path, serde_json::to_string_pretty(&serde_yaml_like(yaml)).unwrap()).unwrap();
            path
        };
        let (old_json, new_json) = (json(&old, "old.json"), json(&new, "new.json"));
        for output in ["json", "text"] {
            let run = |a: &Path, b: &Path| {
                let out = diff().args(["--output", output]).arg(a).arg(b).output().unwrap();
                (out.status.code(), String::from_utf8(out.stdout).unwrap())
            };
            let from_yaml = run(&old, &new);
            assert!(!from_yaml.1.is_empty());
            assert_eq!(run(&old_json, &new_json), from_yaml, "{} as JSON, --output {output}", new.display());
        }
    }
    let repeated = scratch.path().join("repeated.json");
    std::fs::write(
        &repeated,
        "{\"apiVersion\": \"apiextensions.k8s.io/v1\",\n \"kind\": \"A\",\n \"kind\": \"B\"}",
    )
    .unwrap();
    let out = diff().arg(&repeated).arg(&repeated).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("repeated.json") && err.contains("\"kind\" is repeated") && err.contains("line 3"),
        "{err}"
    );
    // The same in YAML (two documents run together without `---` are one mapping, each key
    // twice): refused where the key is repeated, never compared with the first winning.
    let yaml = scratch.path().join("repeated.yaml");
    let old = std::fs::read_to_string(crd_history("cert-manager/certificates/v1.5.0.yaml")).unwrap();
    let lines = old.lines().count();
    let new = std::fs::read_to_string(crd_history("cert-manager/certificates/v1.6.0.yaml")).unwrap();
    std::fs::write(&yaml, format!("{old}{new}")).unwrap();
    let out = covenant()
        .arg("diff")
        .arg(&yaml)
        .arg(crd_history("cert-manager/certificates/v1.6.0.yaml"))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("repeated.yaml:{}:1: the key \"apiVersion\" is repeated", lines + 1)),
        "{err}"
    );
}

/// A keyword no structural schema knows (`maxLenght`) validates nothing: the API server
/// refuses it or drops it. `check` says where it is, with or without a base, where it would
/// otherwise pass as a schema without the bound; `diff` says it as a warning.
#[test]
fn a_keyword_no_structural_schema_knows_is_said_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let crd = std::fs::read_to_string(rules_fixture("CVN-205", "input.yaml")).unwrap();
    assert!(crd.contains("maxLength: 40"));
    let typo = dir.path().join("widgets.yaml");
    std::fs::write(&typo, crd.replace("maxLength: 40", "maxLenght: 40")).unwrap();
    let at = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/name/maxLenght";
    let out = stdout(covenant().arg("check").arg(&typo), 0);
    assert!(out.contains(&format!("widgets.yaml:22:38: warning[CVN-109] {at}")), "{out}");
    assert!(
        out.contains("keyword \"maxLenght\" is not known") && out.contains("did you mean \"maxLength\"?"),
        "{out}"
    );
    let out = stdout(enforced().arg(&typo).arg("--base").arg(rules_fixture("CVN-205", "base.yaml")), 1);
    assert!(out.contains(&format!("error[CVN-109] {at}")), "{out}");
    // Spelled right, nothing is said.
    let out = stdout(enforced().arg(rules_fixture("CVN-205", "input.yaml")), 0);
    assert!(!out.contains("CVN-109"), "{out}");
    // `diff` says it too, as a warning that breaks no one, when nothing else changed.
    let out = stdout(diff().arg(&typo).arg(&typo), 0);
    assert!(out.contains(&format!("CVN-109: {at}: keyword \"maxLenght\" is not known")), "{out}");
    // Misspelling a bound drops it and adds a keyword nothing reads: unclassified, refused.
    let out = stdout(diff().arg(rules_fixture("CVN-205", "input.yaml")).arg(&typo), 1);
    assert!(out.contains("CVN-220") && out.contains(&format!("CVN-109: {at}")), "{out}");
}

/// A construct's JSON Schema is decoded strictly by OpenChoreo, so a keyword no schema knows
/// is refused there: `check` refuses it where it is (in a `$defs` definition, where the
/// definition is), and an UPDATE that carries it over unchanged is ratcheted; `diff` of two
/// constructs, and of two bare schemas, notes it as CVN-109 with the nearest keyword.
#[test]
fn a_keyword_no_schema_knows_in_a_construct_or_a_bare_schema_is_said_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let sample = common::fixtures().join("openchoreo/samples/getting-started/component-types/service.yaml");
    let text = std::fs::read_to_string(&sample).unwrap();
    let bound = "              default: \"100m\"\n";
    assert!(text.contains(bound));
    let typo = dir.path().join("service.yaml");
    std::fs::write(&typo, text.replacen(bound, &format!("{bound}              maxLenght: 10\n"), 1)).unwrap();
    let at = "/spec/environmentConfigs/openAPIV3Schema/$defs/ResourceQuantity/properties/cpu/maxLenght";
    let out = stdout(covenant().arg("check").arg(&typo), 1);
    assert!(out.contains(&format!("service.yaml:49:15: error[CVN-109] {at}: ClusterComponentType service: keyword \"maxLenght\" is not known")), "{out}");
    assert!(
        out.contains(
            "OpenChoreo, which decodes the schema strictly, refuses it; did you mean \"maxLength\"?"
        ),
        "{out}"
    );
    // Carried over by an update that does not touch it, it no longer blocks (ratcheted).
    let out = stdout(covenant().arg("check").arg(&typo).arg("--base").arg(&typo), 0);
    assert!(out.contains(&format!("warning[CVN-109] {at}")) && out.contains("pre-existing"), "{out}");
    // Spelled right, nothing is said.
    let out = stdout(covenant().arg("check").arg(&sample), 0);
    assert!(!out.contains("CVN-109"), "{out}");
    let out = stdout(diff().arg(&sample).arg(&typo), 0);
    assert!(
        out.contains(&format!("CVN-109: {at}: keyword \"maxLenght\" is not known to a structural schema")),
        "{out}"
    );

    let old = dir.path().join("old.yaml");
    let new = dir.path().join("new.yaml");
    std::fs::write(&old, "type: object\nproperties:\n  size: {type: integer}\n").unwrap();
    std::fs::write(&new, "type: object\nproperties:\n  size: {type: integer, minimun: 3}\n").unwrap();
    let out = stdout(diff().arg(&old).arg(&new), 1);
    assert!(out.contains("CVN-109: /properties/size/minimun: keyword \"minimun\" is not known to a structural schema, so it validates nothing; did you mean \"minimum\"?"), "{out}");
}

/// apiextensions.k8s.io/v1beta1 kept one schema for the whole CRD under `spec.validation`,
/// for every version without its own. covenant reads it so, and a change under it is diffed
/// like any other, also across the move to per-version schemas. A CRD that names its version
/// only in the deprecated `spec.version` gives that schema no version to belong to: it is
/// said (the diff stops naming it, a check reports CVN-109 at its line), never passed as "no
/// changes"; and so is a CRD that lists no version at all, or a version with no schema.
#[test]
fn the_whole_crds_schema_of_v1beta1_is_read_and_where_no_version_takes_it_said() {
    let scratch = tempfile::tempdir().unwrap();
    let crd = |size_type: &str, versions: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n\
             metadata: {{name: widgets.example.com}}\nspec:\n  group: example.com\n  \
             names: {{kind: Widget, plural: widgets}}\n  version: v1\n{versions}  validation:\n    \
             openAPIV3Schema:\n      type: object\n      properties:\n        \
             spec: {{type: object, properties: {{size: {{type: {size_type}}}}}}}\n"
        )
    };
    let listed = "  versions:\n  - {name: v1, served: true, storage: true}\n";
    let (old, new) = (scratch.path().join("old.yaml"), scratch.path().join("new.yaml"));
    // Listed versions take the whole CRD's schema: the narrowed type is found and refused.
    std::fs::write(&old, crd("integer", listed)).unwrap();
    std::fs::write(&new, crd("string", listed)).unwrap();
    let out = stdout(diff().arg(&old).arg(&new), 1);
    assert!(out.contains("spec.size"), "{out}");
    assert!(out.contains("MAJOR"), "{out}");
    // The move to per-version schemas is compared with the whole CRD's schema before it.
    let moved = |size_type: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
             metadata: {{name: widgets.example.com}}\nspec:\n  group: example.com\n  \
             names: {{kind: Widget, plural: widgets}}\n  scope: Namespaced\n  versions:\n  \
             - name: v1\n    served: true\n    storage: true\n    schema:\n      \
             openAPIV3Schema:\n        type: object\n        properties:\n          \
             spec: {{type: object, properties: {{size: {{type: {size_type}}}}}}}\n"
        )
    };
    std::fs::write(&new, moved("integer")).unwrap();
    let out = stdout(diff().arg(&old).arg(&new), 0);
    assert!(out.contains("no schema changes") || out.contains("no changes"), "{out}");
    std::fs::write(&new, moved("string")).unwrap();
    stdout(diff().arg(&old).arg(&new), 1);
    // Only `spec.version`: the schema belongs to no listed version, and is said.
    std::fs::write(&old, crd("integer", "")).unwrap();
    std::fs::write(&new, crd("string", "")).unwrap();
    let diffed = diff().arg(&old).arg(&new).assert().code(2);
    let stderr = String::from_utf8(diffed.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("cannot be read at /spec/validation"), "{stderr}");
    let (base, head) = (scratch.path().join("base"), scratch.path().join("head"));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&head).unwrap();
    std::fs::copy(&old, base.join("widgets.yaml")).unwrap();
    std::fs::copy(&new, head.join("widgets.yaml")).unwrap();
    let out = stdout(covenant().arg("check").arg(&head).arg("--base").arg(&base), 0);
    assert!(out.contains("widgets.yaml:8:3: warning[CVN-109] /spec/validation"), "{out}");
    assert!(out.contains("neither read nor compared"), "{out}");
    // No version at all (`spec.versions` misspelled, or empty): nothing would be read or
    // compared, so it is said, in a check without a base too, and a diff stops naming it.
    let misspelled = moved("integer").replace("  versions:", "  verzions:");
    std::fs::write(head.join("widgets.yaml"), &misspelled).unwrap();
    let out = stdout(covenant().arg("check").arg(&head), 0);
    assert!(out.contains("warning[CVN-109] /spec/versions"), "{out}");
    assert!(out.contains("no version is declared (there is no spec.versions)"), "{out}");
    let out = stdout(enforced().arg(&head), 1);
    assert!(out.contains("error[CVN-109] /spec/versions"), "{out}");
    std::fs::write(
        head.join("widgets.yaml"),
        moved("integer").replace("  versions:\n  - name: v1", "  versions: []\n  old:\n  - name: v1"),
    )
    .unwrap();
    let out = stdout(enforced().arg(&head), 1);
    assert!(out.contains("(spec.versions is empty)"), "{out}");
    std::fs::write(&old, moved("integer")).unwrap();
    std::fs::write(&new, &misspelled).unwrap();
    let diffed = diff().arg(&old).arg(&new).assert().code(2);
    let stderr = String::from_utf8(diffed.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("cannot be read at /spec/versions: no version is declared"), "{stderr}");
    // A version of an apiextensions.k8s.io/v1 CRD with no schema, or with its schema's
    // `openAPIV3Schema` misspelled, has nothing to compare: it is said, not passed as
    // "no changes".
    for (schemaless, found) in [
        (
            moved("integer")
                .replace("    schema:\n      openAPIV3Schema:", "    x-schema:\n      openAPIV3Schema:"),
            "there is no schema member",
        ),
        (
            moved("integer").replace("openAPIV3Schema:", "openAPIV3Schma:"),
            "its schema has no openAPIV3Schema, only openAPIV3Schma",
        ),
    ] {
        std::fs::write(&new, &schemaless).unwrap();
        let diff = diff().arg(&old).arg(&new).assert().code(2);
        let stderr = String::from_utf8(diff.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.contains("cannot be read at /spec/versions/0/schema: version v1 declares no schema"),
            "{stderr}"
        );
        assert!(stderr.contains(found), "{stderr}");
        std::fs::write(head.join("widgets.yaml"), &schemaless).unwrap();
        let out = stdout(enforced().arg(&head), 1);
        assert!(out.contains("error[CVN-109] /spec/versions/0/schema"), "{out}");
    }
    // A CRD with its versions listed draws no such finding.
    std::fs::write(head.join("widgets.yaml"), moved("integer")).unwrap();
    let out = stdout(enforced().arg(&head), 0);
    assert!(!out.contains("CVN-109"), "{out}");
}

/// The live proof of a tightened XRD reads its claims beside its composites: a claim that
/// still uses the value the tightening removes refuses it, where "all 1 live object(s)
/// satisfy" counted the composite alone. A composite carrying Crossplane's own members
/// (`compositionRef`, `resourceRefs`, `claimRef`) is not refused for them.
#[test]
fn the_live_proof_of_an_xrd_reads_its_claims_too() {
    let xrd = |sizes: &[&str]| {
        let mut x =
            hangar_xrd(serde_json::json!([{"name": "v1alpha1", "served": true, "referenceable": true,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"size": {"type": "string", "enum": sizes}}}}}}}]));
        x["spec"]["claimNames"] = serde_json::json!({"kind": "Database", "plural": "databases"});
        x
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let old = write("old.json", &xrd(&["small", "medium", "large"]));
    let new = write("new.json", &xrd(&["small", "medium"]));
    let context = dir.path().join("context");
    std::fs::create_dir(&context).unwrap();
    let composite = serde_json::json!({"apiVersion": "catalog.hangar.io/v1alpha1", "kind": "XDatabase",
        "metadata": {"name": "orders-x7k2p"},
        "spec": {"size": "small", "compositionRef": {"name": "xdatabases-aws"},
                 "resourceRefs": [{"apiVersion": "rds.aws.upbound.io/v1beta1", "kind": "Instance", "name": "orders-x7k2p"}],
                 "claimRef": {"apiVersion": "catalog.hangar.io/v1alpha1", "kind": "Database", "namespace": "shop", "name": "orders"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    std::fs::write(context.join("xr.json"), composite.to_string()).unwrap();
    let check = || {
        let mut c = covenant();
        c.arg("check").arg(&new).arg("--base").arg(&old).arg("--context").arg(&context);
        c
    };
    let text = stdout(&mut check(), 0);
    assert!(text.contains("all 1 live object(s) satisfy the tightened schema"), "{text}");

    let claim = serde_json::json!({"apiVersion": "catalog.hangar.io/v1alpha1", "kind": "Database",
        "metadata": {"name": "legacy", "namespace": "shop"},
        "spec": {"size": "large", "compositeDeletePolicy": "Background", "resourceRef": {"name": "legacy-abc12"}}});
    std::fs::write(context.join("claim.json"), claim.to_string()).unwrap();
    let text = stdout(&mut check(), 1);
    assert!(
        text.contains("1 of 2 live object(s) violate the tightened schema: shop/legacy at /spec/size"),
        "{text}"
    );
}

/// `diff OLD_DIR NEW_DIR` pairs documents by identity and diffs each pair, saying what only
/// one side holds; `--ignore-descriptions` leaves description, title and example rows out of
/// the table (Kyverno's ClusterPolicy diff is mostly descriptions) and says how many.
#[test]
fn diff_pairs_two_folders_by_identity_and_can_leave_descriptions_out() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    std::fs::copy(root.join("examples/tour/crds/widgets-v1.yaml"), old.join("widgets.yaml")).unwrap();
    std::fs::copy(root.join("examples/tour/crds/widgets-v2.yaml"), new.join("renamed-file.yaml")).unwrap();
    let other = |name: &str| {
        std::fs::read_to_string(root.join("examples/tour/crds/widgets-v1.yaml"))
            .unwrap()
            .replace("widgets.example.com", &format!("{name}s.example.com"))
            .replace("plural: widgets", &format!("plural: {name}s"))
    };
    std::fs::write(old.join("gadgets.yaml"), other("gadget")).unwrap();
    std::fs::write(new.join("things.yaml"), other("thing")).unwrap();
    let out = covenant().arg("diff").arg(&old).arg(&new).assert().code(1).get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("CustomResourceDefinition widgets.example.com\nVERSION"), "{text}");
    assert!(text.contains("verdict: refused"), "{text}");
    assert!(text.contains("CustomResourceDefinition things.example.com: added"), "{text}");
    assert!(text.contains("CustomResourceDefinition gadgets.example.com: removed"), "{text}");
    let out = covenant()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .args(["--output", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let json: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 3, "{json}");

    let kyverno = common::fixtures().join("crd-history/kyverno/clusterpolicies");
    let (a, b) = (kyverno.join("v1.12.0.yaml"), kyverno.join("v1.13.0.yaml"));
    let all = stdout(covenant().arg("diff").arg(&a).arg(&b), 0);
    let lean = stdout(covenant().arg("diff").arg(&a).arg(&b).arg("--ignore-descriptions"), 0);
    assert!(all.contains("description-changed") && !lean.contains("description-changed"));
    assert!(
        lean.lines().count() * 3 < all.lines().count(),
        "{} vs {} lines",
        lean.lines().count(),
        all.lines().count()
    );
    assert!(lean.contains("change(s) left out (--ignore-descriptions)"), "{lean}");
    // The verdict is the same either way.
    let verdict = |t: &str| t.lines().find(|l| l.starts_with("implied:")).unwrap().to_string();
    assert_eq!(verdict(&all), verdict(&lean));
}
