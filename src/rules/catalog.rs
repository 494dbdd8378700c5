//! The rule catalogue: one row per rule, the single source of truth that `covenant rules`,
//! `covenant explain`, the config validator, `docs/rules.md` and the meta-tests all read.
//!
//! Ids are stable. A rule is never renumbered and a removed rule's id is never reused.

use super::meta::{Action, Category, RuleMeta, Status};

use Action::{Deny, Off, Warn};
use Category::{Engine, Evolution, Mutation, Naming, Strictness, Versioning};
use Status::Live;

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
        "Checks that required keys are present (a launcher's nested ones after the capability merge; a custom resource's after its defaults).",
        "required key \"{key}\" is missing from {path}",
        "add the key{supply}", DOC_104),
    row("CVN-105", "unknown-type", Strictness, Deny, Live,
        "Checks that every component, trait and policy type names a registered type.",
        "{category} type \"{type}\" is not registered{suggestion}",
        "use a registered type name", DOC_105),
    row("CVN-106", "unsupported-version", Strictness, Deny, Live,
        "Checks that a document's version is the one this reader speaks.",
        "{schema} version \"{found}\" is not supported; this reader speaks version \"{expected}\"",
        "rewrite the document for version \"{expected}\"",
        DOC_106),
    row("CVN-107", "consumer-parameters", Strictness, Deny, Live,
        "Checks consumer parameters and environment configs against the resolved construct's schema.",
        "{field} of {consumer} is invalid against {construct}: {reason}",
        "fix the values to match the pinned construct version, or move the pin",
        DOC_107),
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
    row("CVN-110", "ambiguous-scalar", Strictness, Warn, Live,
        "Checks that no plain YAML scalar is a boolean to kubectl and text to YAML 1.2 readers (yes, no, on, off).",
        "{what} `{text}` is the string \"{text}\" to covenant and YAML 1.2 readers (the launcher's yaml.v3) but the boolean {boolean} to kubectl (go-yaml v2)",
        "quote it (\"{text}\") if it is text, or write {boolean} if it is a boolean",
        DOC_110),
    row("CVN-201", "field-removed", Evolution, Deny, Live,
        "Checks that no field, parameter or environment config is removed.",
        "{subject}: {detail}",
        "keep the field, or ship the removal under a new version",
        DOC_201),
    row("CVN-202", "required-added", Evolution, Deny, Live,
        "Checks that no new required field appears and no optional field becomes required.",
        "{subject}: {detail}",
        "make the field optional (with a default where one is needed), or ship it under a new version",
        DOC_202),
    row("CVN-203", "type-changed", Evolution, Deny, Live,
        "Checks that no field's type is changed or narrowed.",
        "{subject}: {detail}",
        "keep the old type, or widen it (integer to number); a reshape is a new version",
        DOC_203),
    row("CVN-204", "enum-narrowed", Evolution, Deny, Live,
        "Checks that no enum value is removed and no enum is put on a free field.",
        "{subject}: {detail}",
        "keep every enum value that was accepted; adding values is fine",
        DOC_204),
    row("CVN-205", "constraint-tightened", Evolution, Deny, Live,
        "Checks that no value constraint (pattern, bounds, lengths, counts) is tightened.",
        "{subject}: {detail}",
        "keep the old constraint, or loosen it; tighten only under a new version",
        DOC_205),
    row("CVN-206", "validation-added", Evolution, Deny, Live,
        "Checks that no CEL validation rule is added or changed.",
        "{subject}: {detail}",
        "ship the new rule under a new version, or check every live object satisfies it first",
        DOC_206),
    row("CVN-207", "default-changed", Evolution, Deny, Live,
        "Checks that no default is added to an existing field, removed or changed.",
        "{subject}: {detail}",
        "keep the old default; a changed default changes what existing objects deploy",
        DOC_207),
    row("CVN-208", "output-removed", Evolution, Deny, Live,
        "Checks that no construct output is removed or renamed.",
        "{subject}: {detail}",
        "keep the output or rendered object, or publish the removal as a new major",
        DOC_208),
    row("CVN-209", "openness-narrowed", Evolution, Deny, Live,
        "Checks that preserve-unknown-fields, nullable, int-or-string and additionalProperties are not narrowed.",
        "{subject}: {detail}",
        "keep the field as open as it was",
        DOC_209),
    row("CVN-210", "version-removed", Evolution, Deny, Live,
        "Checks that served and stored versions are not dropped and the storage version moves safely.",
        "{subject}: {detail}",
        "keep serving the version (deprecate it first), and keep every stored version until storage has migrated",
        DOC_210),
    row("CVN-211", "identity-changed", Evolution, Deny, Live,
        "Checks that a CRD's scope, group, kind and plural do not change.",
        "{subject}: {member} changed from {before} to {after}",
        "a CRD's identity cannot change: create a new CRD and migrate",
        DOC_211),
    row("CVN-212", "bump-too-small", Evolution, Deny, Live,
        "Checks that the declared version bump covers the bump the diff implies.",
        "{subject}: declared bump {declared} is smaller than the implied {implied} ({detail})",
        "raise the version by at least {implied}; severity is derived from the diff, never declared",
        DOC_212),
    row("CVN-213", "bump-too-large", Evolution, Warn, Live,
        "Checks that the declared bump is not larger than the diff implies.",
        "{subject}: declared bump {declared} is larger than the implied {implied} ({detail})",
        "a {implied} bump is enough; a major that breaks nothing sends every consumer to review for nothing",
        DOC_213),
    row("CVN-214", "breaking-under-promise", Evolution, Deny, Live,
        "Checks that no breaking change ships while the version string carries a stability promise.",
        "{subject}: {detail} under the GA version {version}",
        "ship the change under a new version string",
        DOC_214),
    row("CVN-215", "live-objects-violate", Evolution, Deny, Live,
        "Checks that a tightening is satisfied by every live object.",
        "{subject}: {outcome}",
        "migrate the listed objects first, then apply the tightened schema",
        DOC_215),
    row("CVN-216", "version-shape-mismatch", Evolution, Deny, Live,
        "Checks that served versions without a conversion webhook share one schema shape.",
        "{subject}: served versions {a} and {b} have different schema shapes: {detail}",
        "give every served version the same schema, or convert between them with a webhook",
        DOC_216),
    row("CVN-217", "deprecation-incomplete", Evolution, Deny, Live,
        "Checks deprecation warnings, the single referenceable version and deprecate-before-unserve.",
        "{subject}: {reason}",
        "deprecate a version for one release first, with a deprecationWarning naming its replacement",
        DOC_217),
    row("CVN-218", "derived-name-overflow", Evolution, Deny, Live,
        "Checks that derived names stay within 63 characters.",
        "{subject}: {reason}",
        "limit every field the name uses (maxLength with a description, or a CEL size rule with a message) so the name fits 63 characters",
        DOC_218),
    row("CVN-219", "composition-not-deterministic", Evolution, Warn, Live,
        "Checks that an XRD names a defaultCompositionRef.",
        "XRD {name} has no defaultCompositionRef",
        "set spec.defaultCompositionRef so a composite that names no composition is deterministic",
        DOC_219),
    row("CVN-220", "unclassified-change", Evolution, Deny, Live,
        "Reports a schema difference no evolution rule classifies, counted as MAJOR.",
        "{subject}: {detail} is a change covenant does not classify; it counts as MAJOR",
        "review the change by hand; if it is safe, exempt it in config",
        DOC_220),
    row("CVN-301", "namespace-collision", Naming, Deny, Live,
        "Checks that one type name is used in one category only.",
        "{category} type \"{name}\" ({owner}) is also a {other_category} type ({other_owner})",
        "component, trait and policy names are one flat namespace: rename one of them",
        DOC_301),
    row("CVN-302", "reserved-name", Naming, Deny, Live,
        "Checks that a reserved name or generation is not taken with other semantics.",
        "{category} type \"{name}\" ({owner}) takes the name {reserved} reserved by dialect {dialect}{detail}",
        "pick another name, or upstream the dialect's feature with the same semantics",
        DOC_302),
    row("CVN-303", "generation-grammar", Naming, Deny, Live,
        "Checks the `.v<N>` generation marker grammar.",
        "type name \"{name}\": {reason}",
        "use lowercase letters, digits and hyphens, and \".v<N>\" (N ≥ 2) only for a successor generation",
        DOC_303),
    row("CVN-304", "naming-rule", Naming, Warn, Live,
        "Checks that kind-named types equal their kind in lowercase and avoid needless vendor prefixes.",
        "kind-named type \"{name}\" projects {kind}: {reason}",
        "name a kind-named type after its kind; prefix the vendor only where the bare name is taken",
        DOC_304),
    row("CVN-305", "tier-conflict", Naming, Deny, Live,
        "Checks that a name is not both terminal and lowerable.",
        "type \"{name}\" is terminal in {a} and lowerable in {b}",
        "a type is served by a handler or expanded by a lowering rule, never both: rename one",
        DOC_305),
    row("CVN-306", "shadow-not-superset", Naming, Deny, Live,
        "Checks that a downstream shadowed type accepts everything the upstream type accepts.",
        "shadowed type \"{name}\" of dialect {dialect} does not accept everything the upstream type accepts: {detail}",
        "widen the shadowing schema until it accepts everything upstream does, or rename the downstream type",
        DOC_306),
    row("CVN-401", "stamp-mismatch", Versioning, Deny, Live,
        "Checks that rendered-from stamps agree with the declared version and logical name.",
        "stamp {stamp} is \"{found}\", expected \"{expected}\"",
        "derive every stamp from the declared version (the mutating webhook writes them: CVN-501)",
        DOC_401),
    row("CVN-402", "version-unlabelled", Versioning, Deny, Live,
        "Checks that a versioned object carries the name and version labels.",
        "{object} declares a version nobody can pin: it lacks the label {label}",
        "add the openchoreo.dev/name and openchoreo.dev/version labels, equal to the annotation",
        DOC_402),
    row("CVN-403", "name-major-mismatch", Versioning, Deny, Live,
        "Checks that an object name is `<logical>-v<major>` and at most 63 characters.",
        "object name \"{name}\" should be \"{expected}\"",
        "name the object <logical>-v<major>, derived from the version, never typed",
        DOC_403),
    row("CVN-404", "default-not-unique", Versioning, Deny, Live,
        "Checks that exactly one object is labelled default per logical name.",
        "{count} objects are labelled default for \"{logical}\"",
        "keep the default label on exactly one object per logical name",
        DOC_404),
    row("CVN-405", "duplicate-version", Versioning, Deny, Live,
        "Checks that no two objects carry the same full version.",
        "version {version} of \"{logical}\" is carried by {a} and {b}",
        "remove one: a resolver refuses to pick between two objects at one version",
        DOC_405),
    row("CVN-406", "pin-unsatisfied", Versioning, Deny, Live,
        "Checks that every version pin resolves to a published version.",
        "pin \"{pin}\" of \"{logical}\" matches no published version; published: {published}",
        "pin a published version; `kubectl get {kind} -l openchoreo.dev/name={logical}` lists them",
        DOC_406),
    row("CVN-407", "floating-image", Versioning, Deny, Live,
        "Checks that no image uses `:latest` or no tag.",
        "image \"{image}\" floats: \":latest\" or no tag",
        "pin a tag (v1-<sha8>) or a digest",
        DOC_407),
    row("CVN-408", "invalid-version", Versioning, Deny, Live,
        "Checks that versions and pins are valid and 0.x constructs are marked experimental.",
        "version \"{version}\" is not valid: {reason}",
        "use MAJOR.MINOR.PATCH; pins are \"2\", \"2.0\" or \"2.0.1\"",
        DOC_408),
    row("CVN-409", "major-in-place", Versioning, Deny, Live,
        "Checks that a MAJOR is published as a new object and MINOR/PATCH in place.",
        "{bump} applied {how}",
        "publish a major as a new <logical>-v<major> object; move minors and patches in place",
        DOC_409),
    row("CVN-410", "retired-in-use", Versioning, Warn, Live,
        "Checks that a deleted version is not still pinned by consumers.",
        "version {version} is still pinned by {consumers}",
        "move the consumers to another version first",
        DOC_410),
    row("CVN-411", "outside-support-window", Versioning, Warn, Live,
        "Checks that pins stay inside the supported major window.",
        "pin \"{pin}\" is below the supported range {range}",
        "move the pin to a supported major",
        DOC_411),
    row("CVN-501", "stamp", Mutation, Off, Live,
        "Stamps rendered-from-version and rendered-from-type into every template.",
        "stamped {stamp} at {path}", "", DOC_501),
    row("CVN-502", "version-labels", Mutation, Off, Live,
        "Adds the name and version labels from the version annotation.",
        "labelled {label}", "", DOC_502),
    row("CVN-901", "lookup-unavailable", Engine, Deny, Live,
        "Reports a rule that could not get the cluster state it needs within its budget.",
        "{rule} could not look up {resource} within {budget}: {reason}; failure policy {policy}",
        "retry, raise cluster.lookupBudget, or set cluster.failurePolicy",
        DOC_901),
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

The platform's format-versioning policy (Versioning: every document refuses a member its schema does not declare). The launcher design (launcher.gokure.dev)
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

A custom resource, or a Crossplane composite or claim, is held to the served version of the
CRD or XRD that defines it, as the API server holds it under strict field validation: a field
its schema does not declare (`spec.parentRefz` in an HTTPRoute) is refused with the declared
fields and the nearest one, and so is a metadata field ObjectMeta lacks (`metadata.lables`).
`covenant check` does this for every definition among the checked files, `--context` or
`--cluster` (`customResources.check`); the webhook only when `customResources.admission` is
on, since the API server already validates what it serves.
Kubernetes' own kinds (a Deployment's `spec.replicaz`) are held to the schemas covenant
carries for them (Kubernetes 1.33, from the k8s-openapi crate) by `covenant check` only
(`kubernetesKinds.check`).

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

The launcher design (launcher.gokure.dev) (\"Two levels, two mechanisms\", the helmchart history).
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

A custom resource (or a Crossplane composite or claim) checked against its CRD or XRD is held
to every keyword its served version states, after the defaults that version states are
applied, as the API server applies them: types, enums, bounds, `pattern`, `format`,
`uniqueItems`, list types and `x-kubernetes-validations` CEL rules (with the rule's message).
What covenant cannot evaluate (a CEL function it lacks, a rule past the evaluation bounds, a
format it does not know) is a warning of this rule naming it, never a silent pass.

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

The launcher design (launcher.gokure.dev) (Parser Strictness: integer normalisation, `Types` unions, Enum comparison,
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

A custom resource checked against its CRD or XRD has its required keys checked at every
level, after the defaults its definition states are applied (a required key with a default is
never missing).

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

The launcher design (launcher.gokure.dev) (\"Required fields are checked at nested levels only\").
";

const DOC_105: &str = "\
## What it checks

Every component, trait and policy `type` names a type registered in its category: the
built-in launcher registry, a user registry, or — for traits — a CapabilityDefinition given
with `--capability-def`. The refusal suggests the nearest registered name. A name that
another category owns is refused by CVN-301 instead, naming the owner: component, trait and
policy names share one flat namespace.

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

The launcher design (launcher.gokure.dev) (Type-Name Reservation Covenant, the allowlists in pkg/oam/validate.go).
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

The platform's format-versioning policy (Versioned formats; Schema changes).
";

const DOC_108: &str = "\
## What it checks

No mapping in a YAML document carries the same key twice.

## Why it matters

YAML readers disagree on which duplicate wins (first, last, or an error), so the document
means different things to different tools. covenant refuses it rather than guessing. Where a
document is read as an input rather than checked (the files `diff` compares, `--values`, the
objects of `--context`, the manifests `upgrade` plans), the command stops with the same
reason, at the repeated key.

## Example

```yaml
schema: space.app
version: \"1\"
version: \"2\"
```

## How to fix

Keep one of the two entries.
";

const DOC_110: &str = "\
## What it checks

No plain (unquoted) scalar is one of YAML 1.1's booleans that YAML 1.2 dropped: `y`, `yes`,
`on`, `n`, `no`, `off`, in lower case, capitalised or upper case. As a value or as a key.

## Why it matters

kubectl reads manifests with go-yaml v2, which follows YAML 1.1: `enabled: yes` reaches the
API server as `true`, and `country: no` as `false`. YAML 1.2 readers, covenant and the
launcher's yaml.v3 among them, read both as text. So a document can pass `covenant check` in
CI and then be refused when it is applied (a string field that receives a boolean, a
ConfigMap's `data` that holds one), or mean a different thing to each tool that reads it.
A key is read the same way: under kubectl `on:` becomes the key `\"true\"`.

The finding is a warning: covenant cannot know which reader a file is for.

## Example

```yaml
data:
  FEATURE_FLAG: on
```

## How to fix

Quote the scalar (`\"on\"`) if it is text; write `true` or `false` if it is a boolean.
";

const DOC_109: &str = "\
## What it checks

Input parses, each document is a mapping, and it names what it is: `apiVersion` and `kind`
for Kubernetes-style documents, or `schema` and `version` for versioned documents.

In a CRD or XRD it also says what leaves a schema with nothing to read or compare: no version
listed (`spec.versions` missing, misspelled or empty), a version without a schema (every
apiextensions.k8s.io/v1 CRD version needs `schema.openAPIV3Schema`), a v1beta1
`spec.validation` schema no version takes, and a keyword no OpenAPI v3 structural schema knows
(`maxLenght`), which validates nothing. For a CRD or XRD not opted in to enforcement these
are warnings. The same keyword in a component type's or trait's `openAPIV3Schema` is refused
where it is (in a `$defs` definition, where the definition is): OpenChoreo decodes that schema
strictly and refuses it too. It also refuses a file holding a control character other than
tab, line feed and carriage return, at the character, and a scalar its tag says it is not
(`!!int eighty`), and a mapping key kubectl cannot make a JSON member name of (`~: x`, an
integer key above the int64 range), which kubectl refuses too. In a document kubectl applies
(any but the launcher's and covenant's own), it refuses an infinity or NaN written as a plain
value (`.inf`, `-.Inf`, `.nan`): kubectl reads a float JSON cannot hold and refuses the
document (`json: unsupported value: +Inf`); quoted, it is text. In a document go-yaml reads
(kubectl's and the launcher's), it refuses a tab after a sequence entry's `-` (`- \tx`), after
a complex key's `?` or the `:` that begins its value's line (`? a` then `:\tb`), and a
tab that begins a line outside a quoted string (a line of blanks or a comment too), and a
tab after a line's leading spaces where go-yaml reads indentation: between tokens (`a:` then
`  \tb: c`), in a block scalar's indentation (up to its first line of text, which sets the
indentation, any such tab), and left of a plain scalar's continuation lines (one column right of the innermost block
collection); go-yaml refuses each and YAML 1.2 reads them. A tab in a block scalar's text,
right of its indentation, is text. A tab after a key's `:` (`name:\tweb`) is read, as go-yaml
reads it, however many a document holds. In a file that holds a Kubernetes object, it
refuses a document separator line with anything but a comment after its `---`
(`--- {apiVersion: v1, …}`): YAML reads it, but kubectl splits files by lines and refuses
the whole file there (`invalid Yaml document separator`). In such a file it also refuses a
document that follows an end marker (`...`) with no `---` line between them: YAML reads it,
but kubectl reads only the first document between two `---` lines and never applies it. A
file of the launcher's documents alone is read by the launcher, which reads both as YAML
does, and is not refused; nor is a file of covenant's own documents (a registry, a dialect).

## Why it matters

A document that cannot be identified cannot be checked; passing it would let anything
through.

## Example

```yaml
- just
- a list
```

## How to fix

Fix the syntax, or add the identifying members. Template source (a Helm chart's templates,
where `{{ … }}` actions stand for values) is not a manifest: the finding is at its first
action and names the chart; check what it renders (`helm template CHART | covenant check
-`), or leave the chart out. In `covenant check`, a file that belongs to
another tool (a CI workflow, a Helm values file) is left out with `--exclude GLOB`, or every
document that names none of `apiVersion`, `kind` and `schema` is skipped with
`--skip-unidentified` (counted in the summary, listed in JSON output; a `version` alone, as
a package.json carries, does not count; a document naming only some of them is still
judged).
";

const DOC_218: &str = "\
## What it checks

A composite's controller derives names from its fields — a namespace `app-<app>-<env>`, a
release `<name>-tektoncicd`, a Job or StatefulSet named after the composite — and every such
name must fit the 63 characters of a Kubernetes name or label. An XRD (or CRD) declares the
names it derives in the annotation `covenant.dev/derived-names`, one template per line, with
the composite's fields in braces:

```yaml
metadata:
  annotations:
    covenant.dev/derived-names: |
      app-{spec.app}-{spec.env}
      {metadata.name}-tektoncicd
```

On the definition (CREATE and UPDATE, in `check` and at admission), each field a template
uses must be limited — `maxLength`, a string `enum`, a CEL rule `size(self) <= N` or
`self.size() <= N` on the field, or `size(self.<path>) <= N` on an ancestor (for
`metadata.name`, a rule at the schema's root), or one rule that bounds the sum of several
fields' sizes (`size(self.app) + size(self.env) <= 58` on `spec`, also written with `.size()`,
`<`, `N >= …`, in parentheses, or as one `&&` conjunct), which bounds those fields together —
so that the longest name fits in 63 characters, under every served version; and every limit states its reason: the field's
`description` for `maxLength`, the rule's `message` for CEL. On a composite (`check` with the
definition in `--context`), the names its values derive are at most 63 characters.

## Why it matters

A name that overflows fails far from its cause: the composite is accepted, and a namespace,
Helm release or Job the controller creates later is refused by the API server. A limit without
its reason is the first one someone loosens.

## Example

```yaml
spec:
  versions:
    - name: v1alpha1
      schema:
        openAPIV3Schema:
          x-kubernetes-validations:
            - rule: size(self.metadata.name) <= 52
              message: the <name>-tektoncicd release must fit 63 characters
          properties:
            spec:
              properties:
                app: {type: string}      # refused: app-{spec.app}-{spec.env} has no bound
```

## How to fix

Give each field the template uses a limit, and say why in its description or message; keep
literal text in the template short. A template that cannot fit is a design to change.

## References

Airframe API versioning and deprecation (\"Constraints every kind carries\").
";

const DOC_201: &str = "\
## What it checks

A property that a schema declared is gone from the new schema: a CRD version's field, a launcher type's property, a construct's parameter or environment config. The diff reports each removal once, at the removed property (what it contained is not listed again).

## Why it matters

A manifest survives a field it does not use and cannot survive one that vanished: with a closed schema the old documents are refused, with pruning their values are silently dropped.

## Example

```yaml
old:  spec: {properties: {replicas: {type: integer}, mode: {type: string}}}
new:  spec: {properties: {replicas: {type: integer}}}        # spec.mode removed: MAJOR
```

## How to fix

Keep the field (mark it deprecated in its description), or ship the removal under a new version: a new CRD version, a new construct major. Renaming is adding the new field, migrating, then removing the old one as a breaking change.

## References

The platform's VERSIONING.md (MAJOR: removing a parameter, an environment config or an output). Airframe API versioning and deprecation (a removed field is a tightening, even inside v1alpha1).
";

const DOC_202: &str = "\
## What it checks

A new property that is required at once, or an existing optional property that became required. A required field inside a *new optional* object is not reported: no existing document has that object.

## Why it matters

Every document written before the change lacks the field and is refused on its next update.

## Example

```yaml
old:  required: [name]
new:  required: [name, owner]   # spec.owner became required: MAJOR
```

## How to fix

Add the field as optional with a default the controller applies, or ship the requirement under a new version.

## References

The platform's VERSIONING.md (making an optional parameter required is MAJOR). Airframe API versioning and deprecation.
";

const DOC_203: &str = "\
## What it checks

The declared type of a field accepts less than before (`number` to `integer`) or something else entirely (`string` to `integer`). Widening (`integer` to `number`, a type removed) is MINOR.

## Why it matters

A value that was valid under the old type is refused, or read differently, under the new one.

## Example

```yaml
old:  port: {type: string}
new:  port: {type: integer}     # MAJOR: \"8080\" no longer validates
```

## How to fix

Keep the old type. `x-kubernetes-int-or-string` accepts both spellings where a field must move from one to the other.

## References

The platform's VERSIONING.md (narrowing a type is MAJOR).
";

const DOC_204: &str = "\
## What it checks

An enum value was removed, or an enum was put on a field that accepted any value. Adding an enum value is MINOR, and dropping an enum is MINOR.

## Why it matters

Every document that set the removed value is refused: losing `large` breaks everyone who set it, while gaining `xsmall` breaks nobody.

## Example

```yaml
old:  sizeClass: {enum: [small, medium, large, xlarge]}
new:  sizeClass: {enum: [small, medium, large]}   # MAJOR: xlarge removed
```

## How to fix

Keep every value that was accepted; refuse it in the controller with a clear message if it must not be used, and remove it under a new major.

## References

The platform's VERSIONING.md (the ruby-service 2.0.0 worked example removes `xlarge`).
";

const DOC_205: &str = "\
## What it checks

A value constraint that lets fewer values through: a pattern or format added or changed; `maxLength`, `maximum`, `maxItems`, `maxProperties` lowered or added; `minLength`, `minimum`, `minItems`, `minProperties` raised or added; an exclusive bound, `uniqueItems`, `multipleOf` added; a list turned into a set or map list, or its map keys changed. The opposite moves are MINOR.

## Why it matters

The API server applies the new schema to every later update of an existing object: an object that was valid becomes un-updatable.

## Example

```yaml
old:  name: {type: string, maxLength: 63}
new:  name: {type: string, maxLength: 40}   # MAJOR
```

## How to fix

Keep the old bound, or check that every live object already satisfies the new one (CVN-215) before shipping it.

## References

Airframe API versioning and deprecation (a narrower pattern or length limit is breaking even inside v1alpha1).
";

const DOC_206: &str = "\
## What it checks

A CEL rule (`x-kubernetes-validations`, a construct's `validations`, `preRenderValidations` or `postRenderValidations`) was added, or its rule text changed (a changed rule is one removal and one addition). Rules are matched by their text; a rule whose message only changed is PATCH; a removed rule is MINOR. A render-time validation's text includes its scope — `target` (group, version, kind, `where`, `mustMatch`), `targetPlane`, `forEach`/`var`, `when` — so a narrower guard, a wider target or a target that must now match is a changed rule.

## Why it matters

A new rule refuses objects the old schema accepted; existing objects that fail it can no longer be updated.

## Example

```yaml
new:  x-kubernetes-validations: [{rule: \"self.replicas <= 10\"}]   # MAJOR
```

## How to fix

Check every live object against the rule first (CVN-215 does this for CRDs), or ship it under a new version. covenant does not evaluate CEL; it says so instead of guessing.

## References

Airframe API versioning and deprecation (a new CEL rule is a tightening). The platform's VERSIONING.md (adding a validation that existing manifests fail).
";

const DOC_207: &str = "\
## What it checks

A default put on an existing field, removed, or changed. A default on a new field is part of adding it.

## Why it matters

Changing a default is a semantic change: every document that relied on it deploys something else, with no edit of its own.

## Example

```yaml
old:  mode: {type: string, default: Managed}
new:  mode: {type: string, default: Unmanaged}   # MAJOR
```

## How to fix

Keep the default; a new behaviour gets a new field or a new version.

## References

The launcher design (launcher.gokure.dev) (\"there is no just tweaking a default\"). The platform's VERSIONING.md.
";

const DOC_209: &str = "\
## What it checks

A field got less open: `nullable` cleared, `x-kubernetes-preserve-unknown-fields` cleared, `x-kubernetes-int-or-string` cleared, or `additionalProperties` closed or given a schema where anything was accepted.

## Why it matters

Documents that carried nulls, unknown keys or the other spelling are refused or pruned.

## Example

```yaml
old:  config: {type: object, x-kubernetes-preserve-unknown-fields: true}
new:  config: {type: object, properties: {a: {type: string}}}   # MAJOR
```

## How to fix

Keep the field open, or declare every key existing documents use before closing it under a new version.

## References

The launcher design (launcher.gokure.dev) (strictness stops where the schema opens).
";

const DOC_210: &str = "\
## What it checks

On a CRD or XRD update: a served version was removed or stopped being served; a version still listed in `status.storedVersions` was dropped from `spec.versions`; or the storage version moved, without a conversion webhook, to a version whose schema accepts less than the old storage version's. A storage move that every live object satisfies (CVN-215 proves it) is not reported: what is stored reads as the new storage version.

## Why it matters

Clients of a removed version break at once; objects stored at a dropped version can no longer be read; a storage move between different shapes without conversion rewrites objects under a schema they were not written for.

## Example

```yaml
old:  versions: [{name: v1alpha1, served: true}, {name: v1, served: true, storage: true}]
new:  versions: [{name: v1, served: true, storage: true}]   # v1alpha1 removed
```

## How to fix

Deprecate the version first, keep serving it for at least one release, migrate stored objects (and `status.storedVersions`), then remove it.

## References

Airframe API versioning and deprecation (shipping a new version; stop serving the old one a release later).
";

const DOC_211: &str = "\
## What it checks

On a CRD or XRD update: the scope, group, kind or plural changed (and the XRD's claim names).

## Why it matters

The API server refuses most of these; where it does not, every client and every stored object refers to the old identity.

## Example

```yaml
old:  scope: Cluster
new:  scope: Namespaced   # refused
```

## How to fix

Create a new CRD with the new identity and migrate objects with the delete-old/create-new recipe.

## References

Airframe API versioning and deprecation (a real reshape is a new kind or a new group).
";

const DOC_214: &str = "\
## What it checks

Under the `from-ga` stability policy, a breaking change to a version whose name carries a stability promise (`v1`, `v2` — not `v1alpha1` or `v1beta1`). Before GA the same change is reported at its own rule as a warning carrying the changelog hint.

## Why it matters

Everything that pins a GA version string relies on the promise that documents valid under it stay valid.

## Example

```yaml
a field removed from version v1 of a CRD whose family policy is from-ga   # refused
```

## How to fix

Ship the breaking change under a new version string (graduate to v2), or make it additive.

## References

The launcher design (launcher.gokure.dev) (Document-Format Lifecycle: breaking changes move the version string from the first GA release).
";

const DOC_215: &str = "\
## What it checks

A CRD or XRD update that tightens a version's schema (or moves the storage version to a schema that accepts less) is checked against the live custom resources of that version, listed through the cluster view (paginated, inside the request's budget; `covenant check --context DIR` offline). Every live object is validated as the apiserver would validate it: types, bounds, enums, required keys, closedness, `pattern` (RE2, with Rust's `regex`), `format`, `x-kubernetes-list-type` and `x-kubernetes-validations` CEL rules (with `self`, and `oldSelf` bound to `self`, as at the object's next update that leaves the field alone).

- Every object satisfies the new schema: the tightening is allowed, with this warning.
- No live object exists: it is satisfied vacuously, and allowed with this warning.
- Some object fails: refused, naming the first failing objects (namespace/name, pointer, why).
- Only what truly cannot be evaluated stays refused as \"cannot prove\", and the message names it: a CEL function covenant's evaluator does not provide, a pattern that is not RE2, an unclassified change.
- Every CEL evaluation is bounded as the apiserver bounds it: at most 1,000,000 cost units for one rule on one object and 10,000,000 for all rules on one object (a unit a call, plus a unit a list element or ten string bytes a call makes, plus a unit an element a comprehension walks); no string over 4 MiB or list over 1,000,000 elements is made (`replace` is priced before it runs); a rule longer than 100,000 code points, holding more than 500 operators, or nesting deeper than 250 is not parsed; patterns are compiled once. Past a bound, or at the request's deadline, the proof is \"cannot prove\", naming the bound.

CEL libraries evaluated: the standard library and macros; the strings, lists and math extensions; Kubernetes lists (`isSorted`, `sum`, `min`, `max`), regex (`find`, `findAll`), quantity (`quantity`, `isQuantity`, `compareTo`, `isLessThan`, `isGreaterThan`, `asInteger`, `asApproximateFloat`, `sign`) and URL (`url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery`). Not evaluated: the `format` library, IP/CIDR, semver and authorizer functions.

Without cluster state the tightening findings stand; when the list cannot finish in budget or RBAC forbids it, CVN-901 reports it per the failure policy.

## Why it matters

The API server applies the new schema to every later update of an existing object: a tightening that existing objects fail leaves them un-updatable.

## Example

```yaml
new:  name: {maxLength: 40}   with a live object whose spec.name has 52 characters   # refused, naming it
new:  x-kubernetes-validations: [{rule: \"self.replicas <= 10\"}]   every live object has replicas <= 10   # allowed, with a warning
```

## How to fix

Migrate the listed objects first, then apply the tightened schema.

## References

Airframe API versioning and deprecation (tightening ships only when every live object already satisfies it).
";

const DOC_216: &str = "\
## What it checks

The versions a CRD or XRD serves must share one schema shape when nothing converts between them (an XRD never has a conversion webhook; a CRD without `spec.conversion.strategy: Webhook`). Only differences that appear with this update are reported; descriptions may differ.

## Why it matters

Without conversion, an object written through one version is read through the other under a schema it was not written for.

## Example

```yaml
versions: [{name: v1, schema: {...port: string}}, {name: v2, schema: {...port: integer}}]   # refused
```

## How to fix

Promote without reshaping: add the new version with the same schema, flip referenceable/storage, deprecate the old one. A reshape is a new kind.

## References

Airframe API versioning and deprecation (Shipping a new version: a rename-free promotion, never a reshape).
";

const DOC_217: &str = "\
## What it checks

For an XRD: exactly one version is referenceable; a deprecated version carries a `deprecationWarning` that names another version of the XRD (its replacement); a version stops being served only if it was already deprecated before this update.

## Why it matters

Clients learn about a deprecation from the warning the API server sends; a version that disappears without one breaks them without notice.

## Example

```yaml
versions: [{name: v1alpha1, deprecated: true}]   # refused: no deprecationWarning naming v1beta1
```

## How to fix

Mark the old version deprecated with a warning naming its replacement, release, then stop serving it.

## References

Airframe API versioning and deprecation (steps 3 and 5 of shipping a new version).
";

const DOC_219: &str = "\
## What it checks

An XRD without `spec.defaultCompositionRef`.

## Why it matters

A composite that names no composition is then resolved by label selection, which is not deterministic.

## Example

```yaml
spec: {group: catalog.hangar.io, names: {kind: XDatabase}}   # no defaultCompositionRef
```

## How to fix

Set `spec.defaultCompositionRef` to the kind's composition.

## References

Airframe API versioning and deprecation (Constraints every kind carries).
";

const DOC_220: &str = "\
## What it checks

A schema difference that no evolution rule classifies: a changed vendor extension, `not`, the members of `anyOf`/`oneOf`, `x-kubernetes-embedded-resource`, or the same types spelled another way. It counts as MAJOR, the safe side, so nothing passes silently and the catalogue can grow.

## Why it matters

A difference nobody classified is a difference nobody reviewed.

## Example

```yaml
old:  anyOf: [{required: [a]}, {required: [b]}]
new:  anyOf: [{required: [a]}]   # unclassified: MAJOR
```

## How to fix

Review the change; if it is safe, exempt the object in config or set this rule's action to warn.

## References

covenant's own addition to the catalogue (DESIGN: nothing unhandled passes silently).
";

const DOC_212: &str = "\
## What it checks

Where a document declares its version — a launcher Package's `metadata.version`, a construct's
`openchoreo.dev/version` — the move between the previous version and this one must be at least
the bump the contract diff implies: MAJOR for anything removed or tightened, MINOR for
anything added or loosened, PATCH for no contract change. An update that changes the contract
without moving the version at all is refused too. For a Package the contract is its
parameters (names, types, required, defaults).

## Why it matters

Consumers pin a version range; the range is only honest if the version says what changed.
A breaking change shipped as a minor reaches every consumer pinned to the major.

## Example

```yaml
# 1.0.0 declares parameter replicas (integer); 1.1.0 removes it
metadata: {name: webservice, version: \"1.1.0\"}   # refused: implied MAJOR, declared MINOR
```

## How to fix

Move the version as far as the change implies (`2.0.0` here), or make the change additive.
`covenant diff OLD NEW` shows every change with its bump.

## References

The platform's VERSIONING.md (Severity is derived, never declared; MAJOR / MINOR / PATCH).
";

const DOC_213: &str = "\
## What it checks

The declared version moved further than the contract diff implies: a MAJOR that removes and
tightens nothing, a MINOR with no addition.

## Why it matters

A major is a decision every consumer has to make; publishing one that breaks nothing is a
lie about the contract and an upgrade finding nobody can act on (the platform's VERSIONING.md).

## Example

```yaml
# only a description changed between 1.2.0 and this
metadata: {name: webservice, version: \"2.0.0\"}   # warned: implied PATCH, declared MAJOR
```

## How to fix

Publish the smallest bump the diff implies. If the major is deliberate (a behaviour change the
schema cannot show), keep it and accept the warning.

## References

The platform's VERSIONING.md (regenerating eight constructs at one number would publish eight 2.0.0s that break
nothing).
";

const DOC_901: &str = "\
## What it checks

A rule that needs cluster state (CVN-215 lists the live custom resources of a CRD whose schema
tightens) asks the cluster view within the request's budget: what is left of the
apiserver's `?timeout=` minus a margin to answer in, capped by `cluster.lookupBudget` (for
`covenant check`, the configured budget). When the lookup cannot finish in time, or the API
server forbids it (the message names the verb, resource and API group to grant in
`deploy/rbac.yaml`), this rule reports it, and `cluster.failurePolicy` decides: `deny` refuses the object (and the
tightening the lookup could not clear stays refused), `allow` admits it with this warning
(and the tightening with warnings). Without any cluster state (`--offline`, or `check`
without `--context`) nothing is looked up and the tightening findings stand as they are.

## Why it matters

A webhook that hangs past the apiserver's deadline fails the request anyway, and a guess
about objects nobody listed is worse than either answer. The policy makes the trade-off
explicit and visible.

## Example

```yaml
apiVersion: covenant.dev/v1alpha1
kind: Config
cluster:
  lookupBudget: 2s
  failurePolicy: deny   # a CRD tightening whose live objects cannot be listed in 2s is refused
```

## How to fix

Retry once the cluster answers; raise `cluster.lookupBudget` (within the webhook's
`timeoutSeconds`); or choose `failurePolicy: allow` where availability matters more than the
check.

## References

DESIGN (Apply order, reliability: a slow lookup degrades to the failure policy, never a hang).
";

const DOC_301: &str = "\
## What it checks

Component, trait and policy type names are one flat namespace across every registry and dialect given (`covenant check --registry --dialect`, `registries:` in the config). A name declared in two categories is refused, unless both declarations project the same API kind (the later launcher line's `ingress` component and `ingress` trait both project networking.k8s.io Ingress, so they mean the same thing). An Application that uses a name in a category that does not own it is refused naming the owner.

## Why it matters

Without one namespace, launcher could ship a builtin under a name a downstream dialect already uses with a different meaning: a permanent collision neither side can resolve after the fact.

## Example

```yaml
# registry: {name: backup, category: trait}
# dialect acme: {name: backup, category: component}   # refused
```

## How to fix

Rename one of the two; a name that means the same thing in both categories declares the kind both project (`projects:`).

## References

The launcher design (launcher.gokure.dev) (Type-Name Reservation Covenant: one flat namespace by convention, now checked).
";

const DOC_302: &str = "\
## What it checks

A name in active use by a dialect (its `reserved:` list) is reserved with its whole family: reserving `backup` reserves `backup.v2`, `backup.v3`, and so on. A type of any other origin that takes one is refused unless it declares `upstreams: <dialect>` (upstreaming the feature with the same semantics), and then its schema must accept everything the dialect's type accepts: the schema diff finds no narrowing.

## Why it matters

The covenant exists so launcher never ships a builtin under a name a dialect already uses with other semantics.

## Example

```yaml
# dialect acme reserves trait backup
- name: backup.v2          # refused: the family of backup is reserved by acme
  category: trait
```

## How to fix

Pick another name (upstream-or-rename), or upstream the dialect's feature: `upstreams: acme` with a schema that accepts everything the dialect's does.

## References

The launcher design (launcher.gokure.dev) (Reservation, Upstream-or-rename, Family reservation).
";

const DOC_303: &str = "\
## What it checks

The type-name grammar: lowercase letters, digits and inner hyphens, and the only dot is the generation marker `.v<N>` with N >= 2. The bare name is generation 1, so `backup.v1` is refused naming `backup`. CapabilityDefinitions name trait types and are held to it too.

## Why it matters

A dot that means something else, or two spellings of generation 1, breaks the family reservation every dialect relies on.

## Example

```yaml
- name: backup.v1     # refused: write backup
- name: backup.v2     # fine: the second generation
```

## How to fix

Write the bare name for generation 1 and `.v2`, `.v3`, ... for successors; use hyphens elsewhere.

## References

The launcher design (launcher.gokure.dev) (Family reservation: the dot is reserved exclusively for the generation marker).
";

const DOC_304: &str = "\
## What it checks

A kind-named type (a registry entry that declares `projects: {group, version, kind}`) takes its kind's name in lowercase: HTTPRoute becomes `httproute`, HelmChart `helmchart`. A vendor prefix, `<vendor>-<kind>`, only where the bare name is already taken by something a reader would plausibly mean: another registered type, or a reason the entry states (`prefixReason`). A warning by default: the naming rule binds choices, not the parser.

## Why it matters

Readers find a type by its kind; a prefix nobody needed, or a role name on a plain projection, sends them looking.

## Example

```yaml
- name: cilium-networkpolicy     # fine: networkpolicy is taken by the core kind
  projects: {group: cilium.io, version: v2, kind: CiliumNetworkPolicy}
- name: fluxcd-kustomization     # fine with its reason
  projects: {group: kustomize.toolkit.fluxcd.io, version: v1, kind: Kustomization}
  prefixReason: bare kustomization collides with kustomization.yaml
```

## How to fix

Rename to the kind's lowercase name, or state why the bare name is taken.

## References

The launcher design (launcher.gokure.dev) (Naming rule; the cilium-networkpolicy precedent; fluxcd-kustomization; helmchart reused for the HelmChart CR).
";

const DOC_305: &str = "\
## What it checks

A type name registered as terminal (a handler serves it) in one place and lowerable (a lowering rule expands it) in another. The launcher's own registration panics on this; covenant reports it across registries and dialects before anything registers.

## Why it matters

The lowering fixpoint expands a lowerable type until only terminal ones remain: a name on both sides makes that undecidable.

## Example

```yaml
# builtin: {name: expose, category: trait, tier: lowerable}
# registry: {name: expose, category: trait, tier: terminal}   # refused
```

## How to fix

Rename one side. `expose` (lowerable) lowering into `ingress` (terminal) is the pattern: two names.

## References

The launcher design (launcher.gokure.dev) (Axis A: terminal vs lowerable).
";

const DOC_306: &str = "\
## What it checks

A dialect's `shadowed:` type (a launcher name it also defines) must remain a compatible superset of the upstream type: the schema diff from upstream to downstream contains no narrowing (nothing removed, tightened, retyped or closed), so every value the upstream accepts, the downstream accepts with the same meaning.

## Why it matters

Documents written for launcher must keep working under the dialect that extends it; a shadow that narrows breaks them silently.

## Example

```yaml
# upstream webservice: port {type: integer}
# dialect shadow:     port {type: integer, maximum: 1024}   # refused: maximum added
```

## How to fix

Widen the shadowing schema, or rename the downstream type.

## References

The launcher design (launcher.gokure.dev) (Shadowed types stay compatible supersets).
";

const DOC_107: &str = "\
## What it checks

A consumer's `parameters` (a Component's, each trait instance's, a workflow's, a Project's or Resource's) validate strictly against the parameters schema of the construct version its pin resolves to; a ReleaseBinding's `componentTypeEnvironmentConfigs` and `traitEnvironmentConfigs[<instance>]` against the environmentConfigs schemas its release froze. An undeclared key is refused, and when another published version declared it, the message names it: the field a later major removed.

Every keyword of the schema is applied, as the apiserver applies it: types, `enum` (objects included), bounds (`minimum`, `maximum`, `multipleOf`, lengths, item and property counts), `required`, `pattern` (RE2), `format`, `uniqueItems`, `not`, `allOf`/`anyOf`/`oneOf`, `x-kubernetes-list-type`, and `x-kubernetes-validations` CEL rules (evaluated within the bounds CVN-215 states). A keyword covenant cannot apply — a CEL function its evaluator lacks, a rule past the evaluation bounds, a `format` it does not know (the OpenAPI number formats and `password`, which the apiserver does not validate either, say nothing) — is a warning that names it, never a silent pass.

A version whose section is absent, or an object that declares no properties (`properties: {}`), declares **no** values: a consumer that sets one is refused like any other undeclared key. Only a section that says it is open (`x-kubernetes-preserve-unknown-fields`, `additionalProperties`) takes keys it does not declare.

## Why it matters

OpenChoreo accepts a binding field the frozen schema does not declare and ignores it: in the platform's VERSIONING.md, otel-instrumentation 2.0.0 removed collectorEndpoint, and a binding setting it rendered nothing and said nothing.

## Example

```yaml
traitEnvironmentConfigs:
  otel:
    collectorEndpoint: http://collector:4317   # refused: otel-instrumentation 2.0.0 removed it; 1.0.0 declared it
```

## How to fix

Drop the field, or pin the version that declares it.

## References

The platform's VERSIONING.md (the second worked example: a trait, and what a MAJOR is actually worth).
";

const DOC_208: &str = "\
## What it checks

A construct output (a ResourceType's `outputs`, the keys other components bind to) or a rendered object a consumer can see (a resource template's id, kind, literal name or ports) was removed or changed. So is a trait `removes` entry added or widened (it deletes objects a consumer deployed; one dropped is MINOR, the objects rendered again), a rendered entry's `includeWhen`, `forEach` or `targetPlane` added or changed (the object may no longer be rendered where it was; `includeWhen` dropped is MINOR), and a ComponentType's `workloadType` changed (consumers name the type `<workloadType>/<name>`). Template changes that touch none of these are PATCH implementation rows.

## Why it matters

Outputs are the most load-bearing part of a contract: consumers bind to them by name.

## Example

```yaml
outputs: [{name: host}, {name: port}]  ->  outputs: [{name: host}]   # MAJOR: port removed
```

## How to fix

Keep the output, or publish the removal as a new major object.

## References

The platform's VERSIONING.md (What the number describes: the outputs; the observable shape of what it renders).
";

const DOC_401: &str = "\
## What it checks

Every `openchoreo.dev/rendered-from-version` stamp in a construct's resource templates equals its declared version, and every `openchoreo.dev/rendered-from-type` its logical name.

## Why it matters

A live resource claiming to have been built by a version that never existed is worse than no answer.

## Example

```yaml
metadata:
  annotations: {openchoreo.dev/version: \"1.1.0\"}
...
      template:
        metadata:
          annotations: {openchoreo.dev/rendered-from-version: \"1.0.0\"}   # refused
```

## How to fix

Update the stamps with the version, or let the mutating webhook write them (CVN-501).

## References

The platform's VERSIONING.md (The rule that makes it usable).
";

const DOC_402: &str = "\
## What it checks

A construct that declares a version (`openchoreo.dev/version` annotation) also carries the `openchoreo.dev/name` and `openchoreo.dev/version` labels, equal to its logical name and that version.

## Why it matters

Resolution is by label: a version annotation without the labels declares a version nobody can pin.

## Example

```yaml
metadata:
  name: ruby-service-v2
  annotations: {openchoreo.dev/version: \"2.0.0\"}   # refused: no labels
```

## How to fix

Add both labels (the mutating webhook can: CVN-502).

## References

The platform's VERSIONING.md (Pinning a version: a construct that annotates and does not label).
";

const DOC_403: &str = "\
## What it checks

A labelled construct's object name is `<logical>-v<major>`, derived from its version, and at most 63 characters. Objects published before the scheme (no label at all) keep their logical name: the migration path.

## Why it matters

A suffix that can disagree with the version it encodes eventually will; every object name says which major it is.

## Example

```yaml
metadata:
  name: ruby-service-2        # refused: ruby-service-v2
  labels: {openchoreo.dev/name: ruby-service, openchoreo.dev/version: \"2.0.0\"}
```

## How to fix

Rename the object to the derived name.

## References

The platform's VERSIONING.md (Object names carry the major, including the first).
";

const DOC_404: &str = "\
## What it checks

At most one object per logical name carries `openchoreo.dev/default: \"true\"` (needs cluster state: the webhook's view, or `check --context`).

## Why it matters

An unpinned consumer floats to the default; two defaults make that a coin toss.

## Example

```yaml
ruby-service-v1 and ruby-service-v2 both labelled default   # refused
```

## How to fix

Move the label deliberately: remove it from one.

## References

The platform's VERSIONING.md (Which version an unpinned consumer gets).
";

const DOC_405: &str = "\
## What it checks

No two objects carry one full version of a logical name, and a pin never resolves between them.

## Why it matters

A consumer would otherwise be rendered from whichever object sorted earlier, silently, and differently on a different day.

## Example

```yaml
ruby-service-v2 and ruby-service-copy both labelled openchoreo.dev/version: \"2.0.0\"   # refused
```

## How to fix

Remove one of the objects.

## References

The platform's VERSIONING.md (Two objects at the same full version is still an error).
";

const DOC_406: &str = "\
## What it checks

Every pin (a Component's `componentType`, each `traits[]` entry, `workflow`; a Project's or Resource's `spec.type`) resolves by the `openchoreo.dev/name` label: `\"2\"` any 2.x.y, `\"2.0\"` any 2.0.x, `\"2.0.1\"` only itself, the newest satisfying wins, a pre-release only exactly, empty floats to the default. When the name is published but no version satisfies, the refusal names every published version and the kubectl that lists them. When nothing of that name is published yet, it is a warning: GitOps tools apply in no fixed order.

## Why it matters

A pin to an unpublished version is otherwise invisible outside the controller log: the project reports Ready while it has stopped tracking its manifest.

## Example

```yaml
componentType: {kind: ClusterComponentType, name: deployment/ruby-service, version: \"9\"}
# refused: published ruby-service-v2=2.0.0, ruby-service-v1=1.1.0
```

## How to fix

Pin a published version.

## References

The platform's VERSIONING.md (A pin is a range, and its length is the whole policy; Zero matches is an error).
";

const DOC_407: &str = "\
## What it checks

A Workload's container images carry a tag that is not `latest`, or a digest.

## Why it matters

A floating tag deploys whatever was pushed last: the version is the commit, and a tag is a pointer to it.

## Example

```yaml
container:
  image: ghcr.io/acme/shop:latest   # refused
```

## How to fix

Tag images with the commit (`v1-<sha8>`) or pin a digest.

## References

The platform's VERSIONING.md (Application images are not versioned: every component type refuses :latest).
";

const DOC_408: &str = "\
## What it checks

A construct's version is valid semver, and a consumer's pin is one, two or three numeric parts (or an exact pre-release). A 0.x construct carries `openchoreo.dev/description` saying it is experimental: constructs start at 1.0.0.

## Why it matters

0.x advertises that the contract may change without notice, which is a lie about a construct holding somebody's database.

## Example

```yaml
annotations: {openchoreo.dev/version: \"0.3.0\"}   # refused without a description saying experimental
```

## How to fix

Publish 1.0.0, or mark the construct experimental.

## References

The platform's VERSIONING.md (Starting at 1.0.0, not 0.1.0).
";

const DOC_409: &str = "\
## What it checks

A MAJOR is a new object: an UPDATE that moves a construct's major in place is refused, naming the object to create (`<logical>-v<major>`). MINOR and PATCH move the existing `-v<major>` object forward in place.

## Why it matters

Only a major is a thing a consumer has to decide about; applied in place it upgrades every consumer of the object involuntarily.

## Example

```yaml
ruby-service-v1 updated from 1.1.0 to 2.0.0   # refused: create ruby-service-v2
```

## How to fix

Create the new object and leave the old major to its consumers.

## References

The platform's VERSIONING.md (MINOR AND PATCH DO NOT GET A NEW OBJECT).
";

const DOC_410: &str = "\
## What it checks

Deleting a construct version that consumers still resolve to is allowed with a warning naming them (needs cluster state).

## Why it matters

A deleted version leaves its consumers failing with zero matches on their next reconcile.

## Example

```yaml
DELETE ClusterComponentType ruby-service-v1 while Component shop/web pins \"1\"   # warned
```

## How to fix

Move the consumers first.

## References

The platform's VERSIONING.md (The version is not published, or has been retired).
";

const DOC_411: &str = "\
## What it checks

A pin resolving below the supported range is admitted with a warning naming the newest supported version. The range is the current major, plus the previous major until the current major reaches its next minor.

## Why it matters

The support window is only real if it is visible at apply time and in audit.

## Example

```yaml
pin \"1\" while 2.1.0 is published   # warned: below the supported range 2.x (newest supported: 2.1.0)
```

## How to fix

Move the pin to a supported major.

## References

The platform's VERSIONING.md (Pin the major: the only granularity the support window can mean anything about).
";

const DOC_501: &str = "\
## What it checks

A mutation rule, off by default (turn it on with `rules: {actions: {CVN-501: mutate}}`, and
install the mutating webhook that sends covenant what to patch: `deploy/components/stamps`). On
CREATE and UPDATE of a construct, every resource template (`spec.resources[].template`, a
trait's `spec.creates[].template`) gets `metadata.annotations[\"openchoreo.dev/rendered-from-version\"]`
set to the construct's declared version and `[\"openchoreo.dev/rendered-from-type\"]` to its
logical name, added or corrected. An object the platform renders from a release (it carries
`openchoreo.dev/rendered-release-name`) gets the same two annotations from the version that
release froze, looked up through the cluster view; when the release cannot be resolved in
the request's budget, the object is admitted unchanged with a warning, never a guess. The
patch is RFC 6902 JSONPatch, idempotent, and the same on dry runs.

## Why it matters

Kept by hand, stamps drift from the version they claim (CVN-401 catches that); derived by the
webhook from the one declared version, they cannot disagree.

## Example

```yaml
metadata:
  annotations: {openchoreo.dev/version: \"1.1.0\"}
spec:
  resources:
    - id: deployment
      template:
        metadata:
          annotations:
            openchoreo.dev/rendered-from-version: \"1.1.0\"   # written by CVN-501
            openchoreo.dev/rendered-from-type: ruby-service    # written by CVN-501
```

## How to fix

Nothing to fix: turn the rule on and let it write. In git, `covenant check --fix` writes the
same stamps into the files.

## References

The platform's VERSIONING.md (The rule that makes it usable; Which version a release froze).
";

const DOC_502: &str = "\
## What it checks

A mutation rule, off by default (`rules: {actions: {CVN-502: mutate}}`, with the mutating
webhook of `deploy/components/stamps`). A construct that
declares `openchoreo.dev/version` gets the `openchoreo.dev/name` label (its logical name: the
object name less `-v<major>`, or an explicit annotation) and the `openchoreo.dev/version`
label, equal to the declared version.

## Why it matters

Resolution is by label: a version annotation without the labels declares a version nobody can
pin (CVN-402).

## Example

```yaml
metadata:
  name: ruby-service-v2
  annotations: {openchoreo.dev/version: \"2.0.0\"}
  labels:
    openchoreo.dev/name: ruby-service     # written by CVN-502
    openchoreo.dev/version: \"2.0.0\"      # written by CVN-502
```

## How to fix

Nothing to fix: turn the rule on, or run `covenant check --fix` on the files.

## References

The platform's VERSIONING.md (Pinning a version; a construct that annotates and does not label).
";
