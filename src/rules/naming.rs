//! The type-name covenant (seed 000, "Type-Name Reservation Covenant" and "Two Axes of a
//! Type, and the Naming Rule"), made checkable: every type declaration of every registry and
//! dialect given is held against all the others.
//!
//! - CVN-301: component, trait and policy names are one flat namespace. A name declared in
//!   two categories is refused, unless both declarations project the same API kind (then
//!   they mean the same thing, as the later launcher line's `ingress` component and trait do).
//! - CVN-302: a name a dialect reserves — with its whole `.v<N>` family — is taken by
//!   someone else only by upstreaming that feature (`upstreams: <dialect>`), and then the
//!   taker's schema must accept everything the dialect's does.
//! - CVN-303: the only dot in a name is the `.v<N>` marker with N ≥ 2; `.v1` is the bare name.
//! - CVN-304: a kind-named type takes its kind's name in lowercase; a vendor prefix only
//!   where the bare name is taken.
//! - CVN-305: no name is both terminal and lowerable.
//! - CVN-306: a dialect's shadowed type stays a compatible superset of the upstream type.
//!
//! Pure: registries in, findings out, each attributed to the declaration it is about.

use crate::registry::{LauncherType, Registry, Tier, TypeCategory};
use crate::rules::evolution::judge;
use crate::schema::diff::diff;
use crate::schema::Schema;
use crate::versioning::Bump;

/// One finding, attributed to the declaration it is about.
#[derive(Clone, Debug, PartialEq)]
pub struct NamingFinding {
    /// The rule.
    pub rule: &'static str,
    /// The file (or document name) the declaration is in.
    pub file: String,
    /// The declaration's pointer in its document.
    pub pointer: String,
    /// The message arguments.
    pub args: Vec<(&'static str, String)>,
}

/// A type name split into its family and generation: `backup.v2` → (`backup`, 2); `backup`
/// → (`backup`, 1).
pub fn generation(name: &str) -> (&str, u64) {
    if let Some((family, g)) = name.rsplit_once(".v") {
        if let Ok(n) = g.parse::<u64>() {
            if !family.contains('.') {
                return (family, n);
            }
        }
    }
    (name, 1)
}

/// Why a name breaks the grammar, if it does.
pub fn grammar(name: &str) -> Option<String> {
    let (family, rest) = match name.split_once('.') {
        Some((f, r)) => (f, Some(r)),
        None => (name, None),
    };
    let label_ok = !family.is_empty()
        && family.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !family.starts_with('-')
        && !family.ends_with('-');
    if !label_ok {
        return Some(format!(
            "\"{family}\" is not a type name: lowercase letters, digits and inner hyphens only"
        ));
    }
    let rest = rest?;
    match rest.strip_prefix('v').map(|n| (n, n.parse::<u64>())) {
        Some((_, Ok(1))) => Some(format!(
            "\".v1\" is spelled out: the bare name \"{family}\" is generation 1; write \"{family}\""
        )),
        Some((n, Ok(g))) if g >= 2 && !n.starts_with('0') => None,
        _ => Some(format!(
            "the only dot in a type name is the generation marker \".v<N>\" with N ≥ 2; \".{rest}\" is not one"
        )),
    }
}

fn owner(t: &LauncherType) -> String {
    t.origin.clone()
}

/// Every finding the declarations of `registry` draw.
pub fn check(registry: &Registry) -> Vec<NamingFinding> {
    let mut out = Vec::new();
    let decls = &registry.declarations;
    let find = |t: &LauncherType, rule: &'static str, args: Vec<(&'static str, String)>| NamingFinding {
        rule,
        file: t.file.clone(),
        pointer: t.pointer.clone(),
        args,
    };
    for (i, t) in decls.iter().enumerate() {
        if let Some(reason) = grammar(&t.name) {
            out.push(find(t, "CVN-303", vec![("name", t.name.clone()), ("reason", reason)]));
        }
        // One flat namespace.
        for other in decls.iter().filter(|o| o.name == t.name && o.category != t.category) {
            let same_kind = matches!((&t.projects, &other.projects), (Some(a), Some(b)) if a.group == b.group && a.kind == b.kind);
            if !same_kind {
                out.push(find(
                    t,
                    "CVN-301",
                    vec![
                        ("category", t.category.as_str().into()),
                        ("name", t.name.clone()),
                        ("owner", owner(t)),
                        ("other_category", other.category.as_str().into()),
                        ("other_owner", owner(other)),
                    ],
                ));
                break;
            }
        }
        // Terminal xor lowerable, across every declaration of the name.
        if let Some(other) = decls[..i].iter().find(|o| o.name == t.name && o.tier != t.tier) {
            let (terminal, lowerable) = if t.tier == Tier::Terminal { (t, other) } else { (other, t) };
            out.push(find(
                t,
                "CVN-305",
                vec![("name", t.name.clone()), ("a", owner(terminal)), ("b", owner(lowerable))],
            ));
        }
        naming_rule(t, registry, &mut out);
    }
    reservations(registry, &mut out);
    shadows(registry, &mut out);
    out
}

/// CVN-304 for one kind-named declaration.
fn naming_rule(t: &LauncherType, registry: &Registry, out: &mut Vec<NamingFinding>) {
    let Some(kind) = &t.projects else { return };
    let expected = kind.kind.to_ascii_lowercase();
    let (family, _) = generation(&t.name);
    if family == expected {
        return;
    }
    // A vendor is one a label of the kind's API group ends with (`cilium` in cilium.io,
    // `calico` in crd.projectcalico.org); anything else before a hyphen is a respelling of the kind
    // (`http-route` for HTTPRoute), judged against the whole kind name, never a fragment.
    let group = kind.group.to_ascii_lowercase();
    let vendor_of = |v: &str| !v.is_empty() && group.split('.').any(|label| label.ends_with(v));
    let reason = match family.split_once('-') {
        // `<vendor>-<kind>`: the kind may carry the vendor (CiliumNetworkPolicy) or not
        // (Flux's Kustomization).
        Some((vendor, bare))
            if vendor_of(vendor) && (expected == bare || expected == format!("{vendor}{bare}")) =>
        {
            let taken = registry.declarations.iter().any(|o| o.name == bare);
            if taken || t.prefix_reason.is_some() {
                return;
            }
            format!(
                "the vendor prefix is needed only where the bare name is taken, and no type is named \"{bare}\" (state why with prefixReason, as fluxcd-kustomization does)"
            )
        }
        _ if family.replace('-', "") == expected => format!(
            "a kind-named type is its kind's name in lowercase with nothing inserted, \"{expected}\" (\"{}\" is not a vendor the API group {} names)",
            family.split('-').next().unwrap_or_default(),
            if kind.group.is_empty() { "(core)" } else { kind.group.as_str() }
        ),
        _ => format!("a type that projects one kind without role opinions takes the kind's name in lowercase, \"{expected}\""),
    };
    out.push(NamingFinding {
        rule: "CVN-304",
        file: t.file.clone(),
        pointer: t.pointer.clone(),
        args: vec![("name", t.name.clone()), ("kind", kind.to_string()), ("reason", reason)],
    });
}

/// The breaking changes from `from` to `to`: what `to` no longer accepts.
fn narrowing(from: &Schema, to: &Schema) -> Vec<String> {
    judge(diff(from, to, "")).into_iter().filter(|j| j.bump == Bump::Major).map(|j| j.message()).collect()
}

/// CVN-302: a reserved family taken by another origin.
fn reservations(registry: &Registry, out: &mut Vec<NamingFinding>) {
    for d in &registry.dialects {
        let own = format!("dialect {}", d.name);
        for r in &d.reserved {
            let (family, _) = generation(&r.name);
            for t in
                registry.declarations.iter().filter(|t| t.origin != own && generation(&t.name).0 == family)
            {
                let detail = if t.upstreams.as_deref() == Some(d.name.as_str()) {
                    // Upstreamed with the same semantics: it must accept all the dialect's
                    // type accepts.
                    let (Some(theirs), Some(ours)) = (&r.schema, &t.schema) else { continue };
                    let lost = narrowing(theirs, ours);
                    if lost.is_empty() {
                        continue;
                    }
                    format!(
                        "; it declares it upstreams dialect {}'s feature, but does not accept everything the dialect's does: {}",
                        d.name,
                        lost.join("; ")
                    )
                } else {
                    format!(
                        "; take it only by upstreaming that feature with the same semantics (upstreams: {}), or pick another name",
                        d.name
                    )
                };
                let reserved = if r.name == t.name {
                    format!("\"{}\"", r.name)
                } else {
                    format!("\"{}\" (the family of \"{}\")", t.name, r.name)
                };
                out.push(NamingFinding {
                    rule: "CVN-302",
                    file: t.file.clone(),
                    pointer: t.pointer.clone(),
                    args: vec![
                        ("category", t.category.as_str().into()),
                        ("name", t.name.clone()),
                        ("owner", owner(t)),
                        ("reserved", reserved),
                        ("dialect", d.name.clone()),
                        ("detail", detail),
                    ],
                });
            }
        }
    }
}

/// CVN-306: every shadowed type accepts everything the upstream type accepts.
fn shadows(registry: &Registry, out: &mut Vec<NamingFinding>) {
    for d in &registry.dialects {
        let own = format!("dialect {}", d.name);
        for s in &d.shadowed {
            let upstream = registry
                .declarations
                .iter()
                .find(|t| t.origin != own && t.name == s.name && t.category == s.category);
            let detail = match upstream {
                None => Some(format!(
                    "no registry given declares a {} type \"{}\" to shadow",
                    s.category.as_str(),
                    s.name
                )),
                Some(u) => match (&u.schema, &s.schema) {
                    (Some(theirs), Some(ours)) => {
                        let lost = narrowing(theirs, ours);
                        (!lost.is_empty()).then(|| format!("{} (against {})", lost.join("; "), u.origin))
                    }
                    // The downstream declares the type open: it accepts everything.
                    (_, None) => None,
                    (None, Some(_)) => Some(format!(
                        "{} declares \"{}\" open, so only an open shadow accepts everything it does",
                        u.origin, s.name
                    )),
                },
            };
            if let Some(detail) = detail {
                out.push(NamingFinding {
                    rule: "CVN-306",
                    file: d.file.clone(),
                    pointer: s.pointer.clone(),
                    args: vec![("name", s.name.clone()), ("dialect", d.name.clone()), ("detail", detail)],
                });
            }
        }
    }
}

/// The owners of a name in categories other than `category`, for a type reference in an
/// Application: `("component", "registry builtin-launcher")`.
pub fn other_owners<'r>(registry: &'r Registry, category: TypeCategory, name: &str) -> Vec<&'r LauncherType> {
    registry.launcher.values().filter(|t| t.name == name && t.category != category).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_and_grammar() {
        assert_eq!(generation("backup.v2"), ("backup", 2));
        assert_eq!(generation("backup"), ("backup", 1));
        assert!(grammar("backup").is_none());
        assert!(grammar("backup.v2").is_none());
        assert!(grammar("cilium-networkpolicy").is_none());
        assert!(grammar("backup.v1").unwrap().contains("spelled out"));
        for bad in ["backup.v0", "backup.v02", "a.b", "backup.v2.v3", "Backup", "-x", "x-", "a_b", ""] {
            assert!(grammar(bad).is_some(), "{bad}");
        }
    }
}
