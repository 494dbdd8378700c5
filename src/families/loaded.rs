//! Schemas loaded out of stored objects (a construct's parameters, a CRD's version schema),
//! kept so each is read once: what the consumer family and the definitions family share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use crate::pointer::At;
use crate::schema::Schema;

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
#[derive(Debug, Default)]
pub struct Loaded(Mutex<HashMap<Key, Entry>>);

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

impl Loaded {
    /// The schema `part` names in `owner`, read by `load` the first time it is asked for.
    pub fn read(&self, owner: &Arc<Value>, part: &str, load: impl FnOnce(&Value) -> Read) -> Read {
        let id = |p: &str| owner.at(p).and_then(Value::as_str);
        let (key, held) = match (id("/metadata/uid"), id("/metadata/resourceVersion")) {
            (Some(uid), Some(version)) => {
                (Key::Stored(uid.to_string(), version.to_string(), part.to_string()), None)
            }
            _ => (Key::Held(Arc::as_ptr(owner) as usize, part.to_string()), Some(Arc::downgrade(owner))),
        };
        if let Some((_, hit)) = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return hit.clone();
        }
        let loaded = load(owner);
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(key, (held, loaded.clone()));
        loaded
    }
}
