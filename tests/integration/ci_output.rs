//! `covenant check` in CI: SARIF 2.1.0, JUnit XML, GitHub workflow commands, and baselines
//! that let a repository adopt covenant gradually (matched by rule id and fingerprint).

use crate::common;

use assert_cmd::Command;
use serde_json::Value;

fn covenant() -> Command {
    Command::cargo_bin("covenant").unwrap()
}

/// The launcher's daemonset example as a worker, a type whose schema every launcher line
/// states: a missing nested key (19:13) and an undeclared one (22:7), both refused.
fn daemonset() -> std::path::PathBuf {
    common::fixtures().join("launcher/ci/12-worker.yaml")
}

fn minimal() -> std::path::PathBuf {
    common::fixtures().join("launcher/examples/01-webservice-minimal.yaml")
}

fn run(args: &[&str], files: &[&std::path::Path], code: i32) -> String {
    let mut cmd = covenant();
    cmd.arg("check").args(args);
    for f in files {
        cmd.arg(f);
    }
    String::from_utf8(cmd.assert().code(code).get_output().stdout.clone()).unwrap()
}

#[test]
fn sarif_carries_the_catalogue_and_file_regions() {
    let out = run(&["--output", "sarif"], &[&daemonset(), &minimal()], 1);
    let sarif: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), covenant::rules::CATALOG.len());
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"], "ruleIndex points at the rule");
        assert_eq!(r["level"], "error");
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 19, "{region}");
        assert!(r["partialFingerprints"]["covenant/v1"].as_str().unwrap().len() == 12);
    }
    assert_eq!(results[0]["ruleId"], "CVN-104");
    assert_eq!(results[0]["locations"][0]["physicalLocation"]["region"]["startColumn"], 13);
}

#[test]
fn junit_has_one_case_per_document_and_github_annotates() {
    // A document no rule concerns is a case of its own, skipped with the reason.
    let dir = tempfile::tempdir().unwrap();
    let config_map = dir.path().join("settings.yaml");
    std::fs::write(&config_map, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: settings}\n")
        .unwrap();
    let xml = run(&["--output", "junit"], &[&daemonset(), &minimal(), &config_map], 1);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"covenant\" tests=\"3\" failures=\"1\" skipped=\"1\">"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 3);
    assert_eq!(xml.matches("</testcase>").count(), 3);
    assert!(
        xml.contains("name=\"Widget settings (document 0)\">\n      <skipped message=\"no rule concerns example.com/v1 Widget\"/>"),
        "{xml}"
    );
    assert_eq!(xml.matches("<failure ").count(), 1);
    assert!(
        xml.contains("failure type=\"CVN-104\" message=\"2 violation(s): required key &quot;mountPath&quot;"),
        "{xml}"
    );
    let gh = run(&["--output", "github"], &[&daemonset()], 1);
    let lines: Vec<&str> = gh.lines().collect();
    assert!(
        lines[0].starts_with("::error file=")
            && lines[0].contains(",line=19,col=13,title=CVN-104 missing-required::"),
        "{gh}"
    );
    assert!(lines[1].contains(",line=22,col=7,title=CVN-102 undeclared-property::"), "{gh}");
}

#[test]
fn a_baseline_hides_recorded_findings_and_only_those() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.yaml");
    std::fs::copy(daemonset(), &app).unwrap();
    let baseline = dir.path().join("covenant-baseline.json");
    covenant().arg("check").arg(&app).arg("--write-baseline").arg(&baseline).assert().success();
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    assert_eq!(recorded["kind"], "Baseline");
    assert_eq!(recorded["findings"].as_array().unwrap().len(), 2);
    // With the baseline, the known findings are left out: the file passes.
    let out = run(&["--baseline", baseline.to_str().unwrap()], &[&app], 0);
    assert!(out.contains("0 denied"), "{out}");
    // A new defect is still reported.
    let text = std::fs::read_to_string(&app).unwrap().replace(
        "      image: myregistry/node-agent:v1.0.0",
        "      image: myregistry/node-agent:v1.0.0\n      replicaz: 2",
    );
    std::fs::write(&app, text).unwrap();
    let out = run(&["--baseline", baseline.to_str().unwrap(), "--output", "json"], &[&app], 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    let rules: Vec<&str> =
        report["findings"].as_array().unwrap().iter().map(|f| f["pointer"].as_str().unwrap()).collect();
    assert_eq!(rules, ["/spec/components/0/properties/replicaz"]);
    // A new file carrying the same kind of finding as a baselined one is new: the baseline
    // knows findings by the object they are about, not only by rule and fingerprint.
    let copy = dir.path().join("copy.yaml");
    std::fs::copy(daemonset(), &copy).unwrap();
    std::fs::copy(daemonset(), &app).unwrap();
    let out = run(&["--baseline", baseline.to_str().unwrap()], &[&app, &copy], 1);
    assert!(out.contains("copy.yaml") && !out.contains("app.yaml:"), "{out}");
    // And by count: the same finding twice more than recorded is reported.
    let twice = std::fs::read_to_string(daemonset()).unwrap();
    std::fs::write(&app, format!("{twice}\n---\n{twice}")).unwrap();
    let out = run(&["--baseline", baseline.to_str().unwrap()], &[&app], 1);
    assert!(out.contains("2 denied (in 1 document)"), "{out}");
    // SARIF carries the same identity.
    let out = run(&["--output", "sarif"], &[&copy], 1);
    let sarif: Value = serde_json::from_str(&out).unwrap();
    let fingerprints = &sarif["runs"][0]["results"][0]["partialFingerprints"];
    assert!(fingerprints["covenant/object/v1"].as_str().is_some_and(|f| f.len() == 32), "{fingerprints}");
    // A file that is not a baseline is an input error.
    std::fs::write(&baseline, "{}").unwrap();
    covenant().arg("check").arg(&app).arg("--baseline").arg(&baseline).assert().code(2);
}

/// Nothing unparsed is left out of JUnit: a YAML stream whose third document does not parse
/// reports the first two as cases and the third as a failing one; findings quoting control
/// characters keep the XML well-formed and the text free of raw escape sequences.
#[test]
fn junit_fails_every_unparsed_document_and_quotes_stay_safe() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("stream.yaml");
    std::fs::write(
        &stream,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\nkey: [unclosed\n",
    )
    .unwrap();
    let out = run(&["--output", "junit"], &[&stream], 1);
    assert!(out.contains(r#"tests="3" failures="1""#), "{out}");
    // Numbered as JSON's and SARIF's `document`: from 0 within the file.
    assert!(out.contains("(document 2)") && out.contains(r#"<failure type="CVN-109""#), "{out}");
    let json: Value = serde_json::from_str(&run(&["--output", "json"], &[&stream], 1)).unwrap();
    assert_eq!(json["findings"][0]["document"], 2, "{json}");

    // An undeclared key spelled with an escape sequence and a NUL.
    let hostile = dir.path().join("hostile.json");
    let doc = serde_json::json!({"apiVersion": "launcher.gokure.dev/v1alpha1", "kind": "Application",
        "metadata": {"name": "x"}, "spec": {"\u{1b}[31mred\u{0}": 1}});
    std::fs::write(&hostile, doc.to_string()).unwrap();
    let out = run(&["--output", "junit"], &[&hostile], 1);
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    assert!(out.contains("\u{FFFD}[31mred\u{FFFD}"), "{out}");
    let out = run(&[], &[&hostile], 1);
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    assert!(out.contains(r"\u{1b}[31mred\u{0}"), "{out}");
}

/// The summary counts documents and findings apart, and `explain` takes a slug.
#[test]
fn the_summary_counts_documents_and_findings_apart_and_explain_takes_a_slug() {
    let out = run(&[], &[&daemonset(), &minimal()], 1);
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("2 document(s) checked: 2 denied (in 1 document)"), "{last}");
    let page = covenant().args(["explain", "unknown-field"]).assert().success().get_output().stdout.clone();
    assert!(String::from_utf8(page).unwrap().starts_with("# CVN-101 unknown-field"));
    let err = covenant().args(["explain", "unknwn-field"]).assert().code(2).get_output().stderr.clone();
    assert!(String::from_utf8(err).unwrap().contains("did you mean unknown-field?"));
}

/// A baseline does not depend on how a path is spelled: written with `check la`, it matches
/// `check ./la`, the absolute path, and a run from a subfolder; its file names are relative
/// to the baseline's own folder.
#[test]
fn a_baseline_matches_however_the_checked_path_is_spelled() {
    let dir = tempfile::tempdir().unwrap();
    let la = dir.path().join("la");
    std::fs::create_dir(&la).unwrap();
    std::fs::copy(daemonset(), la.join("app.yaml")).unwrap();
    let check = |cwd: &std::path::Path, args: &[&str]| {
        let out = covenant().current_dir(cwd).arg("check").args(args).output().unwrap();
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    assert_eq!(check(dir.path(), &["la", "--write-baseline", "baseline.json"]).0, 0);
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("baseline.json")).unwrap()).unwrap();
    assert_eq!(recorded["findings"][0]["file"], "la/app.yaml", "{recorded}");
    let absolute = la.display().to_string();
    for (cwd, path, baseline) in [
        (dir.path(), "./la", "baseline.json"),
        (dir.path(), absolute.as_str(), "baseline.json"),
        (la.as_path(), ".", "../baseline.json"),
        (la.as_path(), "app.yaml", "../baseline.json"),
    ] {
        let (code, out) = check(cwd, &[path, "--baseline", baseline]);
        assert_eq!(code, 0, "check {path} from {}: {out}", cwd.display());
        assert!(out.contains("0 denied"), "{out}");
    }
}

/// A judgement that needed cluster state the run did not have is never only a log line: the
/// summary counts it, and GitHub's workflow commands annotate it as a warning.
#[test]
fn what_was_not_checked_is_counted_and_annotated() {
    let apps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tour/apps");
    let gh = run(&["--output", "github"], &[&apps], 0);
    assert!(gh.contains("::warning title=covenant::") && gh.contains("CVN-406 not checked"), "{gh}");
    assert!(
        gh.trim_end().ends_with("judgement(s) not checked for want of cluster state (--context, --cluster)"),
        "{gh}"
    );
    let text = run(&[], &[&apps], 0);
    assert!(text.contains("; 2 judgement(s) not checked for want of cluster state"), "{text}");
}
