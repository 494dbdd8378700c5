//! Schemas loaded out of stored objects (a construct's parameters, a CRD's version schema),
//! kept so each is read once: what the consumer family and the definitions family share.

use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use crate::schema::Schema;
use rustc_hash::FxHashMap;

/// A schema as read out of its object: absent, loaded, or why it cannot be read.
pub type Read = Result<Option<Arc<Schema>>, String>;

/// How many loaded schemas the cache holds before it starts over.
const CAPACITY: usize = 1024;

/// The loaded schemas of stored objects, by the object and the part of it read.
/// An object of the cluster is known by (uid, resourceVersion): its resourceVersion changes
/// with every write, so an entry never goes stale. An object without them (read from a file,
/// the offline view) is known by the allocation that holds it: a stored object is never
/// changed in place, and the entry keeps a weak reference to it, so that allocation cannot
/// be reused for another object while the entry lasts. Bounded: emptied when full. A cache of
/// a pure function of its key, so the engine stays pure.
///
/// Entries are found by a hash of their key taken from the object's own strings, and the key
/// kept in the entry is compared with them: a hit (every pin of every review on the admission
/// path) allocates nothing. Two keys of one hash keep the later.
#[derive(Debug, Default)]
pub struct Loaded(Mutex<FxHashMap<u64, Entry>>);

/// A loaded schema: its key, the weak reference that keeps a held object's allocation
/// reserved, and what was read.
type Entry = (Key, Option<Weak<Value>>, Read);

/// Who the object is, and which part of it was read.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Key {
    /// (uid, resourceVersion, part).
    Stored(String, String, String),
    /// (the object's address, part), held by the entry's weak reference.
    Held(usize, String),
}

/// A key as the object's strings spell it, before anything is allocated.
#[derive(Hash)]
enum Borrowed<'a> {
    Stored(&'a str, &'a str, &'a str),
    Held(usize, &'a str),
}

impl Borrowed<'_> {
    fn hash(&self) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(self)
    }

    fn is(&self, key: &Key) -> bool {
        match (self, key) {
            (Borrowed::Stored(u, v, p), Key::Stored(ku, kv, kp)) => u == ku && v == kv && p == kp,
            (Borrowed::Held(a, p), Key::Held(ka, kp)) => a == ka && p == kp,
            _ => false,
        }
    }

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
        let hash = key.hash();
        if let Some((_, _, hit)) =
            self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&hash).filter(|(k, _, _)| key.is(k))
        {
            return hit.clone();
        }
        let loaded = load(owner);
        let held = matches!(key, Borrowed::Held(..)).then(|| Arc::downgrade(owner));
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(hash, (key.owned(), held, loaded.clone()));
        loaded
    }
}
