//! Files a kustomization reads as something other than a manifest. An overlay's patch is a
//! partial object (`spec.replicas` of a Deployment, nothing else), a JSON 6902 patch a list of
//! operations, a generator's file or a chart's values data: kustomize reads each, and none is
//! applied as it is written. Judged as manifests they would be refused for what they leave
//! out (`selector` missing from a Deployment), so `check` leaves them out of the documents it
//! judges and says so, naming the kustomization to build: what it builds is what the API
//! server receives, and `kustomize build DIR | covenant check -` judges that.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Input;
use crate::report::ReadByKustomize;

/// The names kustomize finds a folder's kustomization by (`Kustomization` is never walked).
const NAMES: [&str; 2] = ["kustomization.yaml", "kustomization.yml"];

/// The files the kustomizations among `inputs`, and in the folders of the files among them,
/// read as other than manifests, by their canonical path: a patch named alone is known by
/// the kustomization beside it.
fn read_by_kustomize(inputs: &[Input]) -> HashMap<PathBuf, (&'static str, String)> {
    let mut kustomizations: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for input in inputs {
        let Input::File(path) = input else { continue };
        let dir = path.parent().unwrap_or(Path::new(""));
        let beside = NAMES.iter().map(|n| dir.join(n)).filter(|k| k.is_file());
        for k in beside {
            if seen.insert(std::fs::canonicalize(&k).unwrap_or_else(|_| k.clone())) {
                kustomizations.push(k);
            }
        }
    }
    let mut read = HashMap::new();
    for path in &kustomizations {
        if crate::source::oversized(path).is_some() {
            continue;
        }
        // A kustomization that cannot be read (or is not YAML) is judged, and refused, as any
        // document.
        let Ok(text) = crate::source::read_text(path) else { continue };
        let dir = path.parent().unwrap_or(Path::new(""));
        let folder = if dir.as_os_str().is_empty() { ".".to_string() } else { dir.display().to_string() };
        let (docs, error) = crate::source::parse_stream(&text);
        if error.is_some() {
            continue;
        }
        // The kustomization itself is kustomize's (it may name no apiVersion or kind at all,
        // as kubebuilder's do).
        if let Ok(canonical) = std::fs::canonicalize(path) {
            read.entry(canonical).or_insert(("a kustomization", folder.clone()));
        }
        for doc in docs {
            for (role, file) in files_read(&doc.value) {
                if let Ok(canonical) = std::fs::canonicalize(dir.join(file)) {
                    read.entry(canonical).or_insert((role, folder.clone()));
                }
            }
        }
    }
    read
}

/// Take out of `inputs` the files the kustomizations among them read as other than manifests:
/// each, as the report says it.
pub fn take_read_by_kustomize(inputs: &mut Vec<Input>) -> Vec<ReadByKustomize> {
    let read = read_by_kustomize(inputs);
    if read.is_empty() {
        return Vec::new();
    }
    let mut taken = Vec::new();
    inputs.retain(|input| {
        let Input::File(path) = input else { return true };
        let Some((role, kustomization)) = std::fs::canonicalize(path).ok().and_then(|c| read.get(&c)) else {
            return true;
        };
        let file = path.display().to_string();
        taken.push(ReadByKustomize { file, role, kustomization: kustomization.clone() });
        false
    });
    taken
}

/// The files a kustomization names that it reads as other than manifests, each with what for.
fn files_read(k: &Value) -> Vec<(&'static str, &str)> {
    let list = |key: &str| k.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    fn path(v: &Value) -> Option<&str> {
        v.get("path").and_then(Value::as_str)
    }
    let mut out = Vec::new();
    for key in ["patches", "patchesJson6902"] {
        out.extend(list(key).iter().filter_map(path).map(|p| ("a patch", p)));
    }
    // An entry is a file's path, or an inline patch (a YAML text of several lines).
    let strategic = list("patchesStrategicMerge").iter().filter_map(Value::as_str);
    out.extend(strategic.filter(|p| !p.contains('\n')).map(|p| ("a patch", p)));
    out.extend(list("replacements").iter().filter_map(path).map(|p| ("replacements", p)));
    for key in ["configMapGenerator", "secretGenerator"] {
        for generator in list(key) {
            let many = ["files", "envs"].into_iter().filter_map(|k| generator.get(k)?.as_array()).flatten();
            let files = many.chain(generator.get("env")).filter_map(Value::as_str);
            // `key=path` names the key the file's text is kept under.
            out.extend(files.map(|f| ("a generator's input", f.split_once('=').map_or(f, |(_, p)| p))));
        }
    }
    // kustomize's own configuration: transformer configurations (kubebuilder's
    // `kustomizeconfig.yaml`), a schema for its merges, and plugin configurations.
    out.extend(
        list("configurations").iter().filter_map(Value::as_str).map(|f| ("kustomize's configuration", f)),
    );
    out.extend(k.get("openapi").and_then(path).map(|f| ("kustomize's configuration", f)));
    for key in ["transformers", "generators", "validators"] {
        let files = list(key).iter().filter_map(Value::as_str).filter(|f| !f.contains('\n'));
        out.extend(files.map(|f| ("a plugin's configuration", f)));
    }
    for chart in list("helmCharts") {
        let more = chart.get("additionalValuesFiles").and_then(Value::as_array).into_iter().flatten();
        let values = chart.get("valuesFile").into_iter().chain(more).filter_map(Value::as_str);
        out.extend(values.map(|f| ("Helm values", f)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every field kustomize reads a file from that is not a resource, and no resource.
    #[test]
    fn the_files_a_kustomization_reads_that_are_not_manifests() {
        let k = json!({
            "resources": ["../../base", "extra.yaml"],
            "components": ["../../components/tls"],
            "patches": [{"path": "replicas.yaml"}, {"patch": "- op: add", "target": {"kind": "Deployment"}}],
            "patchesStrategicMerge": ["memory.yaml", "apiVersion: v1\nkind: ConfigMap\n"],
            "patchesJson6902": [{"target": {"kind": "Ingress"}, "path": "ingress-ops.yaml"}],
            "replacements": [{"path": "replace.yaml"}],
            "configMapGenerator": [{"name": "c", "files": ["app.yaml", "conf=settings.json"], "envs": ["a.env"]}],
            "secretGenerator": [{"name": "s", "env": "s.env"}],
            "helmCharts": [{"name": "x", "valuesFile": "values.yaml", "additionalValuesFiles": ["prod.yaml"]}],
            "configurations": ["kustomizeconfig.yaml"],
            "openapi": {"path": "schema.json"},
            "transformers": ["labels.yaml", "apiVersion: builtin\nkind: LabelTransformer\n"],
        });
        let files: Vec<&str> = files_read(&k).into_iter().map(|(_, f)| f).collect();
        assert_eq!(
            files,
            [
                "replicas.yaml",
                "ingress-ops.yaml",
                "memory.yaml",
                "replace.yaml",
                "app.yaml",
                "settings.json",
                "a.env",
                "s.env",
                "kustomizeconfig.yaml",
                "schema.json",
                "labels.yaml",
                "values.yaml",
                "prod.yaml"
            ]
        );
        assert!(files_read(&json!({"resources": ["a.yaml"]})).is_empty());
        assert!(files_read(&json!("not a mapping")).is_empty());
    }
}
