//! The command line, run as a user runs it: golden output for `check` (text and JSON), exit
//! codes, stdin, renamed commands, and the catalogue commands.

mod common;

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
        "rule", "slug", "severity", "action", "file", "document", "line", "column", "kind", "name",
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
    assert!(text.ends_with("0 denied, 6 warned, 0 audited\n"), "{text}");
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
    assert!(String::from_utf8(out).unwrap().contains("status: planned"));

    let out = covenant().args(["explain", "CVN-1001"]).assert().code(2).get_output().stderr.clone();
    let stderr = String::from_utf8(out).unwrap();
    assert!(stderr.contains("unknown rule id \"CVN-1001\"; did you mean CVN-101?"), "{stderr}");

    let out = covenant().args(["rules"]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("CVN-101  unknown-field"), "{text}");
    assert!(text.contains("48 live, 1 planned"), "{text}");

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
