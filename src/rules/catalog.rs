//! The rule catalogue: one row per rule, the single source of truth that `covenant rules`,
//! `covenant explain`, the config validator, `docs/rules.md` and the meta-tests all read.
//!
//! Ids are stable. A rule is never renumbered and a removed rule's id is never reused.

use super::meta::{Action, Category, RuleMeta, Status};

use Action::{Deny, Mutate, Warn};
use Category::{Engine, Evolution, Mutation, Naming, Strictness, Versioning};
use Status::{Live, Planned};

/// Shorthand for a catalogue row; keeps the table readable. One argument per column is the
/// point of a table row, so the argument count is allowed here.
#[allow(clippy::too_many_arguments)]
const fn row(
    id: &'static str,
    slug: &'static str,
    category: Category,
    default_action: Action,
    status: Status,
    summary: &'static str,
    message: &'static str,
    help: &'static str,
    docs: &'static str,
) -> RuleMeta {
    RuleMeta { id, slug, category, default_action, status, summary, message, help, docs }
}

/// Every rule covenant knows, sorted by id.
pub static CATALOG: &[RuleMeta] = &[
    row("CVN-101", "unknown-field", Strictness, Deny, Live,
        "Checks that a document carries only the envelope members its schema declares.",
        "member \"{member}\" is not declared by {schema}; expected one of: {allowed}",
        "remove the member, or fix its spelling{suggestion}",
        DOC_101),
    row("CVN-102", "undeclared-property", Strictness, Deny, Live,
        "Checks that an authored property key is declared by the type that owns it.",
        "property \"{property}\" is not declared by {owner}; expected one of: {allowed}",
        "remove the property, or fix its spelling{suggestion}", DOC_102),
    row("CVN-103", "property-type", Strictness, Deny, Live,
        "Checks that a property value has the declared type, range, enum member or union member.",
        "property \"{property}\" of {owner}: expected {expected}, found {found}",
        "change the value to match the declared type", DOC_103),
    row("CVN-104", "missing-required", Strictness, Deny, Live,
        "Checks that nested required keys are present after the capability merge.",
        "required key \"{key}\" is missing from {path}",
        "add the key, or supply it through a cluster profile capability", DOC_104),
    row("CVN-105", "unknown-type", Strictness, Deny, Live,
        "Checks that every component, trait and policy type names a registered type.",
        "{category} type \"{type}\" is not registered{suggestion}",
        "use a registered type name", DOC_105),
    row("CVN-106", "unsupported-version", Strictness, Deny, Live,
        "Checks that a document's version is the one this reader speaks.",
        "{schema} version \"{found}\" is not supported; this reader speaks version \"{expected}\"",
        "rewrite the document for version \"{expected}\"",
        DOC_106),
    row("CVN-107", "consumer-parameters", Strictness, Deny, Planned,
        "Checks consumer parameters and environment configs against the resolved construct's schema.",
        "{field} of {consumer} is invalid against {construct}: {reason}",
        "fix the parameters to match the pinned construct version", ""),
    row("CVN-108", "duplicate-key", Strictness, Deny, Live,
        "Checks that no YAML mapping carries the same key twice.",
        "key \"{key}\" appears twice in one mapping (first at line {first_line})",
        "keep one of the two entries; YAML readers disagree on which one wins",
        DOC_108),
    row("CVN-109", "invalid-document", Strictness, Deny, Live,
        "Checks that input parses and is an object with the members that identify it.",
        "{reason}",
        "fix the document so it parses and names what it is",
        DOC_109),
    row("CVN-201", "field-removed", Evolution, Deny, Planned,
        "Checks that no field, parameter or environment config is removed.",
        "field \"{field}\" was removed", "restore the field, or publish a new major version", ""),
    row("CVN-202", "required-added", Evolution, Deny, Planned,
        "Checks that no new required field appears and no optional field becomes required.",
        "field \"{field}\" became required", "keep the field optional with a default", ""),
    row("CVN-203", "type-changed", Evolution, Deny, Planned,
        "Checks that no field's type is changed or narrowed.",
        "type of \"{field}\" changed from {before} to {after}", "keep the old type", ""),
    row("CVN-204", "enum-narrowed", Evolution, Deny, Planned,
        "Checks that no enum value is removed and no enum is put on a free field.",
        "enum of \"{field}\" narrowed: {removed}", "keep every enum value", ""),
    row("CVN-205", "constraint-tightened", Evolution, Deny, Planned,
        "Checks that no value constraint (pattern, bounds, lengths, counts) is tightened.",
        "constraint {constraint} of \"{field}\" tightened from {before} to {after}",
        "keep the old constraint", ""),
    row("CVN-206", "validation-added", Evolution, Deny, Planned,
        "Checks that no CEL validation rule is added or changed.",
        "validation rule on \"{field}\" was {change}", "ship the rule in a new version", ""),
    row("CVN-207", "default-changed", Evolution, Deny, Planned,
        "Checks that no default is added to an existing field, removed or changed.",
        "default of \"{field}\" changed from {before} to {after}", "keep the old default", ""),
    row("CVN-208", "output-removed", Evolution, Deny, Planned,
        "Checks that no construct output is removed or renamed.",
        "output \"{output}\" was removed", "restore the output", ""),
    row("CVN-209", "openness-narrowed", Evolution, Deny, Planned,
        "Checks that preserve-unknown-fields, nullable, int-or-string and additionalProperties are not narrowed.",
        "\"{field}\" is no longer {openness}", "keep the field open", ""),
    row("CVN-210", "version-removed", Evolution, Deny, Planned,
        "Checks that served and stored versions are not dropped and the storage version moves safely.",
        "version {version} was removed while {reason}", "keep serving the version", ""),
    row("CVN-211", "identity-changed", Evolution, Deny, Planned,
        "Checks that a CRD's scope, group, kind and plural do not change.",
        "{member} changed from {before} to {after}", "create a new CRD instead", ""),
    row("CVN-212", "bump-too-small", Evolution, Deny, Planned,
        "Checks that the declared version bump covers the bump the diff implies.",
        "declared bump {declared} is smaller than the implied {implied}",
        "raise the version by at least {implied}", ""),
    row("CVN-213", "bump-too-large", Evolution, Warn, Planned,
        "Checks that the declared bump is not larger than the diff implies.",
        "declared bump {declared} is larger than the implied {implied}",
        "a {implied} bump is enough", ""),
    row("CVN-214", "breaking-under-promise", Evolution, Deny, Planned,
        "Checks that no breaking change ships while the version string carries a stability promise.",
        "breaking change under {version}: {change}", "ship it under a new version", ""),
    row("CVN-215", "live-objects-violate", Evolution, Deny, Planned,
        "Checks that a tightening is satisfied by every live object.",
        "{count} live object(s) violate the tightened schema: {objects}",
        "migrate the objects first", ""),
    row("CVN-216", "version-shape-mismatch", Evolution, Deny, Planned,
        "Checks that the served versions of an XRD share one schema shape.",
        "served versions {a} and {b} have different schema shapes",
        "give every served version the same schema", ""),
    row("CVN-217", "deprecation-incomplete", Evolution, Deny, Planned,
        "Checks deprecation warnings, the single referenceable version and deprecate-before-unserve.",
        "{reason}", "deprecate the version for one release first, naming its replacement", ""),
    row("CVN-218", "derived-name-overflow", Evolution, Deny, Planned,
        "Checks that derived names stay within 63 characters.",
        "derived name {template} can reach {length} characters", "limit metadata.name", ""),
    row("CVN-219", "composition-not-deterministic", Evolution, Warn, Planned,
        "Checks that an XRD names a defaultCompositionRef.",
        "XRD {name} has no defaultCompositionRef", "set spec.defaultCompositionRef", ""),
    row("CVN-301", "namespace-collision", Naming, Deny, Planned,
        "Checks that one type name is used in one category only.",
        "type name \"{type}\" is both a {a} and a {b}", "rename one of them", ""),
    row("CVN-302", "reserved-name", Naming, Deny, Planned,
        "Checks that a reserved name or generation is not taken with other semantics.",
        "type name \"{type}\" is reserved by {dialect}", "choose another name", ""),
    row("CVN-303", "generation-grammar", Naming, Deny, Planned,
        "Checks the `.v<N>` generation marker grammar.",
        "type name \"{type}\" has an invalid generation marker", "use `<family>.v<N>` with N >= 2", ""),
    row("CVN-304", "naming-rule", Naming, Warn, Planned,
        "Checks that kind-named types equal their kind in lowercase and avoid needless vendor prefixes.",
        "type name \"{type}\" breaks the naming rule: {reason}", "rename the type", ""),
    row("CVN-305", "tier-conflict", Naming, Deny, Planned,
        "Checks that a name is not both terminal and lowerable.",
        "type name \"{type}\" is both terminal and lowerable", "pick one tier", ""),
    row("CVN-306", "shadow-not-superset", Naming, Deny, Planned,
        "Checks that a downstream shadowed type accepts everything the upstream type accepts.",
        "shadowed type \"{type}\" does not accept {change}", "widen the shadowing schema", ""),
    row("CVN-401", "stamp-mismatch", Versioning, Deny, Planned,
        "Checks that rendered-from stamps agree with the declared version and logical name.",
        "stamp {stamp} is \"{found}\", expected \"{expected}\"", "fix the stamp", ""),
    row("CVN-402", "version-unlabelled", Versioning, Deny, Planned,
        "Checks that a versioned object carries the name and version labels.",
        "{object} carries a version annotation without label {label}", "add the labels", ""),
    row("CVN-403", "name-major-mismatch", Versioning, Deny, Planned,
        "Checks that an object name is `<logical>-v<major>` and at most 63 characters.",
        "object name \"{name}\" should be \"{expected}\"", "rename the object", ""),
    row("CVN-404", "default-not-unique", Versioning, Deny, Planned,
        "Checks that exactly one object is labelled default per logical name.",
        "{count} objects are labelled default for \"{logical}\"", "keep one default", ""),
    row("CVN-405", "duplicate-version", Versioning, Deny, Planned,
        "Checks that no two objects carry the same full version.",
        "version {version} of \"{logical}\" is carried by {a} and {b}", "remove one", ""),
    row("CVN-406", "pin-unsatisfied", Versioning, Deny, Planned,
        "Checks that every version pin resolves to a published version.",
        "pin \"{pin}\" of \"{logical}\" matches no published version; published: {published}",
        "pin a published version", ""),
    row("CVN-407", "floating-image", Versioning, Deny, Planned,
        "Checks that no image uses `:latest` or no tag.",
        "image \"{image}\" floats", "pin a tag or digest", ""),
    row("CVN-408", "invalid-version", Versioning, Deny, Planned,
        "Checks that versions and pins are valid and 0.x constructs are marked experimental.",
        "version \"{version}\" is not valid: {reason}", "use a semantic version", ""),
    row("CVN-409", "major-in-place", Versioning, Deny, Planned,
        "Checks that a MAJOR is published as a new object and MINOR/PATCH in place.",
        "{bump} applied {how}", "publish majors as new objects", ""),
    row("CVN-410", "retired-in-use", Versioning, Warn, Planned,
        "Checks that a deleted version is not still pinned by consumers.",
        "version {version} is still pinned by {consumers}", "move the consumers first", ""),
    row("CVN-411", "outside-support-window", Versioning, Warn, Planned,
        "Checks that pins stay inside the supported major window.",
        "pin \"{pin}\" is below the supported range {range}", "move to a supported major", ""),
    row("CVN-501", "stamp", Mutation, Mutate, Planned,
        "Stamps rendered-from-version and rendered-from-type into every template.",
        "stamped {stamp} at {path}", "", ""),
    row("CVN-502", "version-labels", Mutation, Mutate, Planned,
        "Adds the name and version labels from the version annotation.",
        "labelled {label}", "", ""),
    row("CVN-901", "lookup-unavailable", Engine, Deny, Planned,
        "Reports a rule that could not get the cluster state it needs within its budget.",
        "{rule} could not look up {resource} within {budget}: {reason}",
        "retry, or set the failure policy", ""),
];

const DOC_101: &str = "\
## What it checks

Every member of a document's envelope must be declared by the schema the document names.
For a `versioned` document (top-level `schema` and `version` members) the registry entry
lists the members; anything else is refused, and the refusal names every allowed member and
the nearest one.

For the launcher's documents (`launcher.gokure.dev/v1alpha1` Application, Package,
ClusterProfile, CapabilityDefinition, EnvironmentSet) the envelope is `apiVersion`, `kind`,
`metadata`, `spec` and every field of a component, trait or policy entry other than its
`properties` map — launcher decodes all of it with known fields only. A misspelled
`replicaz` beside a component's `properties`, or a stray `spec.traits`, is refused here; the
`properties` maps themselves are judged by CVN-102 against the owning type. An Application
applied to a cluster as a custom resource may also carry the metadata the apiserver adds
(`uid`, `resourceVersion`, `managedFields`, …).

## Why it matters

A reader that ignores what it does not know turns a typo into silent data loss: `replcas: 3`
is dropped and the default wins. covenant refuses instead, so the author learns at once.

## Example

```yaml
schema: space.app
version: \"1\"
nmae: shop        # refused: did you mean `name`?
```

Fixed:

```yaml
schema: space.app
version: \"1\"
name: shop
```

In a launcher Application:

```yaml
apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata: {name: shop}
spec:
  components:
    - name: web
      type: webservice
      replicaz: 3     # refused: a component entry has name, type, properties, traits, annotations
      properties: {image: shop:1.0}
  traits: []          # refused: traits belong to a component
```

## How to fix

Remove the member or correct its spelling. If the member is new, declare it in the registry
first (a new optional member with a stated default keeps the version; see CVN-106).


## References

Seed 002 (Versioning: every document refuses a member its schema does not declare). Seed 000
(Parser Strictness, \"Two levels, two mechanisms\").
";

const DOC_102: &str = "\
## What it checks

A launcher component, trait or policy entry carries a `properties` map that YAML decoding
does not constrain. Each map is checked against the property schema of the type that owns
it — the built-in registry (`registry/launcher.yaml`) or a user registry — and a key the
schema does not declare is refused, at any depth where the schema is closed. The refusal
names the owner (`component \"web\": trait \"expose\"`), every allowed key and the nearest
one. The engine-owned trait key `scope` is declared on every trait.

A `helmchart` component written for the removed composite (a key such as `source`, `values`
or `delivery`) is refused with a pointer to `helm`: `helmchart` now projects the Flux
HelmChart source.

## Why it matters

An undeclared key used to decode into a map and be dropped: the author wrote `tls: true`
and got no TLS, with nothing said. A document that authored a key no handler declares never
compiled to the output its author intended.

## Example

```yaml
components:
  - name: web
    type: webservice
    properties:
      image: shop:1.0
      replicaz: 3        # refused: did you mean \"replicas\"?
```

Fixed:

```yaml
    properties:
      image: shop:1.0
      replicas: 3
```

## How to fix

Correct the spelling, or remove the key. A key a type really should accept is added to its
property schema in a registry first; a trait served by a custom handler without a schema is
declared by a CapabilityDefinition (`covenant check --capability-def`), which leaves its
handler-owned properties unchecked.

## References

Seed 000 (\"Two levels, two mechanisms\", the helmchart history).
";

const DOC_103: &str = "\
## What it checks

Each authored property value has the type its schema declares. Integers accept any integral
value (`3` or `3.0`) inside the 64-bit range; a value beyond it is refused rather than
dropped. A `types` union (`[string, integer]` for quantities and int-or-string fields)
accepts a value any member accepts and reads it as the first member, in declared order,
that does. An enum compares strings exactly and numbers numerically (`80` equals `80.0`).
`null` under an optional key means absent. In a Package, a `${...}` placeholder is a string
until its parameter is substituted (`--package`, `--values`); an unresolved placeholder is
not a type error.

## Why it matters

A handler reads the value as the type it declared. A string where an integer was expected
either fails late, inside the build, or is read as a default — neither tells the author.

## Example

```yaml
properties:
  image: shop:1.0
  replicas: three      # refused: expected integer, found a string \"three\"
```

Fixed:

```yaml
properties:
  image: shop:1.0
  replicas: 3
```

## How to fix

Write the value as the declared type, or one of the listed enum values. For a value that
comes from a package parameter, give the parameter (`--values FILE`) so the check sees the
substituted value.

## References

Seed 000 (Parser Strictness: integer normalisation, `Types` unions, Enum comparison,
placeholders and \"Ordering is load-bearing\").
";

const DOC_104: &str = "\
## What it checks

A key a nested object declares required is present (an explicit `null` counts as absent).
Required keys at the top of a `properties` map are deliberately not enforced: a
ClusterProfile capability binding may supply them when the platform renders the trait.
When `covenant check --profile cluster.yaml` is given, the binding a trait resolves against
(`<trait>.<scope>`, else `<trait>`) is merged into the trait's properties first, so a
partial nested override that relies on the rendering for a required sibling is accepted.
Inside list items, required keys are checked as written: a rendering never merges into a
list.

## Why it matters

A nested object missing a required key (an `env` entry without `name`, a `secretKeyRef`
without `key`) cannot be rendered; the build would fail later, further from the mistake.

## Example

```yaml
properties:
  image: shop:1.0
  env:
    - value: \"1\"     # refused: required key \"name\" is missing
```

Fixed:

```yaml
  env:
    - name: WORKERS
      value: \"1\"
```

## How to fix

Add the key. If the platform is meant to supply it, check with the cluster profile that
binds the trait (`--profile`).

## References

Seed 000 (\"Required fields are checked at nested levels only\").
";

const DOC_105: &str = "\
## What it checks

Every component, trait and policy `type` names a type registered in its category: the
built-in launcher registry, a user registry, or — for traits — a CapabilityDefinition given
with `--capability-def`. The refusal suggests the nearest registered name, and says so when
the name belongs to another category (component, trait and policy names share one flat
namespace).

## Why it matters

A type nothing serves fails the build with \"no handler\", or, worse, is skipped by a tool
that checks only what it knows. Naming the nearest type turns a typo into a one-line fix.

## Example

```yaml
components:
  - name: web
    type: webservise     # refused: did you mean \"webservice\"?
```

Fixed:

```yaml
  - name: web
    type: webservice
```

## How to fix

Use a registered name (`covenant check` lists the nearest), register the type in a user
registry, or give the CapabilityDefinition that declares a custom trait.

## References

Seed 000 (Type-Name Reservation Covenant, the allowlists in pkg/oam/validate.go).
";

const DOC_106: &str = "\
## What it checks

A document names its format version and the reader speaks exactly one version of it. A
`versioned` document must carry both `schema` and `version`; a `version` other than the one
the registry declares is refused and the refusal names both. Registry entries marked
`checkVersion: false` require the member but do not check its value.

## Why it matters

One decoder per format: no release ships two decoders, and none migrates an older document.
A version the reader does not speak would be decoded with the wrong shape.

## Example

```yaml
schema: space.app
version: \"2\"      # refused: this reader speaks version \"1\"
```

## How to fix

Rewrite the document for the version the reader speaks, or upgrade the reader.

## References

Seed 002 (Versioned formats; Schema changes).
";

const DOC_108: &str = "\
## What it checks

No mapping in a YAML document carries the same key twice.

## Why it matters

YAML readers disagree on which duplicate wins (first, last, or an error), so the document
means different things to different tools. covenant refuses it rather than guessing.

## Example

```yaml
schema: space.app
version: \"1\"
version: \"2\"
```

## How to fix

Keep one of the two entries.
";

const DOC_109: &str = "\
## What it checks

Input parses, each document is a mapping, and it names what it is: `apiVersion` and `kind`
for Kubernetes-style documents, or `schema` and `version` for versioned documents.

## Why it matters

A document that cannot be identified cannot be checked; passing it would let anything
through.

## Example

```yaml
- just
- a list
```

## How to fix

Fix the syntax, or add the identifying members.
";
