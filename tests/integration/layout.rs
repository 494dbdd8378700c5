//! The house as it is drawn: covenant's top-level modules form layers. The pure parts (the
//! pointer, the source reader, the schema model, the rules, the config) sit below the engine
//! and the families, and those below the faces (the server, the CLI, the report). No module
//! reaches itself through what it imports, so a lower layer never depends on a higher one.
//! Test code is left out: a test may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every Rust file under `dir`, at any depth.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// Every top-level module and the top-level modules its code (tests aside) names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in rust_files(&src) {
        let relative = path.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
        let names = graph.entry(module.clone()).or_default();
        for (at, _) in code.match_indices("crate::") {
            let name: String =
                code[at + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
            if !name.is_empty() && name != module {
                names.insert(name);
            }
        }
    }
    graph
}

/// A path from `from` to `to` through the imports, if there is one (`to` may be `from`
/// itself: a circle).
fn path(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> Option<Vec<String>> {
    let mut paths = vec![vec![from.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = paths.pop() {
        let last = path.last().unwrap();
        for next in graph.get(last).into_iter().flatten() {
            let longer = [path.clone(), vec![next.clone()]].concat();
            if next == to {
                return Some(longer);
            }
            if seen.insert(next.clone()) {
                paths.push(longer);
            }
        }
    }
    None
}

#[test]
fn no_module_reaches_itself_through_its_imports() {
    let graph = imports();
    assert!(graph.len() > 20, "the walk found the modules: {:?}", graph.keys());
    assert!(graph["engine"].contains("families"), "the walk reads imports: {:?}", graph["engine"]);
    let circles: Vec<String> =
        graph.keys().filter_map(|m| path(&graph, m, m)).map(|c| c.join(" -> ")).collect();
    assert!(circles.is_empty(), "modules import each other in a circle:\n{}", circles.join("\n"));
}

#[test]
fn the_config_and_the_pure_parts_sit_below_the_engine_and_the_faces() {
    let graph = imports();
    for low in ["config", "pointer", "source", "schema", "rules", "openchoreo", "suggest"] {
        for high in ["engine", "families", "server", "cli", "report", "admission", "cluster"] {
            if let Some(found) = path(&graph, low, high) {
                panic!("{low} reaches {high}: {}", found.join(" -> "));
            }
        }
    }
}

/// The faces reach the domain through its doors — the engine, the contract, the upgrade
/// plans, the usage picture, check's driver — never a family's internals, so no face computes
/// a verdict or a count the others do not. The report renders what was found and judges
/// nothing: it names neither the engine, the families nor the cluster.
#[test]
fn the_faces_reach_no_family_and_the_report_only_renders() {
    let graph = imports();
    for face in ["server", "cli", "report"] {
        assert!(!graph[face].is_empty(), "the walk read {face}'s imports");
        assert!(!graph[face].contains("families"), "{face} imports a family's internals: {:?}", graph[face]);
    }
    for judge in ["engine", "families", "cluster", "check"] {
        assert!(!graph["report"].contains(judge), "the report imports {judge}: {:?}", graph["report"]);
    }
}

/// `rust-version` in Cargo.toml is true: no locked dependency needs a newer Rust than the
/// crate claims (kube 5, uuid and serde-saphyr need 1.89; 1.86 was claimed).
#[test]
fn the_claimed_rust_version_covers_every_locked_dependency() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--filter-platform",
            "x86_64-unknown-linux-gnu",
        ])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let version = |v: &str| -> [u64; 3] {
        let mut parts = v.split('.').map(|p| p.parse().unwrap_or(0));
        [parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0)]
    };
    let packages = meta["packages"].as_array().unwrap();
    let ours = packages.iter().find(|p| p["name"] == "covenant").unwrap();
    let claimed = version(ours["rust_version"].as_str().expect("Cargo.toml states rust-version"));
    let newer: Vec<String> = packages
        .iter()
        .filter_map(|p| Some((p["name"].as_str()?, p["version"].as_str()?, p["rust_version"].as_str()?)))
        .filter(|(_, _, rv)| version(rv) > claimed)
        .map(|(n, v, rv)| format!("{n} {v} needs {rv}"))
        .collect();
    assert!(newer.is_empty(), "rust-version {claimed:?} is below what dependencies need: {newer:?}");
}

/// No circle inside a folder either: the modules of one folder (`families/construct.rs`,
/// `families/consumer.rs`, …) reach each other through `super::` and the folder's own path
/// one way only (what two of them share lives in a third, as `families/pins.rs` does).
#[test]
fn no_circle_among_the_modules_of_one_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for folder in std::fs::read_dir(&src).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let modules: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in &modules {
            let text = std::fs::read_to_string(folder.join(format!("{m}.rs"))).unwrap();
            let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default().to_string();
            let names = graph.entry(m.clone()).or_default();
            for prefix in ["super::".to_string(), format!("crate::{name}::")] {
                for (at, _) in code.match_indices(&prefix) {
                    let next: String = code[at + prefix.len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                        .collect();
                    if next != *m && modules.contains(&next) {
                        names.insert(next);
                    }
                }
            }
        }
        let circles: Vec<String> = graph
            .keys()
            .filter_map(|m| path(&graph, m, m))
            .map(|c| format!("{name}/: {}", c.join(" -> ")))
            .collect();
        assert!(
            circles.is_empty(),
            "modules of one folder import each other in a circle:\n{}",
            circles.join("\n")
        );
        checked += graph.len();
    }
    assert!(checked > 20, "{checked} modules in folders");
}

/// Scheduling is the server's: the engine, the families, the subject and the cluster views say
/// what a judgement or a lookup costs (`Engine::cost`, `Family::bounded_by_subject`,
/// `ClusterView::answers_without_waiting`), never on which thread it runs. Only the server
/// (`server/schedule.rs`) decides where a review is judged.
#[test]
fn the_domain_says_what_a_judgement_costs_and_the_server_where_it_runs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files =
        vec![src.join("engine.rs"), src.join("families.rs"), src.join("subject.rs"), src.join("cluster.rs")];
    for folder in ["families", "subject"] {
        files.extend(rust_files(&src.join(folder)));
    }
    let words = ["spawn_blocking", "blocking pool", "connection's worker", "worker thread", "block_in_place"];
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for word in words {
            if text.contains(word) {
                found.push(format!("{}: {word}", file.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(files.len() > 15, "the walk found the domain's files: {}", files.len());
    assert!(found.is_empty(), "scheduling named in the domain:\n{}", found.join("\n"));
    let schedule = std::fs::read_to_string(src.join("server/schedule.rs")).unwrap();
    assert!(
        schedule.contains("engine.cost(") && schedule.contains("evaluate_without_waiting"),
        "the server decides"
    );
}

/// What a family reads in the pass that decodes a review comes back typed (`subject::Model`
/// holds a schema layout): no model is type-erased and taken back by a downcast in the domain.
#[test]
fn the_domain_takes_no_model_back_by_a_downcast() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("engine.rs"), src.join("families.rs"), src.join("subject.rs")];
    for folder in ["families", "subject", "admission"] {
        files.extend(rust_files(&src.join(folder)));
    }
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for word in ["dyn Any", "downcast"] {
            if text.contains(word) {
                found.push(format!("{}: {word}", file.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(files.len() > 15, "the walk found the domain's files: {}", files.len());
    assert!(found.is_empty(), "a type-erased model in the domain:\n{}", found.join("\n"));
}
