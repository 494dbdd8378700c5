//! RFC 6901 JSON pointers and the readable paths that go beside them in messages.

/// Looking a JSON pointer up in a value, as `Value::pointer` does, without the two strings
/// `Value::pointer` allocates for every token to undo escapes: a pointer without `~` has
/// none, and the families look up fixed pointers (`/metadata/name`) on every review.
pub trait At {
    /// The value `pointer` names, if any (`""` is the whole value).
    fn at(&self, pointer: &str) -> Option<&serde_json::Value>;
}

impl At for serde_json::Value {
    fn at(&self, pointer: &str) -> Option<&serde_json::Value> {
        use serde_json::Value;
        if pointer.is_empty() || pointer.contains('~') {
            return self.pointer(pointer);
        }
        pointer.strip_prefix('/')?.split('/').try_fold(self, |v, token| match v {
            Value::Object(members) => members.get(token),
            Value::Array(items) => index(token).and_then(|i| items.get(i)),
            _ => None,
        })
    }
}

/// A list index as RFC 6901 spells it: digits, no sign, no leading zero.
fn index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// Escape one pointer token (`~` → `~0`, `/` → `~1`).
pub fn escape(token: &str) -> String {
    if !token.contains(['~', '/']) {
        return token.to_string();
    }
    token.replace('~', "~0").replace('/', "~1")
}

/// Undo `escape` (`~1` → `/`, then `~0` → `~`).
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// A location inside a value, kept both as a pointer (`/spec/env/0/name`) and as the path a
/// person reads (`spec.env[0].name`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// RFC 6901 pointer.
    pub pointer: String,
    /// Dotted path with `[i]` indices.
    pub path: String,
}

impl Location {
    /// A location under `base` (pointer and path of the node the value sits at).
    pub fn new(pointer: impl Into<String>, path: impl Into<String>) -> Location {
        Location { pointer: pointer.into(), path: path.into() }
    }

    /// The member `key` of this location.
    pub fn key(&self, key: &str) -> Location {
        let path = if self.path.is_empty() { key.to_string() } else { format!("{}.{key}", self.path) };
        Location { pointer: format!("{}/{}", self.pointer, escape(key)), path }
    }

    /// The item `index` of this location.
    pub fn index(&self, index: usize) -> Location {
        Location { pointer: format!("{}/{index}", self.pointer), path: format!("{}[{index}]", self.path) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_finds_what_value_pointer_finds() {
        let v = serde_json::json!({"a": {"b/c": [1, {"d~e": 2}], "": {"x": 3}}, "l": [[0, 1]], "0": 4});
        for p in [
            "",
            "/a",
            "/a/b~1c",
            "/a/b~1c/1/d~0e",
            "/a/b~1c/0",
            "/a/b~1c/01",
            "/a/b~1c/+1",
            "/a/b~1c/9",
            "/a/",
            "/a//x",
            "/l/0/1",
            "/l/0/-1",
            "/0",
            "/a/b",
            "a",
            "/l/x",
            "/a/b~1c/1/d~0e/z",
        ] {
            assert_eq!(v.at(p), v.pointer(p), "{p}");
        }
    }

    #[test]
    fn locations_build_pointer_and_path_together() {
        let l = Location::new("/spec", "spec").key("env").index(0).key("a/b");
        assert_eq!(l.pointer, "/spec/env/0/a~1b");
        assert_eq!(l.path, "spec.env[0].a/b");
        assert_eq!(Location::default().key("x").path, "x");
        assert_eq!(unescape(&escape("a~/b")), "a~/b");
    }
}
