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

/// A consumer's version pin: a range whose length is the whole policy (seed 001). `"2"`
/// accepts any 2.x.y, `"2.0"` any 2.0.x, `"2.0.1"` only itself; a version with a
/// pre-release or build suffix is matched exactly and never ranged over; empty floats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pin {
    /// No version: the object labelled default, else the one named like the logical name.
    Floating,
    /// `"2"`: any 2.x.y.
    Major(u64),
    /// `"2.0"`: any 2.0.x.
    Minor(u64, u64),
    /// `"2.0.1"` (or with a suffix): exactly that version.
    Exact(semver::Version),
}

/// A pin that is not one.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("pin \"{pin}\" is not a version: {reason}")]
pub struct PinError {
    /// The pin as written.
    pub pin: String,
    /// Why.
    pub reason: String,
}

impl Pin {
    /// Parse a pin as a consumer writes it.
    pub fn parse(s: &str) -> Result<Pin, PinError> {
        let err = |reason: &str| PinError { pin: s.to_string(), reason: reason.to_string() };
        let t = s.trim();
        if t.is_empty() {
            return Ok(Pin::Floating);
        }
        if t.contains(['-', '+']) {
            return semver::Version::parse(t).map(Pin::Exact).map_err(|e| err(&e.to_string()));
        }
        let parts: Vec<&str> = t.split('.').collect();
        let number = |p: &str| -> Result<u64, PinError> {
            if p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) || (p.len() > 1 && p.starts_with('0')) {
                return Err(err("each part is a number without leading zeros (\"2\", \"2.0\", \"2.0.1\")"));
            }
            p.parse().map_err(|_| err("a part is out of range"))
        };
        match parts.as_slice() {
            [major] => Ok(Pin::Major(number(major)?)),
            [major, minor] => Ok(Pin::Minor(number(major)?, number(minor)?)),
            [_, _, _] => semver::Version::parse(t).map(Pin::Exact).map_err(|e| err(&e.to_string())),
            _ => Err(err("a pin has one, two or three parts")),
        }
    }

    /// Whether a published version satisfies the pin. A pre-release or build version is only
    /// ever matched exactly.
    pub fn satisfies(&self, v: &semver::Version) -> bool {
        let plain = v.pre.is_empty() && v.build.is_empty();
        match self {
            Pin::Floating => true,
            Pin::Major(m) => plain && v.major == *m,
            Pin::Minor(m, n) => plain && v.major == *m && v.minor == *n,
            Pin::Exact(e) => e == v && e.build == v.build,
        }
    }
}

/// One published object of a logical construct name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    /// The object's name (`ruby-service-v2`).
    pub object: String,
    /// Its `openchoreo.dev/version` label; `None` for an object published before the scheme.
    pub version: Option<semver::Version>,
    /// Whether it carries `openchoreo.dev/default: "true"`.
    pub default: bool,
}

/// Why a pin resolves to nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No published version satisfies the pin.
    #[error("no version satisfying \"{pin}\" (published: {published})")]
    Unsatisfied {
        /// The pin.
        pin: String,
        /// Every published object and version, `name=version`.
        published: String,
    },
    /// Two objects carry the same full version: refuse rather than pick.
    #[error("{a} and {b} both carry version {version}; refusing to pick one")]
    Duplicate {
        /// The version.
        version: String,
        /// One object.
        a: String,
        /// The other.
        b: String,
    },
    /// More than one object is labelled default.
    #[error("{0} objects are labelled openchoreo.dev/default")]
    DefaultNotUnique(usize),
}

/// `name=version, …` for messages, newest first.
pub fn published_list(published: &[Published]) -> String {
    let mut items: Vec<&Published> = published.iter().collect();
    items.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.object.cmp(&b.object)));
    items
        .iter()
        .map(|p| match &p.version {
            Some(v) => format!("{}={v}", p.object),
            None => format!("{}=(unversioned)", p.object),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Resolve a pin among the published objects of one logical name: the newest satisfying
/// version wins; an empty pin floats to the object labelled default, falling back to the
/// object named like the logical name (the migration path for objects published before the
/// scheme). Two objects at one full version is an error.
pub fn resolve<'p>(
    pin: &Pin,
    logical: &str,
    published: &'p [Published],
) -> Result<&'p Published, ResolveError> {
    if *pin == Pin::Floating {
        let defaults: Vec<&Published> = published.iter().filter(|p| p.default).collect();
        return match defaults.as_slice() {
            [one] => Ok(one),
            [] => published.iter().find(|p| p.object == logical).ok_or_else(|| ResolveError::Unsatisfied {
                pin: String::new(),
                published: published_list(published),
            }),
            many => Err(ResolveError::DefaultNotUnique(many.len())),
        };
    }
    let mut best: Option<&Published> = None;
    for p in published {
        let Some(v) = &p.version else { continue };
        if !pin.satisfies(v) {
            continue;
        }
        if let Some(b) = best {
            if b.version.as_ref() == Some(v) {
                return Err(ResolveError::Duplicate {
                    version: v.to_string(),
                    a: b.object.clone(),
                    b: p.object.clone(),
                });
            }
        }
        if best.is_none_or(|b| b.version.as_ref() < Some(v)) {
            best = Some(p);
        }
    }
    best.ok_or_else(|| ResolveError::Unsatisfied {
        pin: match pin {
            Pin::Major(m) => m.to_string(),
            Pin::Minor(m, n) => format!("{m}.{n}"),
            Pin::Exact(v) => v.to_string(),
            Pin::Floating => String::new(),
        },
        published: published_list(published),
    })
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

    fn ruby(extra: &[(&str, &str, bool)]) -> Vec<Published> {
        let mut out = vec![
            Published { object: "ruby-service-v1".into(), version: Some(v("1.1.0")), default: true },
            Published { object: "ruby-service-v2".into(), version: Some(v("2.0.0")), default: false },
        ];
        for (o, ver, d) in extra {
            out.push(Published { object: o.to_string(), version: Some(v(ver)), default: *d });
        }
        out
    }

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap()
    }

    /// The case table, from seed 001's own text.
    #[test]
    fn pins_resolve_exactly_as_the_seed_states() {
        let published = ruby(&[]);
        let resolved = |pin: &str| {
            resolve(&Pin::parse(pin).unwrap(), "ruby-service", &published).map(|p| p.object.clone())
        };
        // "1", "1.1" and "1.1.0" all resolved to ruby-service 1.1.0.
        for pin in ["1", "1.1", "1.1.0"] {
            assert_eq!(resolved(pin).as_deref(), Ok("ruby-service-v1"), "{pin}");
        }
        // "2" resolved to the 2.0.0 object.
        assert_eq!(resolved("2").as_deref(), Ok("ruby-service-v2"));
        // "1.0" was refused, because 1.1.0 does not satisfy it.
        assert!(matches!(resolved("1.0"), Err(ResolveError::Unsatisfied { .. })));
        // "9" is refused naming what is published.
        let err = resolved("9").unwrap_err().to_string();
        assert_eq!(
            err,
            "no version satisfying \"9\" (published: ruby-service-v2=2.0.0, ruby-service-v1=1.1.0)"
        );
        // Empty floats to the default.
        assert_eq!(resolved("").as_deref(), Ok("ruby-service-v1"));
        // "2" must not accept 20.0.0.
        let with_20 = ruby(&[("ruby-service-v20", "20.0.0", false)]);
        assert_eq!(
            resolve(&Pin::parse("2").unwrap(), "ruby-service", &with_20).unwrap().object,
            "ruby-service-v2"
        );
        // The newest satisfying version wins.
        let newer = ruby(&[("ruby-service-v1b", "1.2.3", false)]);
        assert_eq!(
            resolve(&Pin::parse("1").unwrap(), "ruby-service", &newer).unwrap().object,
            "ruby-service-v1b"
        );
        // A pre-release is matched exactly and never ranged over.
        let rc = ruby(&[("ruby-service-v3", "3.0.0-rc1", false)]);
        assert!(resolve(&Pin::parse("3").unwrap(), "ruby-service", &rc).is_err());
        assert_eq!(
            resolve(&Pin::parse("3.0.0-rc1").unwrap(), "ruby-service", &rc).unwrap().object,
            "ruby-service-v3"
        );
        assert!(!Pin::parse("2").unwrap().satisfies(&v("2.1.0-rc1")));
        // Two objects at one full version: refuse to pick.
        let dup = ruby(&[("ruby-service-copy", "2.0.0", false)]);
        assert!(matches!(
            resolve(&Pin::parse("2").unwrap(), "ruby-service", &dup),
            Err(ResolveError::Duplicate { .. })
        ));
        // Two at different versions both satisfying a range is what a range is for.
        assert!(resolve(&Pin::parse("1").unwrap(), "ruby-service", &newer).is_ok());
        // Floating with no default label falls back to the object named like the logical name.
        let legacy = vec![Published { object: "ruby-service".into(), version: None, default: false }];
        assert_eq!(resolve(&Pin::Floating, "ruby-service", &legacy).unwrap().object, "ruby-service");
        // Publishing with DEFAULT=false moves no unpinned consumer.
        let published_v3 = ruby(&[("ruby-service-v3", "3.0.0", false)]);
        assert_eq!(resolve(&Pin::Floating, "ruby-service", &published_v3).unwrap().object, "ruby-service-v1");
        // Malformed pins.
        for bad in ["v2", "2.x", "02", "1.2.3.4", "two"] {
            assert!(Pin::parse(bad).is_err(), "{bad}");
        }
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
