//! The README's tour and the walkthroughs in `docs/`, run as written: every `$ covenant …` line
//! of their `console` blocks is run from the repository's root, and what it prints (stdout,
//! then stderr) must be what the page shows; a `$ echo $?` line after it shows its exit code.
//! The docs cannot drift from what the binary does, and every file they run on exists.

use std::path::Path;

/// One command of a console block, with the output and exit code the README shows.
struct Shown {
    line: usize,
    args: Vec<String>,
    output: String,
    code: Option<i32>,
}

fn tour(readme: &str) -> Vec<Shown> {
    let mut out: Vec<Shown> = Vec::new();
    let mut in_console = false;
    let mut echo = false;
    for (n, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_console = line == "```console";
            echo = false;
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            echo = command == "echo $?";
            if !echo {
                let args: Vec<String> = command.split_whitespace().map(str::to_string).collect();
                assert_eq!(args[0], "covenant", "README line {}: the tour runs covenant only", n + 1);
                out.push(Shown { line: n + 1, args: args[1..].to_vec(), output: String::new(), code: None });
            }
            continue;
        }
        let last = out.last_mut().expect("output before any command");
        if echo {
            last.code = Some(line.trim().parse().expect("an exit code after `echo $?`"));
        } else {
            last.output.push_str(line);
            last.output.push('\n');
        }
    }
    out
}

#[test]
fn the_readme_tour_and_the_docs_walkthroughs_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "md") {
            pages.push(path);
        }
    }
    let bless = std::env::var_os("COVENANT_BLESS").is_some();
    let mut ran = 0;
    for page in &pages {
        let name = page.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(page).unwrap();
        if bless {
            std::fs::write(page, blessed(&text, root)).unwrap();
            continue;
        }
        for s in tour(&text) {
            for arg in s.args.iter().filter(|a| a.starts_with("examples/") || a.starts_with("tests/")) {
                assert!(root.join(arg).exists(), "{name} line {}: {arg} does not exist", s.line);
            }
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
                .current_dir(root)
                .args(&s.args)
                .env_remove("COVENANT_CONFIG")
                .output()
                .unwrap();
            let printed =
                String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                printed,
                s.output,
                "{name} line {}: covenant {} prints otherwise",
                s.line,
                s.args.join(" ")
            );
            let code =
                s.code.unwrap_or_else(|| panic!("{name} line {}: no `$ echo $?` after the command", s.line));
            assert_eq!(out.status.code(), Some(code), "{name} line {}: exit code", s.line);
            ran += 1;
        }
        if name == "README.md" {
            assert!(ran >= 5, "the README's tour shows {ran} commands");
        }
    }
    assert!(bless || ran >= 10, "{ran} commands in the README and docs");
}

/// `text` with every console block's output and exit code as the binary now prints them
/// (`COVENANT_BLESS=1 cargo test --test integration readme::` rewrites the pages; review the
/// diff).
fn blessed(text: &str, root: &Path) -> String {
    let mut out = String::new();
    let mut in_console = false;
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_console = line == "```console";
            skipping = false;
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if in_console {
            if let Some(command) = line.strip_prefix("$ ").filter(|c| *c != "echo $?") {
                let args: Vec<&str> = command.split_whitespace().skip(1).collect();
                let run = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
                    .current_dir(root)
                    .args(&args)
                    .env_remove("COVENANT_CONFIG")
                    .output()
                    .unwrap();
                out.push_str(line);
                out.push('\n');
                out.push_str(&String::from_utf8_lossy(&run.stdout));
                out.push_str(&String::from_utf8_lossy(&run.stderr));
                out.push_str(&format!("$ echo $?\n{}\n", run.status.code().unwrap_or(-1)));
                skipping = true;
                continue;
            }
            if skipping {
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// What the README's set-up says `serve --dev` prints is what it prints: the three
/// addresses, and the curl commands naming files it wrote.
#[test]
fn the_readme_set_up_matches_what_serve_dev_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("cargo run --release -- serve --dev"));
    assert!(readme.contains("cargo test "));
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "cargo test"), ".ci/run runs the README's test command");
    for address in ["127.0.0.1:8443", "127.0.0.1:8080", "127.0.0.1:8081"] {
        assert!(readme.contains(address), "{address}");
    }
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for (flag, default) in [
        ("--listen", "127.0.0.1:8443"),
        ("--admin-listen", "127.0.0.1:8080"),
        ("--api-listen", "127.0.0.1:8081"),
    ] {
        assert!(help.contains(flag) && help.contains(default), "{flag} {default}:\n{help}");
    }
    assert!(readme.contains("denied-review.json") && readme.contains("/tmp/covenant-dev"));
}
