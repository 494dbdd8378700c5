//! Cluster state as the engine sees it: the `ClusterView` trait, and the offline view built
//! from files that `covenant check --context` and the tests use. The engine never talks to
//! an API server itself; a rule that needs state asks the view, within the subject's budget.

pub mod events;
pub mod lease;
pub mod live;
pub mod reports;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::pointer::At;
use crate::source::parse_stream;
use crate::subject::list_items;

/// A lookup that could not be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The budget ran out before the state was available.
    #[error("lookup of {resource} did not finish within {budget:?}")]
    Timeout {
        /// What was looked up.
        resource: String,
        /// The budget it had.
        budget: Duration,
    },
    /// The API server refused the request: covenant's ServiceAccount may not do it.
    #[error("covenant may not {verb} {resource}: {reason}")]
    Forbidden {
        /// What was looked up (`widgets.example.com`).
        resource: String,
        /// The verb refused (`list`).
        verb: String,
        /// What the API server said.
        reason: String,
    },
    /// There is no cluster state at all (`--offline`, `check` without `--context`): the rules
    /// that need it stand as they are, and nothing is looked up.
    #[error("no cluster state for {resource} (offline; give --context DIR)")]
    Offline {
        /// What was looked up.
        resource: String,
    },
    /// The state is not available now (no connection, a cache not synced yet, a watch
    /// relisting after an error): the failure policy decides (CVN-901).
    #[error("lookup of {resource} is unavailable: {reason}")]
    Unavailable {
        /// What was looked up.
        resource: String,
        /// Why.
        reason: String,
    },
}

/// A way to find objects by a key computed from each (client-go's indexers): the logical
/// name a construct publishes under, the name of an object. A view that holds a kind keeps
/// the kind's index and rebuilds it only when the kind changes, so a lookup costs what it
/// finds, not what the kind holds.
#[derive(Clone, Copy)]
pub struct Index {
    /// Unique among indexes: what a view keeps the index under.
    pub name: &'static str,
    /// The keys an object is filed under (none: it is not found through this index).
    pub keys: fn(&Value) -> Vec<String>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Index").field(&self.name).finish()
    }
}

/// An index built: the objects under each key.
pub type Filed = std::collections::HashMap<String, Vec<Arc<Value>>>;

impl Index {
    /// The index of `objects`.
    pub fn build<'a>(&self, objects: impl IntoIterator<Item = &'a Arc<Value>>) -> Filed {
        let mut filed = Filed::new();
        for o in objects {
            for key in (self.keys)(o) {
                filed.entry(key).or_default().push(o.clone());
            }
        }
        filed
    }

    /// Whether `index` files `object` under `key`.
    pub fn files(&self, object: &Value, key: &str) -> bool {
        (self.keys)(object).iter().any(|k| k == key)
    }

    /// What of `objects` it files under `key`: a lookup where no index is kept.
    pub fn keep(&self, mut objects: Vec<Arc<Value>>, key: &str) -> Vec<Arc<Value>> {
        objects.retain(|o| self.files(o, key));
        objects
    }
}

/// The objects filed under `key`, in `namespace` or all.
fn filed_under(filed: &Filed, key: &str, namespace: Option<&str>) -> Vec<Arc<Value>> {
    filed
        .get(key)
        .into_iter()
        .flatten()
        .filter(|o| namespace.is_none() || o.at("/metadata/namespace").and_then(Value::as_str) == namespace)
        .cloned()
        .collect()
}

/// Objects by name: `namespace/name`, or `/name` for a cluster-scoped object (the key
/// `object_key` gives).
pub const BY_NAME: Index = Index { name: "name", keys: |o| vec![object_key_of(o)] };

/// Read access to the objects of a cluster.
pub trait ClusterView: Send + Sync {
    /// The objects of one group and kind, in one namespace or all.
    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error>;

    /// The objects of one group and kind, in one namespace or all, that `index` files under
    /// `key`. A view that holds the kind answers from the kind's index; the default filters
    /// `list`.
    fn lookup(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        index: &Index,
        key: &str,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        Ok(index.keep(self.list(group, kind, namespace, budget)?, key))
    }

    /// Whether the view has what it needs to answer (caches listed); readiness waits on it.
    fn synced(&self) -> bool {
        true
    }

    /// Whether `list` of this kind answers from what the view holds, without waiting on the
    /// cluster (a watched kind's cache; a directory read at start): what a lookup costs, for
    /// `Engine::evaluate_without_waiting`. A view that does not say may wait.
    fn answers_without_waiting(&self, _group: &str, _kind: &str) -> bool {
        false
    }

    /// Objects held per cached resource, for `covenant_cache_objects`.
    fn cache_sizes(&self) -> Vec<(String, usize)> {
        Vec::new()
    }

    /// Whether each watched resource's watch is up, for `covenant_watch_up`.
    fn watch_health(&self) -> Vec<(String, bool)> {
        Vec::new()
    }

    /// One page of the objects of a kind in every namespace, for walks that must stay
    /// bounded (the background audit): at most `limit` objects after the page `after` ended
    /// (`None`: the first page). The default pages through `list` in (namespace, name)
    /// order, so objects that come or go between pages neither repeat nor shift the rest.
    fn page(
        &self,
        group: &str,
        kind: &str,
        after: Option<&str>,
        limit: usize,
        budget: Option<Duration>,
    ) -> Result<Page, Error> {
        let (objects, next) = slice(self.list(group, kind, None, budget)?, object_key, after, limit);
        Ok(Page { objects, next })
    }
}

/// A page of objects and where the next one starts.
#[derive(Debug, Default)]
pub struct Page {
    /// The objects on this page.
    pub objects: Vec<Arc<Value>>,
    /// What to pass as `after` for the next page; `None` on the last.
    pub next: Option<String>,
}

/// The part of `items` (in any order) whose keys follow `after`, at most `limit` long, in
/// key order; and the key to continue after, when more follow.
pub fn slice<T>(
    items: Vec<T>,
    key: impl Fn(&T) -> String,
    after: Option<&str>,
    limit: usize,
) -> (Vec<T>, Option<String>) {
    let mut keyed: Vec<(String, T)> = items
        .into_iter()
        .map(|i| (key(&i), i))
        .filter(|(k, _)| after.is_none_or(|a| k.as_str() > a))
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let limit = limit.max(1);
    let more = keyed.len() > limit;
    keyed.truncate(limit);
    let next = if more { keyed.last().map(|(k, _)| k.clone()) } else { None };
    (keyed.into_iter().map(|(_, i)| i).collect(), next)
}

/// The (namespace, name) key objects are paged by: `namespace/name`, or `/name` for a
/// cluster-scoped object, so every cluster-scoped object sorts first.
pub fn object_key(o: &Arc<Value>) -> String {
    object_key_of(o)
}

fn object_key_of(o: &Value) -> String {
    let s = |p: &str| o.at(p).and_then(Value::as_str).unwrap_or_default();
    format!("{}/{}", s("/metadata/namespace"), s("/metadata/name"))
}

/// No cluster state at all (`--offline`, or `check` without `--context`): every lookup is
/// unavailable, so a rule that needs state says it could not look, never that it found
/// nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptyCluster;

impl ClusterView for EmptyCluster {
    /// Held in memory: every kind answers at once.
    fn answers_without_waiting(&self, _group: &str, _kind: &str) -> bool {
        true
    }

    fn list(
        &self,
        group: &str,
        kind: &str,
        _: Option<&str>,
        _: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        Err(Error::Offline { resource: format!("{kind}.{group}") })
    }
}

/// Objects read from files: the cluster `covenant check --context DIR` describes.
#[derive(Clone, Debug, Default)]
pub struct OfflineCluster {
    /// The objects by API group and kind, in the order they were read: a lookup reads only
    /// its kind's objects, however many the context holds.
    by_kind: BTreeMap<String, BTreeMap<String, Vec<Arc<Value>>>>,
    /// The indexes asked for, by (group, kind, index), built at first use (the objects never
    /// change).
    indexes: Arc<std::sync::Mutex<OfflineIndexes>>,
}

/// The offline view's indexes by (group, kind, index name).
type OfflineIndexes = BTreeMap<(String, String, &'static str), Arc<Filed>>;

/// Files that could not be read into an offline cluster.
#[derive(Debug, thiserror::Error)]
#[error("cannot read context {path}: {reason}")]
pub struct LoadError {
    /// The file.
    pub path: String,
    /// What was wrong.
    pub reason: String,
}

impl OfflineCluster {
    /// An offline cluster holding these objects.
    pub fn from_objects(objects: impl IntoIterator<Item = Value>) -> OfflineCluster {
        OfflineCluster::holding(objects.into_iter().map(Arc::new).collect())
    }

    fn holding(objects: Vec<Arc<Value>>) -> OfflineCluster {
        let mut by_kind: BTreeMap<String, BTreeMap<String, Vec<Arc<Value>>>> = BTreeMap::new();
        for o in objects {
            let group = crate::subject::group_of(&o).unwrap_or("");
            let kind = o.get("kind").and_then(Value::as_str).unwrap_or("");
            by_kind.entry(group.to_string()).or_default().entry(kind.to_string()).or_default().push(o);
        }
        OfflineCluster { by_kind, indexes: Arc::default() }
    }

    /// Every object of the YAML or JSON documents under `dir` (recursively). A list
    /// (`kubectl get … -o yaml` writes `kind: List`; the API answers `kind: DeploymentList`) is
    /// read as its items. What cannot be a cluster's object is an error naming where it is,
    /// never left out: a document without an apiVersion, a kind or a name would stand for
    /// nothing a lookup finds, and a context of no objects at all would answer "none" where
    /// covenant should say it could not look.
    pub fn load_dir(dir: &Path) -> Result<OfflineCluster, LoadError> {
        let mut objects = Vec::new();
        let walked = crate::source::walk(dir, &globset::GlobSet::empty())
            .map_err(|e| LoadError { path: dir.display().to_string(), reason: e.to_string() })?;
        for path in &walked.files {
            let err = |reason: String| LoadError { path: path.display().to_string(), reason };
            let text = crate::source::read_text(path).map_err(|e| err(e.to_string()))?;
            let (docs, syntax) = parse_stream(&text);
            if let Some(e) = syntax {
                return Err(err(e.to_string()));
            }
            for doc in docs {
                if let Some(d) = doc.duplicates.first() {
                    return Err(err(format!(
                        "{} at line {}, column {}",
                        d.refusal(),
                        d.again.line,
                        d.again.column
                    )));
                }
                let (index, line) = (doc.index, doc.positions.start().line);
                let read = objects_of(doc.value)
                    .map_err(|(at, what)| err(format!("document {index} (line {line}){at}: {what}")))?;
                objects.extend(read.into_iter().map(Arc::new));
            }
        }
        if objects.is_empty() {
            // What the walk left out may be why (`PUBLISHED.YAML`).
            let why = walked.left_out("; ");
            return Err(LoadError {
                path: dir.display().to_string(),
                reason: format!(
                    "holds no objects{why}; leave --context out to check without cluster state (what needs \
                     it is then said to be unchecked)"
                ),
            });
        }
        Ok(OfflineCluster::holding(objects))
    }
}

/// The cluster objects a context document stands for: itself, or a list's items
/// (`list_items`). Else where in the document the problem is, and what it is.
fn objects_of(mut doc: Value) -> Result<Vec<Value>, (String, String)> {
    let Some(items) = list_items(&mut doc) else {
        is_object(&doc).map_err(|what| (String::new(), what))?;
        return Ok(vec![doc]);
    };
    let items = items.map_err(|(at, what)| (format!(" {at}"), what))?;
    for (at, item) in &items {
        is_object(item).map_err(|what| (format!(" {at}"), what))?;
    }
    Ok(items.into_iter().map(|(_, item)| item).collect())
}

/// Whether a value can be a cluster's object: a mapping naming its apiVersion, kind and
/// metadata.name.
fn is_object(v: &Value) -> Result<(), String> {
    if !v.is_object() {
        return Err(format!(
            "expected a Kubernetes object (a mapping), found {}",
            crate::strict::describe(v)
        ));
    }
    for (pointer, what) in
        [("/apiVersion", "apiVersion"), ("/kind", "kind"), ("/metadata/name", "metadata.name")]
    {
        if v.at(pointer).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(format!(
                "it names no {what}; expected a Kubernetes object naming its apiVersion, kind and metadata.name"
            ));
        }
    }
    Ok(())
}

/// Reading files takes next to no time, but a budget of nothing cannot be met: the offline
/// view honours it like the live one would, so the failure policy can be exercised without a
/// cluster.
fn unmeetable(group: &str, kind: &str, budget: Option<Duration>) -> Result<(), Error> {
    match budget {
        Some(Duration::ZERO) => {
            Err(Error::Timeout { resource: format!("{kind}.{group}"), budget: Duration::ZERO })
        }
        _ => Ok(()),
    }
}

impl ClusterView for OfflineCluster {
    /// Held in memory: every kind answers at once.
    fn answers_without_waiting(&self, _group: &str, _kind: &str) -> bool {
        true
    }

    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        unmeetable(group, kind, budget)?;
        let of_kind =
            self.by_kind.get(group).and_then(|kinds| kinds.get(kind)).map(Vec::as_slice).unwrap_or_default();
        let in_namespace = |o: &Value| {
            namespace.is_none() || o.at("/metadata/namespace").and_then(Value::as_str) == namespace
        };
        Ok(of_kind.iter().filter(|o| in_namespace(o)).cloned().collect())
    }

    fn lookup(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        index: &Index,
        key: &str,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        unmeetable(group, kind, budget)?;
        let Some(of_kind) = self.by_kind.get(group).and_then(|kinds| kinds.get(kind)) else {
            return Ok(Vec::new());
        };
        let filed = {
            let mut indexes = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
            indexes
                .entry((group.to_string(), kind.to_string(), index.name))
                .or_insert_with(|| Arc::new(index.build(of_kind)))
                .clone()
        };
        Ok(filed_under(&filed, key, namespace))
    }

    fn cache_sizes(&self) -> Vec<(String, usize)> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for (group, kinds) in &self.by_kind {
            for (kind, objects) in kinds {
                let resource = if group.is_empty() { kind.clone() } else { format!("{kind}.{group}") };
                *counts.entry(resource).or_default() += objects.len();
            }
        }
        counts.into_iter().collect()
    }
}

/// The cluster a checked tree describes: the objects of the followed kinds among the checked
/// files, as the cluster would hold them once the tree is applied, over another view
/// (`--context`, or no cluster state). A kind the tree holds objects of answers with them
/// (and the view's, the tree's copy winning where both hold one object); any other kind is
/// the view's to answer — without `--context` that is "not checked", never "none".
pub struct TreeCluster {
    tree: OfflineCluster,
    under: Arc<dyn ClusterView>,
}

impl TreeCluster {
    /// `objects` (the tree's) over `under`.
    pub fn over(objects: Vec<Value>, under: Arc<dyn ClusterView>) -> TreeCluster {
        TreeCluster { tree: OfflineCluster::from_objects(objects), under }
    }

    /// The tree's cluster objects of the documents of one file's text: each object, or a
    /// list's items, that names an apiVersion, a kind and a name (what cannot be an object
    /// is judged by `check` itself, not taken as state).
    pub fn objects_in(text: &str, keep: impl Fn(&str, &str) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        for doc in parse_stream(text).0 {
            let Ok(objects) = objects_of(doc.value) else { continue };
            out.extend(objects.into_iter().filter(|o| {
                let group = crate::subject::group_of(o).unwrap_or("");
                keep(group, o.get("kind").and_then(Value::as_str).unwrap_or(""))
            }));
        }
        out
    }
}

impl ClusterView for TreeCluster {
    fn answers_without_waiting(&self, group: &str, kind: &str) -> bool {
        self.under.answers_without_waiting(group, kind)
    }

    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        let held = self.tree.by_kind.get(group).is_some_and(|kinds| kinds.contains_key(kind));
        if !held {
            return self.under.list(group, kind, namespace, budget);
        }
        let mut out = self.tree.list(group, kind, namespace, budget)?;
        match self.under.list(group, kind, namespace, budget) {
            Ok(more) => {
                let ours: std::collections::HashSet<String> = out.iter().map(object_key).collect();
                out.extend(more.into_iter().filter(|o| !ours.contains(&object_key(o))));
            }
            // Without cluster state the tree is all there is of this kind.
            Err(Error::Offline { .. }) => {}
            Err(e) => return Err(e),
        }
        Ok(out)
    }

    fn lookup(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        index: &Index,
        key: &str,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        let held = self.tree.by_kind.get(group).is_some_and(|kinds| kinds.contains_key(kind));
        if !held {
            return self.under.lookup(group, kind, namespace, index, key, budget);
        }
        let mut out = self.tree.lookup(group, kind, namespace, index, key, budget)?;
        match self.under.lookup(group, kind, namespace, index, key, budget) {
            Ok(more) => {
                // Every object the tree holds wins over the view's, whatever key it is under
                // now (a construct renamed in the tree is found under its new name only).
                let ours: std::collections::HashSet<String> =
                    self.tree.list(group, kind, namespace, budget)?.iter().map(object_key).collect();
                out.extend(more.into_iter().filter(|o| !ours.contains(&object_key(o))));
            }
            Err(Error::Offline { .. }) => {}
            Err(e) => return Err(e),
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An index finds what a filtered list finds, in a namespace or all; the tree's copy of
    /// an object wins over the view's even when it is filed under another key now.
    #[test]
    fn lookups_through_an_index_find_what_a_filtered_list_finds() {
        const BY_TEAM: Index = Index {
            name: "team",
            keys: |o| {
                o.at("/metadata/labels/team")
                    .and_then(Value::as_str)
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            },
        };
        let deployment = |ns: &str, name: &str, team: &str| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"namespace": ns, "name": name, "labels": {"team": team}}})
        };
        let view = OfflineCluster::from_objects([
            deployment("a", "web", "red"),
            deployment("b", "web", "red"),
            deployment("a", "db", "blue"),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "a", "name": "bare"}}),
        ]);
        let names = |found: Vec<Arc<Value>>| -> Vec<String> { found.iter().map(object_key).collect() };
        let lookup = |v: &dyn ClusterView, ns, index, key| {
            names(v.lookup("apps", "Deployment", ns, index, key, None).unwrap())
        };
        for (ns, key) in [(None, "red"), (Some("a"), "red"), (None, "blue"), (None, "green")] {
            let mut filtered = view.list("apps", "Deployment", ns, None).unwrap();
            filtered.retain(|o| BY_TEAM.files(o, key));
            assert_eq!(lookup(&view, ns, &BY_TEAM, key), names(filtered), "{ns:?} {key}");
        }
        assert_eq!(lookup(&view, None, &BY_NAME, "b/web"), ["b/web"]);
        assert!(lookup(&view, None, &BY_TEAM, "").is_empty(), "an object without a key is under none");
        assert!(matches!(
            view.lookup("apps", "Deployment", None, &BY_TEAM, "red", Some(Duration::ZERO)),
            Err(Error::Timeout { .. })
        ));
        // The checked tree moves a/web to the blue team: found there, no longer under red.
        let tree = TreeCluster::over(vec![deployment("a", "web", "blue")], Arc::new(view.clone()));
        assert_eq!(lookup(&tree, None, &BY_TEAM, "red"), ["b/web"]);
        assert_eq!(lookup(&tree, None, &BY_TEAM, "blue"), ["a/web", "a/db"]);
    }

    #[test]
    fn offline_cluster_lists_by_group_kind_and_namespace() {
        let c = OfflineCluster::from_objects([
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "a"}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "b"}}),
            json!({"apiVersion": "v1", "kind": "Pod"}),
            json!({"apiVersion": "example.com/v1", "kind": "Deployment", "metadata": {"namespace": "a"}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "c"}}),
        ]);
        let namespaces = |listed: Vec<Arc<Value>>| -> Vec<String> {
            listed.iter().map(|o| o["metadata"]["namespace"].as_str().unwrap_or("").to_string()).collect()
        };
        // Each kind's objects in the order they were read, no other group's.
        assert_eq!(namespaces(c.list("apps", "Deployment", None, None).unwrap()), ["a", "b", "c"]);
        assert_eq!(namespaces(c.list("apps", "Deployment", Some("a"), None).unwrap()), ["a"]);
        assert_eq!(namespaces(c.list("example.com", "Deployment", None, None).unwrap()), ["a"]);
        assert_eq!(c.list("", "Pod", None, None).unwrap().len(), 1);
        assert!(c.list("apps", "Pod", None, None).unwrap().is_empty());
        assert!(c.list("other.io", "Deployment", None, None).unwrap().is_empty());
        let sizes = [("Deployment.apps", 3), ("Deployment.example.com", 1), ("Pod", 1)];
        assert_eq!(c.cache_sizes(), sizes.map(|(r, n)| (r.to_string(), n)));
    }

    #[test]
    fn pages_walk_every_object_once_in_key_order() {
        let objects = (0..7).map(|i| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"namespace": format!("ns{}", i % 2), "name": format!("d{i}")}})
        });
        let c = OfflineCluster::from_objects(objects);
        let mut seen = Vec::new();
        let mut after = None;
        let mut pages = 0;
        loop {
            let page = c.page("apps", "Deployment", after.as_deref(), 3, None).unwrap();
            assert!(page.objects.len() <= 3);
            seen.extend(page.objects.iter().map(object_key));
            pages += 1;
            match page.next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        let mut sorted = seen.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(seen, sorted, "in key order, each once");
        assert_eq!(seen.len(), 7);
    }
}
