//! The command line, run as a user runs it: golden output for `check` (text and JSON), exit
//! codes, stdin, renamed commands, and the catalogue commands.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;

fn covenant() -> Command {
    Command::cargo_bin("covenant").unwrap()
}

fn versioned_dir() -> std::path::PathBuf {
    common::fixtures().join("versioned")
}

#[test]
fn check_text_output_matches_the_golden_file() {
    let out = covenant()
        .current_dir(versioned_dir())
        .args(["check", "--config", "covenant.yaml", "docs/bad.yaml"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let expected = std::fs::read_to_string(common::fixtures().join("cli/bad.txt")).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn check_json_output_matches_the_golden_file_and_the_contract() {
    let out = covenant()
        .current_dir(versioned_dir())
        .args(["check", "--config", "covenant.yaml", "docs/bad.yaml", "--output", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let got: Value = serde_json::from_slice(&out).unwrap();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(common::fixtures().join("cli/bad.json")).unwrap())
            .unwrap();
    assert_eq!(got, expected);
    // The contract's members, every one of them, on every finding.
    let members = [
        "rule", "slug", "severity", "action", "file", "document", "item", "line", "column", "kind", "name",
        "pointer", "message", "help", "bump",
    ];
    for f in got["findings"].as_array().unwrap() {
        for m in members {
            assert!(f.get(m).is_some(), "finding lacks {m}: {f}");
        }
    }
    assert_eq!(got["summary"]["documents"], 5);
    assert_eq!(got["summary"]["denied"], 6);
}

#[test]
fn exit_codes_clean_denied_and_input_error() {
    let dir = versioned_dir();
    covenant()
        .current_dir(&dir)
        .args(["check", "--config", "covenant.yaml", "docs/good.yaml"])
        .assert()
        .code(0);
    covenant().current_dir(&dir).args(["check", "--config", "covenant.yaml", "docs"]).assert().code(1);
    let missing = covenant().args(["check", "/nonexistent/covenant"]).assert().code(2);
    let stderr = String::from_utf8(missing.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("cannot read /nonexistent/covenant"), "{stderr}");
    assert_eq!(stderr.matches("os error 2").count(), 1, "a cause is said once: {stderr}");
    // An error that quotes its own source (a certificate file that is not there).
    let serve = covenant()
        .args(["serve", "--offline", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
        .args(["--api-listen", "127.0.0.1:0"])
        .args(["--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key"])
        .assert()
        .code(2);
    let stderr = String::from_utf8(serve.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("/nonexistent/tls.crt"), "{stderr}");
    assert_eq!(stderr.matches("os error 2").count(), 1, "a cause is said once: {stderr}");
    covenant().args(["check"]).assert().code(2);
    covenant().args(["check", "--output", "xml", "x.yaml"]).assert().code(2);
}

#[test]
fn warnings_alone_exit_zero() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("covenant.yaml");
    let registry = versioned_dir().join("registry.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: covenant.dev/v1alpha1\nkind: Config\nregistries: [{}]\nrules:\n  actions:\n    strictness: warn\n",
            registry.display()
        ),
    )
    .unwrap();
    let out = covenant()
        .arg("check")
        .arg("--config")
        .arg(&config)
        .arg(versioned_dir().join("docs/bad.yaml"))
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("warning[CVN-101]"), "{text}");
    assert!(text.ends_with("0 denied, 6 warned (in 5 documents), 0 audited\n"), "{text}");
}

#[test]
fn an_invalid_config_exits_two_listing_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("covenant.yaml");
    std::fs::write(
        &config,
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  ignore: [CVN-99]\nfamiles: []\n",
    )
    .unwrap();
    let out = covenant().arg("check").arg("--config").arg(&config).arg("-").write_stdin("").assert().code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("2 problem(s)"), "{stderr}");
    assert!(stderr.contains("4:12: /rules/ignore/0: unknown rule id or category \"CVN-99\""), "{stderr}");
    assert!(stderr.contains("5:1: /familes: member \"familes\" is not declared"), "{stderr}");
}

#[test]
fn inputs_that_hold_no_document_are_said_and_a_check_of_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.yaml");
    std::fs::write(&empty, "").unwrap();
    let comments = dir.path().join("comments.yaml");
    std::fs::write(&comments, "# rendered nothing\n---\n").unwrap();
    // Nothing at all to check: exit 2, each input named.
    let nothing = covenant().arg("check").arg(&empty).arg(&comments).assert().code(2);
    let stderr = String::from_utf8(nothing.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("nothing to check"), "{stderr}");
    for file in [&empty, &comments] {
        assert!(stderr.contains(&format!("{}: holds no document", file.display())), "{stderr}");
    }
    covenant().args(["check", "-"]).write_stdin("").assert().code(2);
    // The build inputs beside them are still read and what they hold printed: a values file
    // with no package to judge it says so, and the run still fails.
    let values = dir.path().join("values.yaml");
    std::fs::write(&values, "replicas: 2\n").unwrap();
    let out = covenant().arg("check").arg(&empty).arg("--values").arg(&values).assert().code(2);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("values not checked: no --package declares"), "{text}");
    assert!(text.contains(&format!("note: {}: holds no document", empty.display())), "{text}");
    let baseline = dir.path().join("baseline.json");
    let out = covenant().arg("check").arg(&empty).arg("--write-baseline").arg(&baseline).assert().code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("nothing to check, so no baseline written"), "{stderr}");
    assert!(!baseline.exists());
    // Beside a document: checked, and the empty one said in a note (text and JSON).
    let good = versioned_dir().join("docs/good.yaml");
    let config = versioned_dir().join("covenant.yaml");
    let out = covenant().arg("check").arg("--config").arg(&config).arg(&empty).arg(&good).assert().code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains(&format!("note: {}: holds no document", empty.display())), "{text}");
    let out = covenant()
        .args(["check", "--output", "json", "--config"])
        .arg(&config)
        .arg(&empty)
        .arg(&good)
        .assert()
        .code(0);
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().starts_with(&format!("{}: holds", empty.display()))),
        "{notes:?}"
    );
}

/// A document of a kind no rule judges (a custom resource whose CRD is not given) passes, and the summary
/// says it was not judged rather than counting it with the judged: text names the kinds,
/// JSON lists each document.
#[test]
fn documents_no_rule_concerns_are_said_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests.yaml");
    std::fs::write(
        &manifests,
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: web}\nspec: {endpointz: []}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: b}\n",
    )
    .unwrap();
    let good = versioned_dir().join("docs/good.yaml");
    let config = versioned_dir().join("covenant.yaml");
    let out =
        covenant().arg("check").arg("--config").arg(&config).arg(&manifests).arg(&good).assert().code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.ends_with(
            "; 3 of kinds no rule judges (example.com/v1 Widget, monitoring.coreos.com/v1 ServiceMonitor)\n"
        ),
        "{text}"
    );
    let out = covenant()
        .args(["check", "--output", "json", "--config"])
        .arg(&config)
        .arg(&manifests)
        .arg(&good)
        .assert()
        .code(0);
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(report["summary"]["unjudged"], 3);
    assert_eq!(
        report["unjudged"][0],
        serde_json::json!({"file": manifests.display().to_string(), "document": 0, "item": null, "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor"})
    );
    // Every document judged: nothing more is said.
    let out = covenant().arg("check").arg("--config").arg(&config).arg(&good).assert().code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!text.contains("no rule judges"), "{text}");
}

#[test]
fn check_reads_stdin() {
    let out = covenant()
        .args(["check", "-"])
        .write_stdin("schema: space.app\nversion: \"3\"\n")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("-:2:1: error[CVN-106] /version: space.app version \"3\""), "{text}");
}

#[test]
fn a_renamed_command_is_refused_naming_the_new_one() {
    let out = covenant().args(["validate", "x.yaml"]).assert().code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("`covenant validate` was renamed; use `covenant check`"), "{stderr}");
}

#[test]
fn explain_rules_config_and_version() {
    let out = covenant().args(["explain", "CVN-101"]).assert().success().get_output().stdout.clone();
    let page = String::from_utf8(out).unwrap();
    assert!(page.starts_with("# CVN-101 unknown-field"), "{page}");
    assert!(page.contains("## Why it matters"));

    let out = covenant().args(["explain", "CVN-218"]).assert().success().get_output().stdout.clone();
    let page = String::from_utf8(out).unwrap();
    assert!(page.contains("status: live") && page.contains("covenant.dev/derived-names"), "{page}");

    let out = covenant().args(["explain", "CVN-1001"]).assert().code(2).get_output().stderr.clone();
    let stderr = String::from_utf8(out).unwrap();
    assert!(stderr.contains("unknown rule \"CVN-1001\"; did you mean CVN-101?"), "{stderr}");

    let out = covenant().args(["rules"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("CVN-101  unknown-field"), "{text}");
    assert!(text.contains("50 live"), "{text}");

    let out = covenant().args(["rules", "--output", "json"]).assert().success().get_output().stdout.clone();
    let rows: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), covenant::rules::CATALOG.len());

    let out = covenant().args(["config", "print-default"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(covenant::config::Config::from_text("printed", &text, None).is_ok());
    assert!(text.contains("# "), "the default config is commented");

    let out = covenant().args(["version"]).assert().success().get_output().stdout.clone();
    assert_eq!(String::from_utf8(out).unwrap(), format!("covenant {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn certs_writes_a_pair_and_prints_the_ca_bundle() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let out = covenant()
        .args(["certs", "--dns", "covenant.covenant-system.svc", "--out"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let bundle = String::from_utf8(out).unwrap();
    let ca = base64::engine::general_purpose::STANDARD.decode(bundle.trim()).unwrap();
    assert_eq!(ca, std::fs::read(dir.path().join("ca.crt")).unwrap());
    assert!(std::fs::read_to_string(dir.path().join("tls.key")).unwrap().contains("PRIVATE KEY"));
}

/// `covenant diff … | head -1`: the reader goes away after one line; covenant ends quietly
/// (SIGPIPE, as other tools do), never with a panic about a broken pipe.
#[test]
fn writing_into_a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let dir = common::fixtures().join("crd-history/kyverno/clusterpolicies");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .arg("diff")
        .arg(dir.join("v1.12.0.yaml"))
        .arg(dir.join("v1.13.0.yaml"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("CustomResourceDefinition"), "{first}");
    // The pipe is closed here, with most of the diff unwritten.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(out.status.signal(), Some(13), "ended by SIGPIPE: {:?}", out.status);
}

/// A file that starts with a UTF-8 byte-order mark is read like the same file without it,
/// and `md` and `markdown` mean the same on every command that prints Markdown.
#[test]
fn a_byte_order_mark_is_read_through_and_markdown_has_one_spelling_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: launcher.gokure.dev/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec:\n  components:\n    - {name: web, type: webservice, properties: {replicaz: 1}}\n";
    std::fs::write(dir.path().join("plain.yaml"), text).unwrap();
    std::fs::write(dir.path().join("bom.yaml"), format!("\u{feff}{text}")).unwrap();
    let run = |file: &str| {
        let out =
            covenant().current_dir(dir.path()).args(["check", file, "--output", "json"]).assert().code(1);
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["rule"].clone(), f["pointer"].clone(), f["line"].clone(), f["column"].clone()))
            .collect::<Vec<_>>()
    };
    let plain = run("plain.yaml");
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert_eq!(run("bom.yaml"), plain);
    let rules =
        |o: &str| covenant().args(["rules", "--output", o]).assert().success().get_output().stdout.clone();
    assert_eq!(rules("md"), rules("markdown"));
    let fixture = common::fixtures().join("rules/CVN-204");
    let diff = |o: &str| {
        covenant()
            .args(["diff", "--output", o])
            .arg(fixture.join("base.yaml"))
            .arg(fixture.join("input.yaml"))
            .assert()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(diff("md"), diff("markdown"));
}

/// A file that is not valid UTF-8 is one CVN-109 finding, and the other files are still
/// checked; a document that names a kind but no apiVersion is CVN-109 too, never a pass.
#[test]
fn a_file_that_is_not_utf8_is_one_finding_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a-binary.yaml"),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \xff\xfe}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("b-no-api-version.yaml"), "kind: Application\nmetadata: {name: a}\n")
        .unwrap();
    let out = covenant().current_dir(dir.path()).args(["check", ".", "--output", "json"]).assert().code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let found: Vec<(String, String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().any(|(file, rule, m)| file.ends_with("a-binary.yaml")
            && rule == "CVN-109"
            && m.contains("not valid UTF-8")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|(file, rule, m)| file.ends_with("b-no-api-version.yaml")
            && rule == "CVN-109"
            && m.contains("apiVersion")),
        "{found:?}"
    );
    assert_eq!(v["summary"]["documents"], 2);
}

/// A control character in a file (a NUL, which the YAML scanner alone takes for the end of the
/// stream) is a CVN-109 finding where it is, read from a file or from stdin: the documents
/// after it are never left unread in silence, and the one it is in is not judged half-read.
#[test]
fn a_control_character_is_a_finding_where_it_is_not_the_end_of_the_file() {
    let text = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\n---\n\
                apiVersion: v1\nkind: ConfigMap\nmetadata: # \u{0}\n  name: b\n---\n\
                kind: Application\nmetadata: {name: c}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("nul.yaml"), text).unwrap();
    for stdin in [false, true] {
        let mut cmd = covenant();
        cmd.current_dir(dir.path()).args(["check", if stdin { "-" } else { "nul.yaml" }, "--output", "json"]);
        let out = if stdin { cmd.write_stdin(text).assert() } else { cmd.assert() }.code(1);
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let findings = v["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{v}");
        let f = &findings[0];
        assert_eq!(
            (f["rule"].as_str(), f["line"].as_u64(), f["column"].as_u64()),
            (Some("CVN-109"), Some(7), Some(13))
        );
        assert!(f["message"].as_str().unwrap().contains("control character U+0000"), "{f}");
        // The document before it is judged; the one it cuts is not.
        assert_eq!(
            (v["summary"]["documents"].as_u64(), v["summary"]["unjudged"].as_u64()),
            (Some(2), Some(1)),
            "{v}"
        );
    }
}

/// A YAML merge key (`<<: *defaults`) is read as kubectl and the launcher's yaml.v3 read it:
/// the merged members are judged, found at the merge key, and a member the mapping gives
/// itself wins over a merged one. Read as a key named `<<`, what it merges would go unjudged.
#[test]
fn merged_members_are_judged_where_the_merge_key_is() {
    let app = "apiVersion: launcher.gokure.dev/v1alpha1\nkind: Application\nmetadata:\n  name: shop\n\
               spec:\n  components:\n  - name: web\n    type: webservice\n    properties: &web\n\
               \x20     image: shop:1\n      port: \"8080\"\n\
               \x20 - name: api\n    type: webservice\n    properties:\n      <<: *web\n      port: 9090\n\
               \x20 - name: admin\n    type: webservice\n    properties:\n      <<: [{replicas: two}, *web]\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.yaml"), app).unwrap();
    let out =
        covenant().current_dir(dir.path()).args(["check", "app.yaml", "--output", "json"]).assert().code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let found: Vec<(&str, &str, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["pointer"].as_str().unwrap(), f["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        found,
        [
            ("CVN-103", "/spec/components/0/properties/port", 11),
            ("CVN-103", "/spec/components/2/properties/port", 20),
            ("CVN-103", "/spec/components/2/properties/replicas", 20),
        ],
        "{v}"
    );
}

/// The findings of a `check --output json` run.
fn json_findings(out: &assert_cmd::assert::Assert) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    v["findings"].as_array().cloned().unwrap_or_else(|| panic!("no findings member: {v}"))
}

/// A tagged scalar is what go-yaml makes of its tag: `!!int "8080"` an integer, a local tag's
/// text text, and a scalar its tag cannot be a syntax error where it is.
#[test]
fn tagged_scalars_are_judged_as_kubectl_reads_them() {
    let app = |port: &str| {
        format!(
            "apiVersion: launcher.gokure.dev/v1alpha1\nkind: Application\nmetadata:\n  name: shop\n\
             spec:\n  components:\n  - name: web\n    type: webservice\n    properties:\n\
             \x20     image: shop:1\n      port: {port}\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let check = |port: &str, code: i32| {
        std::fs::write(dir.path().join("app.yaml"), app(port)).unwrap();
        let out = covenant()
            .current_dir(dir.path())
            .args(["check", "app.yaml", "--output", "json"])
            .assert()
            .code(code);
        json_findings(&out)
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["line"].as_u64(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(check("!!int \"8080\"", 0), []);
    for text in ["!!str 8080", "!port 8080"] {
        let found = check(text, 1);
        assert_eq!(
            found.iter().map(|(rule, line, _)| (rule.as_str(), *line)).collect::<Vec<_>>(),
            [("CVN-103", Some(11))],
            "{text}: {found:?}"
        );
    }
    let found = check("!!int eighty", 1);
    assert_eq!((found.len(), found[0].0.as_str(), found[0].1), (1, "CVN-109", Some(11)), "{found:?}");
    assert!(found[0].2.contains("cannot decode !!str `eighty` as a !!int"), "{found:?}");
}

/// A mapping key kubectl cannot name a JSON member with (null), and an infinity it cannot
/// write as JSON, refuse the document where they are, as kubectl refuses it; a float key is
/// named as kubectl names it.
#[test]
fn keys_and_infinities_are_read_as_kubectl_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let cm =
        |data: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: a}}\ndata:\n  {data}\n");
    std::fs::write(dir.path().join("cm.yaml"), cm("~: on")).unwrap();
    let out = covenant().current_dir(dir.path()).args(["check", "cm.yaml"]).assert().code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.starts_with("cm.yaml:5:3: error[CVN-109] not valid YAML: the mapping key is null")
            && text.contains("unsupported map key of type <nil>"),
        "{text}"
    );
    // `1.0` and `1` are one key to kubectl ("1"): written twice.
    std::fs::write(dir.path().join("cm.yaml"), cm("1.0: a\n  1: b")).unwrap();
    let out = covenant().current_dir(dir.path()).args(["check", "cm.yaml"]).assert().code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("cm.yaml:6:3: error[CVN-108] /data/1: key \"1\" appears twice"), "{text}");
    std::fs::write(dir.path().join("cm.yaml"), cm("limit: -.Inf\n  quoted: \".inf\"\n  .inf: key")).unwrap();
    let out = covenant().current_dir(dir.path()).args(["check", "cm.yaml"]).assert().code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.starts_with(
            "cm.yaml:5:10: error[CVN-109] /data/limit: kubectl refuses the document: it reads `-.Inf` as the \
             float -Inf, which JSON cannot hold (error converting YAML to JSON: json: unsupported value: -Inf)"
        ) && text.contains("1 denied (in 1 document)"),
        "{text}"
    );
}

/// A tab after a sequence entry's `-`, or at a line's start, is read by YAML 1.2 but refused
/// by go-yaml (kubectl's and the launcher's reader): CVN-109 at the tab, from a file and from
/// stdin. A tab after a key's `:`, which go-yaml reads (yaml-rust2 does not, before a letter),
/// passes.
#[test]
fn a_tab_go_yaml_refuses_is_refused_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let pod = |args: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name:\t\"web\"\n    \
             image:\tweb:1\n    args:\n{args}"
        )
    };
    let text = pod("    - --verbose\n    - \t--port=80\n");
    std::fs::write(dir.path().join("pod.yaml"), &text).unwrap();
    let from_file =
        covenant().current_dir(dir.path()).args(["check", "pod.yaml", "--output", "json"]).assert().code(1);
    let from_stdin = covenant().args(["check", "-", "--output", "json"]).write_stdin(text).assert().code(1);
    for out in [from_file, from_stdin] {
        let found = json_findings(&out);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0]["rule"].as_str(), found[0]["line"].as_u64(), found[0]["column"].as_u64()),
            (Some("CVN-109"), Some(11), Some(7))
        );
        assert!(
            found[0]["message"].as_str().unwrap().contains("refuses this tab: after a sequence entry's `-`"),
            "{found:?}"
        );
    }
    // A line of blanks that begins with a tab.
    std::fs::write(dir.path().join("pod.yaml"), pod("    - --verbose\n\t\n    - --port=80\n")).unwrap();
    let out =
        covenant().current_dir(dir.path()).args(["check", "pod.yaml", "--output", "json"]).assert().code(1);
    let found = json_findings(&out);
    assert_eq!(
        (found.len(), found[0]["line"].as_u64(), found[0]["column"].as_u64()),
        (1, Some(11), Some(1)),
        "{found:?}"
    );
    assert!(found[0]["message"].as_str().unwrap().contains("at the start of a line"), "{found:?}");
    // Spaces and then a tab beginning a line: after a comment (between tokens), left of a
    // plain scalar's indentation, and before a block scalar's indentation is known.
    for (args, at) in [
        ("    # flags\n  \t\n    - --verbose\n", (11, 3)),
        ("    - --verbose\n  \t\n    - --port=80\n", (11, 3)),
        ("    - |\n       \t--port=80\n", (11, 8)),
    ] {
        std::fs::write(dir.path().join("pod.yaml"), pod(args)).unwrap();
        let out = covenant()
            .current_dir(dir.path())
            .args(["check", "pod.yaml", "--output", "json"])
            .assert()
            .code(1);
        let found = json_findings(&out);
        assert_eq!(
            (found.len(), found[0]["line"].as_u64(), found[0]["column"].as_u64()),
            (1, Some(at.0), Some(at.1)),
            "{found:?}"
        );
        assert!(found[0]["message"].as_str().unwrap().contains("in a line's indentation"), "{found:?}");
    }
    // A tab in a block scalar's text, right of its indentation, is text.
    std::fs::write(dir.path().join("pod.yaml"), pod("    - |\n      --port=80\n      \t--verbose\n"))
        .unwrap();
    covenant().current_dir(dir.path()).args(["check", "pod.yaml"]).assert().success();
    std::fs::write(dir.path().join("pod.yaml"), pod("    - --verbose\n")).unwrap();
    covenant().current_dir(dir.path()).args(["check", "pod.yaml"]).assert().success();
    // Past many tabs after keys' colons (labels aligned by tabs), which go-yaml reads, a tab
    // that begins a line is found where it is.
    let labels: String = (0..40).map(|i| format!("    label{i}:\tvalue{i}\n")).collect();
    let aligned = |tail: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n{labels}{tail}spec:\n  containers:\n  - \
             name: web\n    image: web:1\n"
        )
    };
    std::fs::write(dir.path().join("pod.yaml"), aligned("\t# the last label\n")).unwrap();
    let out =
        covenant().current_dir(dir.path()).args(["check", "pod.yaml", "--output", "json"]).assert().code(1);
    let found = json_findings(&out);
    assert_eq!((found.len(), found[0]["line"].as_u64(), found[0]["column"].as_u64()), (1, Some(46), Some(1)));
    assert!(found[0]["message"].as_str().unwrap().contains("at the start of a line"), "{found:?}");
    std::fs::write(dir.path().join("pod.yaml"), aligned("")).unwrap();
    covenant().current_dir(dir.path()).args(["check", "pod.yaml"]).assert().success();
}

/// Two texts that read as YAML and do not reach the cluster through kubectl, which splits a
/// file at its `---` lines: a separator line with a document after its `---` (kubectl refuses
/// the file there) and a document after an end marker in the same part (kubectl never reads
/// it). In a file kubectl reads, each is a CVN-109 where it is, from a file, stdin and a
/// stream long enough to be read in pieces; not in a file of the launcher's documents, which
/// the launcher reads as YAML does.
#[test]
fn what_kubectl_splits_otherwise_than_yaml_is_refused_in_what_kubectl_reads() {
    let dir = tempfile::tempdir().unwrap();
    let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let findings = |out: &assert_cmd::assert::Assert| {
        json_findings(out)
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["line"].as_u64().unwrap(),
                    f["column"].as_u64().unwrap(),
                    f["document"].as_u64().unwrap(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let text = format!("{}--- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: b}}}}\n", cm("a"));
    std::fs::write(dir.path().join("two.yaml"), &text).unwrap();
    let from_file =
        covenant().current_dir(dir.path()).args(["check", "two.yaml", "--output", "json"]).assert().code(1);
    let from_stdin =
        covenant().args(["check", "-", "--output", "json"]).write_stdin(text.clone()).assert().code(1);
    for out in [&from_file, &from_stdin] {
        let found = findings(out);
        assert_eq!(
            found.iter().map(|(r, l, c, d, _)| (r.as_str(), *l, *c, *d)).collect::<Vec<_>>(),
            [("CVN-109", 5, 5, 1)],
            "{found:?}"
        );
        assert!(
            found[0]
                .4
                .contains("kubectl refuses this line (invalid Yaml document separator: {apiVersion: v1,"),
            "{found:?}"
        );
    }
    // Past the first mebibyte, after a flow document the line reader leaves to yaml-rust2.
    let mut long = String::from("{apiVersion: v1, kind: ConfigMap, metadata: {name: first}}\n");
    let mut n = 1;
    while long.len() < 3 << 20 {
        long.push_str(&format!("---\n{}", cm(&format!("cm-{n}"))));
        n += 1;
    }
    let line = long.lines().count() + 1;
    long.push_str("---apiVersion: v1\nkind: ConfigMap\nmetadata: {name: last}\n");
    std::fs::write(dir.path().join("long.yaml"), &long).unwrap();
    let out =
        covenant().current_dir(dir.path()).args(["check", "long.yaml", "--output", "json"]).assert().code(1);
    let found = findings(&out);
    let separator: Vec<_> = found.iter().filter(|f| f.4.contains("kubectl refuses")).collect();
    assert_eq!(separator.len(), 1, "{found:?}");
    assert_eq!((separator[0].1, separator[0].2, separator[0].3), (line as u64, 4, n as u64 - 1), "{found:?}");
    assert!(separator[0].4.contains("separator: apiVersion: v1)"), "{found:?}");

    // A document after an end marker, in the part kubectl reads one document of.
    std::fs::write(dir.path().join("ended.yaml"), format!("{}...\n# b\n{}", cm("a"), cm("b"))).unwrap();
    let out =
        covenant().current_dir(dir.path()).args(["check", "ended.yaml", "--output", "json"]).assert().code(1);
    let found = findings(&out);
    assert_eq!(
        found.iter().map(|(r, l, c, d, _)| (r.as_str(), *l, *c, *d)).collect::<Vec<_>>(),
        [("CVN-109", 7, 1, 1)],
        "{found:?}"
    );
    assert!(found[0].4.contains("kubectl never reads this document: no `---` line comes between it and the end marker `...` at line 5"), "{found:?}");
    std::fs::write(dir.path().join("ended.yaml"), format!("{}...\n---\n{}...\n", cm("a"), cm("b"))).unwrap();
    covenant().current_dir(dir.path()).args(["check", "ended.yaml"]).assert().success();

    // The launcher reads its own documents, and such a line with them.
    let app = "--- {apiVersion: launcher.gokure.dev/v1alpha1, kind: Application, metadata: {name: shop}, \
               spec: {components: [{name: web, type: webservice, properties: {image: \"shop:1\", port: 8080}}]}}\n";
    std::fs::write(dir.path().join("app.yaml"), app).unwrap();
    covenant().current_dir(dir.path()).args(["check", "app.yaml"]).assert().success();
    // And covenant its own.
    std::fs::write(
        dir.path().join("registry.yaml"),
        "--- {apiVersion: covenant.dev/v1alpha1, kind: Registry, types: []}\n",
    )
    .unwrap();
    covenant().current_dir(dir.path()).args(["check", "registry.yaml"]).assert().success();
}

/// A file in UTF-16 with its byte-order mark (what Windows PowerShell's `>` writes) is read as
/// kubectl and the launcher read it, from a file, stdin and a directory, its findings where
/// they are; `diff` reads it too.
#[test]
fn a_utf16_file_is_read_as_kubectl_reads_it() {
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n\
                \x20 metadata: {name: \"caf\u{e9}\"}\n  data:\n    FEATURE: on\n";
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(list.encode_utf16().flat_map(u16::to_le_bytes));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.yaml"), &bytes).unwrap();
    for args in [vec!["check", "list.yaml", "--output", "json"], vec!["check", ".", "--output", "json"]] {
        let out = covenant().current_dir(dir.path()).args(&args).assert().success();
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let f = &v["findings"][0];
        assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{args:?}: {v}");
        assert_eq!(
            (f["rule"].as_str(), f["pointer"].as_str(), f["line"].as_u64(), f["column"].as_u64()),
            (Some("CVN-110"), Some("/data/FEATURE"), Some(8), Some(14)),
            "{args:?}: {f}"
        );
    }
    let out = covenant().args(["check", "-"]).write_stdin(bytes).assert().success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("-:8:14: warning[CVN-110]"));
    // A CRD in UTF-16 diffs as it does in UTF-8.
    let crd = common::fixtures().join("crd-history/cert-manager/certificates/v1.6.0.yaml");
    let mut utf16 = vec![0xFE, 0xFF];
    utf16.extend(std::fs::read_to_string(&crd).unwrap().encode_utf16().flat_map(u16::to_be_bytes));
    std::fs::write(dir.path().join("crd.yaml"), utf16).unwrap();
    let diff = |file: &std::path::Path| covenant().arg("diff").arg(&crd).arg(file).output().unwrap();
    let (plain, wide) = (diff(&crd), diff(&dir.path().join("crd.yaml")));
    assert_eq!((wide.status.code(), &wide.stdout), (plain.status.code(), &plain.stdout));
    assert!(String::from_utf8_lossy(&wide.stdout).contains("no changes"));
}

/// A plain `on` is a boolean to kubectl and text to covenant: CVN-110 warns where it is, in a
/// list's item too (pointing into the item), and the run still passes.
#[test]
fn a_scalar_kubectl_reads_as_a_boolean_is_a_warning_where_it_is() {
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n\
                \x20 metadata: {name: flags}\n  data:\n    FEATURE: on\n    QUOTED: \"off\"\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.yaml"), list).unwrap();
    let out = covenant()
        .current_dir(dir.path())
        .args(["check", "list.yaml", "--output", "json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        (
            f["rule"].as_str(),
            f["severity"].as_str(),
            f["pointer"].as_str(),
            f["item"].as_u64(),
            f["line"].as_u64()
        ),
        (Some("CVN-110"), Some("warning"), Some("/data/FEATURE"), Some(0), Some(8)),
        "{f}"
    );
    assert!(f["message"].as_str().unwrap().contains("the boolean true to kubectl"), "{f}");
}

/// A stream of JSON objects (`kubectl get -o json | jq -c '.items[]'`) is read as kubectl
/// reads it, an object a document: from stdin, each judged and found at its own line.
#[test]
fn a_stream_of_json_objects_is_a_document_each() {
    let stream = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n\
                  {\"schema\":\"space.app\",\"version\":\"2\",\"name\":\"b\"}\n";
    let out = covenant().args(["check", "-", "--output", "json"]).write_stdin(stream).assert().code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["summary"]["documents"], 2, "{v}");
    let f = &v["findings"][0];
    assert_eq!(
        (f["rule"].as_str(), f["document"].as_u64(), f["line"].as_u64()),
        (Some("CVN-106"), Some(1), Some(2)),
        "{v}"
    );
    // A JSON file that neither YAML nor JSON reads is said in JSON's words, where JSON stops.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cm.json"),
        "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\"\n  \"metadata\": {\"name\": \"a\"}\n}\n",
    )
    .unwrap();
    let out = covenant().current_dir(dir.path()).args(["check", "cm.json"]).assert().code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("cm.json:4:3: error[CVN-109] not valid JSON: expected `,` or `}`"), "{text}");
}

/// A directory walk skips `.git`, honours `--exclude` (a path below the directory or a file
/// name), and walks a directory reached again through a symlink once, saying so once.
#[test]
fn directory_walks_skip_git_honour_exclude_and_survive_symlink_loops() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\nbroken: [\n";
    let good = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: good}\n";
    for (path, text) in [
        (".git/objects/x.yaml", bad),
        ("charts/web/values.yaml", bad),
        ("app/web.tmpl.yaml", bad),
        ("app/web.yaml", good),
        ("app/LEGACY.YAML", bad),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::os::unix::fs::symlink("..", root.join("app/loop")).unwrap();
    let out = covenant()
        .args(["check", "--exclude", "charts/**", "--exclude", "*.tmpl.yaml"])
        .arg(root)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.ends_with("1 document(s) checked: 0 denied, 0 warned, 0 audited; 1 of kinds no rule judges (example.com/v1 Widget)\n"),
        "{text}"
    );
    assert_eq!(text.matches("already walked").count(), 1, "{text}");
    // A document file's extension in upper case: left out, as kubectl leaves it, and said.
    assert!(
        text.contains(
            "LEGACY.YAML was not read: kubectl too skips it in a directory, where it reads *.yaml, \
                       *.yml and *.json in lower case only (name it *.yaml to have both read it)"
        ),
        "{text}"
    );
    let only = tempfile::tempdir().unwrap();
    std::fs::write(only.path().join("DEPLOY.Yml"), good).unwrap();
    let out = covenant().arg("check").arg(only.path()).assert().code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("holds no *.yaml, *.yml or *.json file\n  note: ")
            && err.contains("DEPLOY.Yml was not read")
            && err.contains("(name it *.yml"),
        "{err}"
    );
    // Named, it is read (as kubectl reads a file named with -f).
    covenant().arg("check").arg(only.path().join("DEPLOY.Yml")).assert().code(0);
    // Without the excludes, the excluded files are read (and fail); .git never is.
    let out = covenant().arg("check").arg(root).assert().code(1).get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("values.yaml") && text.contains("web.tmpl.yaml") && !text.contains(".git"),
        "{text}"
    );
}

/// Without cluster state, what a rule could not look up is said, not passed silently: a
/// pinned Component checked without --context carries a note naming the rule and the way to
/// supply the state.
#[test]
fn without_cluster_state_an_unchecked_pin_is_said() {
    let input = common::fixtures().join("rules/CVN-107/input.yaml");
    let out = covenant().arg("check").arg(&input).assert().code(0).get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("note: ") && text.contains("CVN-406 not checked") && text.contains("--context DIR"),
        "{text}"
    );
    let with = covenant()
        .arg("check")
        .arg("--context")
        .arg(common::fixtures().join("rules/CVN-107/context"))
        .arg(&input)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    assert!(!String::from_utf8(with).unwrap().contains("not checked"));
}

/// A config with a type error and a misspelled member reports both at once, in the config's
/// own terms, with a did-you-mean.
#[test]
fn config_problems_are_reported_together_in_the_configs_terms() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(
        covenant().args(["config", "print-default"]).assert().success().get_output().stdout.clone(),
    )
    .unwrap()
    .replace("bodyLimitBytes: 7340032", "bodyLimitBytes: lots")
    .replace("maxReviewsInFlight: 32", "maxReviewsInFlite: 32")
    .replace("maxBufferedBytes: 50331648", "maxBufferedBytes: -1");
    let config = dir.path().join("covenant.yaml");
    std::fs::write(&config, text).unwrap();
    let out = covenant()
        .args(["check", "--config"])
        .arg(&config)
        .arg(common::fixtures().join("launcher/examples/01-webservice-minimal.yaml"))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("3 problem(s)"), "{err}");
    assert!(
        err.contains("/server/bodyLimitBytes: expected a number of bytes, found a string \"lots\""),
        "{err}"
    );
    assert!(
        err.contains("/server/maxBufferedBytes: expected a number of bytes, found a number `-1`"),
        "{err}"
    );
    assert!(err.contains("did you mean \"maxReviewsInFlight\"?"), "{err}");
    assert!(!err.contains("usize"), "{err}");
}

/// Other tools' YAML in a checked tree: without the switch each document that names nothing
/// is CVN-109; with `--skip-unidentified` they are counted and listed as skipped, while a
/// document that names only `kind` is still judged, and the run still fails on it.
#[test]
fn documents_of_other_tools_are_skipped_by_a_switch_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("workflow.yaml", "name: CI\non:\n  push: {}\njobs:\n  test:\n    runs-on: ubuntu-latest\n");
    write("values.yaml", "replicaCount: 2\nimage:\n  tag: \"1.2\"\n---\n- a list\n");
    write("half.yaml", "kind: ConfigMap\nmetadata:\n  name: half\n");
    write("ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n");
    let run = |skip: bool, output: &str| {
        let mut cmd = covenant();
        cmd.arg("check").arg(dir.path()).args(["--output", output]);
        if skip {
            cmd.arg("--skip-unidentified");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(false, "text");
    assert_eq!(text.matches("error[CVN-109]").count(), 4, "{text}");
    assert!(text.contains("5 document(s) checked: 4 denied (in 4 documents)"), "{text}");

    let text = run(true, "text");
    assert_eq!(text.matches("error[CVN-109]").count(), 1, "{text}");
    assert!(text.contains("half.yaml:1:1: error[CVN-109]"), "{text}");
    assert!(
        text.contains("2 document(s) checked: 1 denied (in 1 document), 0 warned, 0 audited; 3 skipped as not Kubernetes-style (--skip-unidentified)"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&run(true, "json")).unwrap();
    assert_eq!(json["summary"]["skipped"], 3);
    assert_eq!(json["summary"]["documents"], 2);
    let skipped: Vec<(String, u64)> = json["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let file = s["file"].as_str().unwrap();
            (file.rsplit('/').next().unwrap().to_string(), s["document"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        skipped,
        [("values.yaml".to_string(), 0), ("values.yaml".to_string(), 1), ("workflow.yaml".to_string(), 0)]
    );
}

/// A Helm chart's templates are template source, not manifests: each template file is one
/// CVN-109 finding at its first action that begins a node, naming the chart to render or leave
/// out, and nothing else is judged of it (no half-read Deployment refused for its fields).
/// Actions YAML reads as text (quoted, in a block scalar) are text, and such a file is judged
/// as it is; leaving the chart out leaves what else was checked.
#[test]
fn template_source_is_one_finding_that_says_how_to_check_it() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("charts/shop");
    std::fs::create_dir_all(chart.join("templates/jobs")).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("charts/shop/Chart.yaml", "apiVersion: v2\nname: shop\nversion: 0.1.0\n");
    write("charts/shop/values.yaml", "replicaCount: 1\nimage:\n  repository: shop\n");
    // Only scalar-looking actions: YAML reads a flow mapping whose key is a mapping, which
    // kubectl refuses; before, the rest was judged and drew a wall of findings.
    write(
        "charts/shop/templates/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"shop.fullname\" . }}\n\
         spec:\n  replicas: {{ .Values.replicaCount }}\n",
    );
    // A control action on its own line, under a nested folder of templates.
    write(
        "charts/shop/templates/jobs/migrate.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  labels:\n    \
         {{- include \"shop.labels\" . | nindent 4 }}\nspec:\n  template:\n    spec:\n      \
         restartPolicy: Never\n",
    );
    // Actions as text: quoted, and an alerting template in a block scalar.
    write(
        "charts/shop/templates/alerts.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"{{ .Release.Name }}-alerts\"\ndata:\n  \
         alert.tmpl: |\n    {{ define \"down\" }}{{ .Labels.instance }} is down{{ end }}\n",
    );
    write("ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\ndata:\n  a: b\n");

    let out = covenant().arg("check").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("]")).collect();
    let template = |file: &str, at: &str, action: &str| {
        let line = lines.iter().find(|l| l.contains(file)).unwrap_or_else(|| panic!("{file}: {text}"));
        assert!(
            line.contains(&format!("{file}:{at}: error[CVN-109] a template, not a manifest: `{action}`")),
            "{line}"
        );
        let shown = chart.display();
        assert!(line.contains(&format!("`helm template {shown} | covenant check -`")), "{line}");
        assert!(line.contains("(`--exclude shop`)"), "{line}");
    };
    template("templates/deployment.yaml", "4:9", "{{ include \"shop.fullname\" . }}");
    template("templates/jobs/migrate.yaml", "6:5", "{{- include \"shop.labels\" . | nindent 4 }}");
    // Each template file once; the ConfigMap of text actions and ok.yaml draw nothing; the
    // chart's own files are not Kubernetes-style (CVN-109 each, as any such file).
    assert_eq!(text.matches("templates/deployment.yaml").count(), 1, "{text}");
    assert_eq!(text.matches("templates/jobs/migrate.yaml").count(), 1, "{text}");
    assert!(!text.contains("alerts.yaml") && !text.contains("ok.yaml"), "{text}");
    assert!(!text.contains("CVN-103") && !text.contains("CVN-104"), "{text}");
    assert!(text.contains("6 document(s) checked: 4 denied (in 4 documents)"), "{text}");

    // Left out as the finding says: what remains is judged, and passes.
    let out = covenant().arg("check").arg(dir.path()).args(["--exclude", "shop"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("1 document(s) checked: 0 denied"), "{text}");

    // Rendered, from stdin: each finding says the template its document came from, by the
    // `# Source:` comment helm template writes above it; a document without one says none.
    let rendered = "---\n# Source: shop/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: shop\n\
                    spec:\n  ports:\n    - {port: 80, targetPortt: 8080}\n---\n# Source: shop/templates/deployment.yaml\n\
                    apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shop\nspec:\n  replicas: \"2\"\n---\n\
                    apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndatta: {}\n";
    let out = covenant().args(["check", "-", "--output", "json"]).write_stdin(rendered).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let from: Vec<(String, Value)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["pointer"].as_str().unwrap().to_string(), f["renderedFrom"].clone()))
        .collect();
    assert!(
        from.contains(&("/spec/ports/0/targetPortt".into(), "shop/templates/service.yaml".into())),
        "{from:?}"
    );
    assert!(from.contains(&("/spec/replicas".into(), "shop/templates/deployment.yaml".into())), "{from:?}");
    assert!(from.contains(&("/datta".into(), Value::Null)), "{from:?}");
    let out = covenant().args(["check", "-"]).write_stdin(rendered).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The Deployment's three findings (replicas a string, selector and template missing).
    assert_eq!(text.matches("  = rendered from: shop/templates/deployment.yaml\n").count(), 3, "{text}");
    assert_eq!(text.matches("  = rendered from: ").count(), 4, "{text}");

    // Read from stdin there is no chart to name.
    let template = std::fs::read(chart.join("templates/deployment.yaml")).unwrap();
    let out = covenant().args(["check", "-"]).write_stdin(template).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("-:4:9: error[CVN-109] a template, not a manifest"), "{text}");
    assert!(text.contains("`helm template CHART | covenant check -`"), "{text}");
}

/// What a kustomization reads as other than a manifest — an overlay's patch, a generator's
/// file — is not judged as a document (a strategic-merge patch names only what it changes, a
/// JSON 6902 patch is a list of operations) and is said, naming the kustomization to build.
/// Covenant's own deploy base holds both: a JSON 6902 patch in a component and the config a
/// generator reads. A patch named alone is known by the kustomization beside it, and a run
/// of nothing else checked nothing.
#[test]
fn what_kustomize_reads_is_said_and_not_judged_as_a_manifest() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = covenant()
        .current_dir(root)
        .args(["check", "deploy", "--exclude", "grafana", "--exclude", "prometheus", "--output", "json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{json:#}");
    let read: Vec<(&str, &str, &str)> = json["kustomizeInputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (k["file"].as_str().unwrap(), k["role"].as_str().unwrap(), k["kustomization"].as_str().unwrap())
        })
        .collect();
    assert!(read.contains(&("deploy/config/covenant.yaml", "a generator's input", "deploy")), "{read:?}");
    assert!(read.contains(&("deploy/kustomization.yaml", "a kustomization", "deploy")), "{read:?}");
    let patch = (
        "deploy/components/openchoreo-pins/components-crd.yaml",
        "a patch",
        "deploy/components/openchoreo-pins",
    );
    assert!(read.contains(&patch), "{read:?}");
    assert_eq!(json["summary"]["kustomizeInputs"], read.len());
    assert!(json["findings"].as_array().unwrap().is_empty(), "{json:#}");

    // An overlay: its base is judged, its patch is said.
    let dir = tempfile::tempdir().unwrap();
    let (base, prod) = (dir.path().join("base"), dir.path().join("overlays/prod"));
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&prod).unwrap();
    let kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";
    std::fs::write(base.join("kustomization.yaml"), format!("{kustomization}resources:\n  - web.yaml\n"))
        .unwrap();
    std::fs::write(
        base.join("web.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  \
         template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - {name: web, image: \"web:1.0\"}\n",
    )
    .unwrap();
    let overlay =
        format!("{kustomization}resources:\n  - ../../base\npatchesStrategicMerge:\n  - replicas.yaml\n");
    std::fs::write(prod.join("kustomization.yaml"), overlay).unwrap();
    std::fs::write(
        prod.join("replicas.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n",
    )
    .unwrap();
    let out = covenant().current_dir(dir.path()).args(["check", "."]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("1 document(s) checked: 0 denied"), "{text}");
    assert!(
        text.contains(
            "3 file(s) kustomize reads, not applied as written (./base/kustomization.yaml, a kustomization; \
             ./overlays/prod/kustomization.yaml, a kustomization; ./overlays/prod/replicas.yaml, a patch): \
             check what `kustomize build` of each of the 2 kustomizations writes"
        ),
        "{text}"
    );
    let out = covenant().current_dir(&prod).args(["check", "replicas.yaml"]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("nothing to check: replicas.yaml: a patch of the kustomization in ., not a manifest; check what `kustomize build .` writes"),
        "{stderr}"
    );
}

/// Seed 002: a reader decodes one shape per format. A registry that declares one format at two
/// versions is refused naming the format and both; two registries that do are refused when
/// loaded (`--registry` twice), never the later silently winning; a checked registry that
/// disagrees with a loaded one is refused too. With `--base`, a member removed from a format
/// whose version stays is refused ("These changes take a new version: removing a member");
/// the same removal under a new version passes.
#[test]
fn a_format_has_one_decoder_and_a_removed_member_takes_a_new_version() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let entry = |version: &str, members: &str| {
        format!("  - schema: shop.app\n    version: \"{version}\"\n    members: [{members}]\n")
    };
    let registry = |name: &str, entries: &[String]| {
        format!(
            "apiVersion: covenant.dev/v1alpha1\nkind: Registry\nmetadata:\n  name: {name}\nversioned:\n{}",
            entries.concat()
        )
    };
    let both =
        write("both.yaml", &registry("both", &[entry("1", "name, image"), entry("2", "name, image, size")]));
    let out = covenant().args(["check", "--output", "json"]).arg(&both).assert().code(1);
    let found = json_findings(&out);
    assert!(
        found.iter().any(|f| f["rule"] == "CVN-109"
            && f["pointer"] == "/versioned/1"
            && f["message"].as_str().unwrap().contains("format shop.app has two decoders: version \"1\"")
            && f["message"].as_str().unwrap().contains("version \"2\"")),
        "{found:#?}"
    );
    let doc = write("app.yaml", "schema: shop.app\nversion: \"1\"\nname: web\n");
    let (a, b) = (
        write("a.yaml", &registry("a", &[entry("1", "name, image")])),
        write("b.yaml", &registry("b", &[entry("2", "name, image, size")])),
    );
    let out = covenant()
        .arg("check")
        .arg("--registry")
        .arg(&a)
        .arg("--registry")
        .arg(&b)
        .arg(&doc)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("format shop.app has two decoders")
            && stderr.contains("a.yaml")
            && stderr.contains("b.yaml"),
        "{stderr}"
    );
    // Two checked registries: refused the same way.
    let out = covenant().arg("check").arg(&a).arg(&b).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("format shop.app has two decoders") && stderr.contains("b.yaml"), "{stderr}");
    // A checked registry against a loaded one.
    let out = covenant().args(["check", "--registry"]).arg(&a).arg(&b).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the checked registries disagree: format shop.app has two decoders"), "{stderr}");

    // Evolution of a format under --base.
    let old = write("old.yaml", &registry("shop", &[entry("1", "name, replicas, image")]));
    let same = write("same.yaml", &registry("shop", &[entry("1", "name, image")]));
    let out =
        covenant().args(["check", "--output", "json"]).arg(&same).arg("--base").arg(&old).assert().code(1);
    let found = json_findings(&out);
    assert!(
        found.iter().any(|f| f["rule"] == "CVN-201"
            && f["pointer"] == "/versioned/0/members"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("member \"replicas\" removed while the version stays \"1\"")),
        "{found:#?}"
    );
    let moved = write("moved.yaml", &registry("shop", &[entry("2", "name, image")]));
    covenant().arg("check").arg(&moved).arg("--base").arg(&old).assert().code(0);
    // An added member keeps the version.
    let added = write("added.yaml", &registry("shop", &[entry("1", "name, replicas, image, size")]));
    covenant().arg("check").arg(&added).arg("--base").arg(&old).assert().code(0);
}

/// A hostile repository cannot hang or crash `check`, `diff` or `--context`: a `*.yaml`
/// symlink to `/dev/zero` (which spun forever) and a FIFO with no writer (which blocked
/// forever) are left out of a walk, said; a 300 MiB sparse file (read whole before) is
/// refused by its size; 30 000 `- ` on one line (a stack overflow, exit 134) is refused at the
/// nesting limit; `check - < /dev/zero` (read until memory ran out) is refused past the limit.
#[test]
fn a_hostile_repository_is_refused_in_bounded_time_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::os::unix::fs::symlink("/dev/zero", repo.join("zero.yaml")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(repo.join("fifo.yaml")).status().unwrap().success());
    std::fs::File::create(repo.join("sparse.yaml")).unwrap().set_len(300 << 20).unwrap();
    let deep = format!("{}x\n", "- ".repeat(30_000));
    std::fs::write(repo.join("deep.yaml"), &deep).unwrap();
    std::fs::write(repo.join("ok.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n").unwrap();
    let bounded = || {
        let mut c = covenant();
        c.timeout(std::time::Duration::from_secs(60));
        c
    };
    let out = bounded().arg("check").arg(&repo).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("zero.yaml was not read: it is not a regular file"), "{stdout}");
    assert!(stdout.contains("fifo.yaml was not read: it is not a regular file"), "{stdout}");
    assert!(stdout.contains("sparse.yaml") && stdout.contains("more than the 256 MiB"), "{stdout}");
    assert!(stdout.contains("collections nest more than 512 deep"), "{stdout}");
    // The same document through diff and as context.
    let deep_file = repo.join("deep.yaml");
    let out = bounded().arg("diff").arg(&deep_file).arg(&deep_file).output().unwrap();
    assert!(matches!(out.status.code(), Some(1 | 2)), "{:?}", out.status);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nest more than 512"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out =
        bounded().arg("check").arg(repo.join("ok.yaml")).arg("--context").arg(&deep_file).output().unwrap();
    assert!(matches!(out.status.code(), Some(0..=2)), "{:?}", out.status);
    // stdin without end.
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .args(["check", "-"])
        .stdin(zero)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("more than 256 MiB"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A file name that holds a newline (or an escape sequence) cannot forge a line of text
/// output: it is written escaped, as a finding's quoted text is.
#[test]
fn control_characters_in_file_names_are_escaped_in_text_output() {
    let dir = tempfile::tempdir().unwrap();
    let name = "apps\ninput.yaml:1:1: error[CVN-000] forged\u{1b}[2J.yaml";
    std::fs::write(
        dir.path().join(name),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nmetadata: {}\n",
    )
    .unwrap();
    let out = covenant().arg("check").arg(dir.path()).assert().code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.lines().all(|l| !l.starts_with("input.yaml")), "a forged line: {text}");
    assert!(!text.contains('\u{1b}'), "an escape sequence reached the terminal: {text}");
    assert!(text.contains("apps\\u{a}input.yaml"), "{text}");
}

/// Nothing counted twice: a file named twice, or reached through a directory and a flag, is
/// read once, and the summary counts its documents and findings once.
#[test]
fn a_file_named_twice_is_checked_once() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nmetadata: {}\n").unwrap();
    let once = covenant().arg("check").arg(&bad).assert().code(1);
    let once = String::from_utf8(once.get_output().stdout.clone()).unwrap();
    let spelled = dir.path().join(".").join("bad.yaml");
    let twice = covenant().arg("check").arg(&bad).arg(&spelled).arg(dir.path()).assert().code(1);
    let twice = String::from_utf8(twice.get_output().stdout.clone()).unwrap();
    assert_eq!(once.lines().last(), twice.lines().last(), "{twice}");
    assert!(twice.contains("1 document(s) checked"), "{twice}");
}

/// `diff --fail-on` gates CI on the size of a change whatever the policy says: a MINOR
/// addition passes `--fail-on MAJOR` and fails `--fail-on MINOR`; no change passes even
/// `--fail-on PATCH`.
#[test]
fn diff_fail_on_gates_on_the_largest_change() {
    let dir = tempfile::tempdir().unwrap();
    let crd = |fields: &[&str]| {
        let properties: serde_json::Map<String, Value> =
            fields.iter().map(|f| (f.to_string(), serde_json::json!({"type": "string"}))).collect();
        serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}}}}]}})
        .to_string()
    };
    let (old, new) = (dir.path().join("old.json"), dir.path().join("new.json"));
    std::fs::write(&old, crd(&["size"])).unwrap();
    std::fs::write(&new, crd(&["size", "color"])).unwrap();
    covenant().arg("diff").arg(&old).arg(&new).args(["--fail-on", "MAJOR"]).assert().code(0);
    let out = covenant().arg("diff").arg(&old).arg(&new).args(["--fail-on", "MINOR"]).assert().code(1);
    assert!(String::from_utf8_lossy(&out.get_output().stderr)
        .contains("a MINOR change, at or above --fail-on MINOR"));
    covenant().arg("diff").arg(&old).arg(&old).args(["--fail-on", "PATCH"]).assert().code(0);
}

/// The checked files are the context: a folder holding the published ClusterComponentTypes
/// and a Component pinned to a version none publishes is refused as the webhook would refuse
/// it, without `--context`. What the files do not hold stays "not checked" (a note, never
/// "none found"), and `--require-context` makes that a failure; `--context` adds to the tree.
#[test]
fn the_checked_files_are_the_context() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str], code: i32| {
        let out = covenant().current_dir(root).args(args).assert().code(code).get_output().clone();
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap()
    };
    let tree = run(&["check", "examples/tour/platform", "examples/tour/apps"], 1);
    assert!(
        tree.contains("error[CVN-406] /spec/componentType/version: pin \"9\" of \"ruby-service\""),
        "{tree}"
    );
    assert!(!tree.contains("not checked"), "{tree}");
    // Web pins "1" and sets sizeClass xlarge, which 1.1.0 allows: no finding for it.
    assert!(tree.contains("1 denied (in 1 document)"), "{tree}");
    let alone = run(&["check", "examples/tour/apps"], 0);
    assert!(
        alone
            .contains("CVN-406 not checked: no cluster state to look up ClusterComponentType.openchoreo.dev"),
        "{alone}"
    );
    let strict = run(&["check", "examples/tour/apps", "--require-context"], 1);
    assert!(strict.contains("2 judgement(s) needed cluster state"), "{strict}");
    let with_context = run(&["check", "examples/tour/apps", "--context", "examples/tour/platform"], 1);
    assert!(with_context.contains("error[CVN-406]"), "{with_context}");
    // A tree that holds the types passes --require-context for what it holds.
    run(&["check", "examples/tour/platform", "--require-context"], 0);
}

/// The reader's findings go through the engine like any rule's: exemptions of CVN-109 and
/// CVN-110 quiet an unreadable file and a kubectl-ambiguous scalar, each said in a note with
/// the exemption's reason; `rules.actions` lowers CVN-108 (a repeated key) to a warning.
#[test]
fn reader_findings_follow_exemptions_and_actions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flags, namespace: legacy}\ndata:\n  enabled: yes\n  mode: a\n  mode: b\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n")
        .unwrap();
    let before =
        covenant().current_dir(dir.path()).args(["check", "cm.yaml", "broken.yaml"]).output().unwrap();
    let text = String::from_utf8_lossy(&before.stdout).into_owned();
    assert!(
        text.contains("CVN-110") && text.contains("error[CVN-109]") && text.contains("error[CVN-108]"),
        "{text}"
    );
    std::fs::write(
        dir.path().join("covenant.yaml"),
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  actions: {CVN-108: warn}\n\
         exemptions:\n  - namespaces: [legacy]\n    rules: [CVN-110]\n    reason: legacy files, migrating by March\n\
         \x20 - names: [\"*\"]\n    rules: [CVN-109]\n    reason: unreadable files are tracked in TICKET-7\n",
    )
    .unwrap();
    let after = covenant()
        .current_dir(dir.path())
        .args(["check", "--config", "covenant.yaml", "cm.yaml", "broken.yaml"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&after.stdout).into_owned();
    assert_eq!(after.status.code(), Some(0), "{text}");
    assert!(!text.contains("[CVN-109]") && !text.contains("[CVN-110]"), "{text}");
    assert!(text.contains("warning[CVN-108]"), "{text}");
    assert!(
        text.contains("note: broken.yaml: CVN-109 exempted: unreadable files are tracked in TICKET-7"),
        "{text}"
    );
    assert!(text.contains("note: cm.yaml: CVN-110 exempted: legacy files, migrating by March"), "{text}");
}
