//! Version arithmetic: the MAJOR / MINOR / PATCH bump a change implies, and what a declared
//! version move amounts to. Severity is derived, never declared: the diff says what a change
//! implies, and a declared version is only ever compared with it.

use std::fmt;

/// How far a version must move for a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bump {
    /// No contract change (descriptions, examples, messages).
    Patch,
    /// Something added or loosened; every existing consumer is unaffected.
    Minor,
    /// Something removed or tightened; a consumer must change something.
    Major,
}

impl Bump {
    /// The spelling output uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            Bump::Patch => "PATCH",
            Bump::Minor => "MINOR",
            Bump::Major => "MAJOR",
        }
    }

    /// The bump a set of changes implies: the largest, or PATCH for none.
    pub fn implied(bumps: impl IntoIterator<Item = Bump>) -> Bump {
        bumps.into_iter().max().unwrap_or(Bump::Patch)
    }

    /// The bump between two semantic versions (`None` when they are equal or go backwards).
    pub fn between(old: &semver::Version, new: &semver::Version) -> Option<Bump> {
        if new <= old {
            return None;
        }
        Some(if new.major != old.major {
            Bump::Major
        } else if new.minor != old.minor {
            Bump::Minor
        } else {
            Bump::Patch
        })
    }
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_implied_bump_is_the_largest() {
        assert_eq!(Bump::implied([]), Bump::Patch);
        assert_eq!(Bump::implied([Bump::Minor, Bump::Patch]), Bump::Minor);
        assert_eq!(Bump::implied([Bump::Minor, Bump::Major, Bump::Patch]), Bump::Major);
    }

    #[test]
    fn the_declared_bump_between_versions() {
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert_eq!(Bump::between(&v("1.1.0"), &v("2.0.0")), Some(Bump::Major));
        assert_eq!(Bump::between(&v("1.1.0"), &v("1.2.0")), Some(Bump::Minor));
        assert_eq!(Bump::between(&v("1.1.0"), &v("1.1.1")), Some(Bump::Patch));
        assert_eq!(Bump::between(&v("1.1.0"), &v("1.1.0")), None);
    }
}
