//! Schemas loaded out of stored objects (a construct's parameters, a CRD's version schema),
//! kept so each is read once: what the consumer family and the definitions family share.

use std::hash::{BuildHasherDefault, Hash};
use std::sync::{Arc, Mutex, Weak};

use hashbrown::{Equivalent, HashMap};
use rustc_hash::FxHasher;
use serde_json::Value;

use crate::schema::Schema;

/// A schema as read out of its object: absent, loaded, or why it cannot be read.
pub type Read = Result<Option<Arc<Schema>>, String>;

/// How many loaded schemas the cache holds before it starts over.
const CAPACITY: usize = 1024;

/// What the engine's threads read once and keep: at most `CAP` entries (emptied when full),
/// each found by a borrowed form of its key (`Equivalent`), so a hit allocates nothing. The
/// lock is held only to find or to insert, never while a value is read.
#[derive(Debug)]
pub(crate) struct Kept<K, V, const CAP: usize>(Mutex<HashMap<K, V, BuildHasherDefault<FxHasher>>>);

impl<K, V, const CAP: usize> Default for Kept<K, V, CAP> {
    fn default() -> Self {
        Kept(Mutex::default())
    }
}

impl<K: Hash + Eq, V, const CAP: usize> Kept<K, V, CAP> {
    /// What `take` makes of the entry `key` finds, if there is one.
    pub(crate) fn find<Q: Hash + Equivalent<K> + ?Sized, R>(
        &self,
        key: &Q,
        take: impl FnOnce(&V) -> R,
    ) -> Option<R> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(key).map(take)
    }

    /// Keep `value` under `key`, emptying the map first when it is full.
    pub(crate) fn keep(&self, key: K, value: V) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= CAP {
            map.clear();
        }
        map.insert(key, value);
    }
}

/// The loaded schemas of stored objects, by the object and the part of it read.
/// An object of the cluster is known by (uid, resourceVersion): its resourceVersion changes
/// with every write, so an entry never goes stale. An object without them (read from a file,
/// the offline view) is known by the allocation that holds it: a stored object is never
/// changed in place, and the entry keeps a weak reference to it, so that allocation cannot
/// be reused for another object while the entry lasts. Bounded: emptied when full. A cache of
/// a pure function of its key, so the engine stays pure.
///
/// A key is looked up as the object's own strings spell it (`Borrowed`): a hit (every pin of
/// every review on the admission path) allocates nothing.
#[derive(Debug, Default)]
pub struct Loaded(Kept<Key, Entry, CAPACITY>);

/// A loaded schema, with the weak reference that keeps a held object's allocation reserved.
type Entry = (Option<Weak<Value>>, Read);

/// Who the object is, and which part of it was read.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Key {
    /// (uid, resourceVersion, part).
    Stored(String, String, String),
    /// (the object's address, part), held by the entry's weak reference.
    Held(usize, String),
}

/// A key as the object's strings spell it, before anything is allocated. Its variants and
/// fields are `Key`'s, in the same order, so the two hash alike.
#[derive(Hash)]
enum Borrowed<'a> {
    Stored(&'a str, &'a str, &'a str),
    Held(usize, &'a str),
}

impl Equivalent<Key> for Borrowed<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        match (self, key) {
            (Borrowed::Stored(u, v, p), Key::Stored(ku, kv, kp)) => u == ku && v == kv && p == kp,
            (Borrowed::Held(a, p), Key::Held(ka, kp)) => a == ka && p == kp,
            _ => false,
        }
    }
}

impl Borrowed<'_> {
    fn owned(&self) -> Key {
        match *self {
            Borrowed::Stored(u, v, p) => Key::Stored(u.to_string(), v.to_string(), p.to_string()),
            Borrowed::Held(a, p) => Key::Held(a, p.to_string()),
        }
    }
}

impl Loaded {
    /// The schema `part` names in `owner`, read by `load` the first time it is asked for.
    pub fn read(&self, owner: &Arc<Value>, part: &str, load: impl FnOnce(&Value) -> Read) -> Read {
        let metadata = owner.get("metadata");
        let id = |member: &str| metadata.and_then(|m| m.get(member)).and_then(Value::as_str);
        let key = match (id("uid"), id("resourceVersion")) {
            (Some(uid), Some(version)) => Borrowed::Stored(uid, version, part),
            _ => Borrowed::Held(Arc::as_ptr(owner) as usize, part),
        };
        if let Some(hit) = self.0.find(&key, |(_, hit)| hit.clone()) {
            return hit;
        }
        let loaded = load(owner);
        let held = matches!(key, Borrowed::Held(..)).then(|| Arc::downgrade(owner));
        self.0.keep(key.owned(), (held, loaded.clone()));
        loaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_is_loaded_once_per_object_and_part() {
        let loaded = Loaded::default();
        let stored = Arc::new(serde_json::json!({"metadata": {"uid": "u1", "resourceVersion": "7"}}));
        let held = Arc::new(serde_json::json!({"metadata": {"name": "from-a-file"}}));
        let calls = std::cell::Cell::new(0);
        let load = |_: &Value| {
            calls.set(calls.get() + 1);
            Ok(None)
        };
        for owner in [&stored, &held] {
            for _ in 0..3 {
                loaded.read(owner, "/spec/parameters", load).unwrap();
            }
        }
        // Found by the object's own strings: each (object, part) loaded once.
        assert_eq!(calls.get(), 2);
        loaded.read(&stored, "/spec/environmentConfigs", load).unwrap();
        let moved = Arc::new(serde_json::json!({"metadata": {"uid": "u1", "resourceVersion": "8"}}));
        loaded.read(&moved, "/spec/parameters", load).unwrap();
        assert_eq!(calls.get(), 4, "another part, another resourceVersion: loaded again");
    }
}
