//! RFC 6901 JSON pointers and the readable paths that go beside them in messages.

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
    fn locations_build_pointer_and_path_together() {
        let l = Location::new("/spec", "spec").key("env").index(0).key("a/b");
        assert_eq!(l.pointer, "/spec/env/0/a~1b");
        assert_eq!(l.path, "spec.env[0].a/b");
        assert_eq!(Location::default().key("x").path, "x");
        assert_eq!(unescape(&escape("a~/b")), "a~/b");
    }
}
