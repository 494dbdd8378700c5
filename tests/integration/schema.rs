//! The schema model's loaders over real schemas: CRD structural schemas from the corpus and
//! OpenChoreo's JSON Schema parameters with `$defs`/`$ref`.

use covenant::pointer::Location;
use covenant::schema::openapi::{crd_schemas, load, Dialect};
use covenant::schema::validate::{validate, Problem, Required};
use covenant::schema::{Additional, Type};
use covenant::source::parse_stream;
use serde_json::{json, Value};

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(format!("tests/fixtures/{path}")).unwrap();
    let (mut docs, err) = parse_stream(&text);
    assert!(err.is_none(), "{path}: {err:?}");
    docs.remove(0).value
}

#[test]
fn every_served_version_of_real_crds_loads() {
    let review: Value =
        serde_json::from_str(&std::fs::read_to_string("tests/fixtures/bench/crd-update-400k.json").unwrap())
            .unwrap();
    let crds = [
        review["request"]["object"].clone(),
        review["request"]["oldObject"].clone(),
        yaml("schema/openchoreo-componenttypes-v1.2.0.yaml"),
        yaml("schema/openchoreo-components-v0.16.0.yaml"),
    ];
    for crd in &crds {
        let name = crd["metadata"]["name"].as_str().unwrap();
        let schemas = crd_schemas(crd).unwrap_or_else(|p| panic!("{name}: {p:?}"));
        assert!(!schemas.is_empty(), "{name}");
    }
    let ct = crd_schemas(&crds[2]).unwrap();
    let spec = &ct["v1alpha1"].properties["spec"];
    assert!(!spec.validations.is_empty(), "ComponentType spec carries CEL rules");
    assert_eq!(spec.additional, Additional::Closed);
    // `resources[].template` is a raw embedded object: open.
    let template = &spec.properties["resources"].items.as_ref().unwrap().properties["template"];
    assert_eq!(template.additional, Additional::Open);

    let routes = crd_schemas(&crds[0]).unwrap();
    let rules = &routes["v1"].properties["spec"].properties["rules"];
    assert!(rules.bounds.max_items.is_some());
}

#[test]
fn a_crd_schema_judges_an_object_strictly() {
    let crd = yaml("schema/openchoreo-componenttypes-v1.2.0.yaml");
    let schema = crd_schemas(&crd).unwrap().remove("v1alpha1").unwrap();
    let object = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ComponentType",
        "metadata": {"name": "svc"},
        "spec": {"workloadType": "deployment", "resources": [{"id": "deployment", "template": {"kind": "Deployment"}}],
                 "workloadTyp": "x"}});
    let violations = validate(&schema, &object, &Location::default(), Required::Everywhere).violations;
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].at.pointer, "/spec/workloadTyp");
    assert!(
        violations[0].message().contains("did you mean \"workloadType\"?"),
        "{}",
        violations[0].message()
    );
    let bad_enum = json!({"spec": {"workloadType": "daemonset", "resources": [{"id": "x", "template": {}}]}});
    let violations = validate(&schema, &bad_enum, &Location::default(), Required::Everywhere).violations;
    assert!(
        violations
            .iter()
            .any(|v| matches!(v.problem, Problem::NotInEnum { .. }) && v.at.pointer == "/spec/workloadType"),
        "{violations:?}"
    );
}

#[test]
fn openchoreo_parameters_with_defs_and_refs_load_and_judge() {
    let ct = yaml("schema/clustercomponenttype-service.yaml");
    let at =
        Location::new("/spec/environmentConfigs/openAPIV3Schema", "spec.environmentConfigs.openAPIV3Schema");
    let schema =
        load(&ct["spec"]["environmentConfigs"]["openAPIV3Schema"], &at, Dialect::JsonSchema).unwrap();
    let limits = &schema.properties["resources"].properties["limits"];
    assert_eq!(limits.properties["cpu"].types[..], [Type::String]);
    assert_eq!(limits.properties["cpu"].default, Some(json!("100m")));

    let good = json!({"replicas": 2, "resources": {"limits": {"cpu": "500m"}}, "imagePullPolicy": "Always"});
    assert!(validate(&schema, &good, &Location::default(), Required::Everywhere).violations.is_empty());
    let bad = json!({"replicas": -1, "resources": {"limits": {"cpus": "1"}}, "imagePullPolicy": "Sometimes"});
    let got: Vec<String> = validate(&schema, &bad, &Location::default(), Required::Everywhere)
        .violations
        .iter()
        .map(|v| format!("{} {}", v.at.path, v.message()))
        .collect();
    assert_eq!(got, [
        "imagePullPolicy expected one of [\"Always\", \"IfNotPresent\", \"Never\"], found a string \"Sometimes\"",
        "replicas expected a number at least 0, found a number -1",
        "resources.limits.cpus key \"cpus\" is not declared (allowed: cpu, memory); did you mean \"cpu\"?",
    ]);
    // The same document read as a CRD schema is refused: `$defs`/`$ref` are not structural.
    assert!(load(&ct["spec"]["environmentConfigs"]["openAPIV3Schema"], &at, Dialect::OpenApi).is_err());
}

/// The direct reader (a schema's text straight into the model) and the loader (the parsed
/// tree) read the same thing, whatever is wrong with it: real CRD schemas, each damaged in
/// one place chosen by a fixed pseudo-random walk (a value of the wrong type, an unknown or
/// a repeated keyword, `enum` beside `const`, a reference, a list of schemas), read with and
/// without unknown keywords kept, give equal models or equal problems.
#[test]
fn the_direct_reader_and_the_loader_agree_on_damaged_real_schemas() {
    use covenant::schema::openapi::{load_keeping_unknown, load_text};
    let schemas: Vec<Value> = [
        "crd-history/cert-manager/certificates/v1.12.0.yaml",
        "crd-history/gateway-api/gatewayclasses-standard/v1.2.0.yaml",
    ]
    .iter()
    .flat_map(|p| {
        let crd = yaml(p);
        crd["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["schema"]["openAPIV3Schema"].clone())
            .collect::<Vec<_>>()
    })
    .collect();
    let damages: [(&str, Value); 12] = [
        ("type", json!(5)),
        ("type", json!("strng")),
        ("minLength", json!(-1)),
        ("maxItems", json!(2.5)),
        ("description", Value::Null),
        ("x-covenant-unknown", json!({"a": 1})),
        ("const", json!("x")),
        ("items", json!([{"type": "string"}])),
        ("additionalProperties", json!("yes")),
        ("$ref", json!("#/definitions/x")),
        ("x-kubernetes-list-type", json!("bag")),
        ("allOf", json!([])),
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let at = Location::new("", "");
    let mut compared = 0;
    for schema in &schemas {
        for (keyword, value) in &damages {
            for _ in 0..3 {
                let mut damaged = schema.clone();
                // Walk down from the root through properties, items or additionalProperties.
                let mut node = &mut damaged;
                for _ in 0..next(6) {
                    let children: Vec<String> = node
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(|p| p.keys().cloned().collect())
                        .unwrap_or_default();
                    if children.is_empty() {
                        break;
                    }
                    let pick = children[next(children.len())].clone();
                    node = &mut node["properties"][&pick];
                }
                node[*keyword] = value.clone();
                let text = damaged.to_string();
                for keep in [false, true] {
                    let tree = if keep {
                        load_keeping_unknown(&damaged, &at, Dialect::OpenApi)
                    } else {
                        load(&damaged, &at, Dialect::OpenApi)
                    };
                    assert_eq!(
                        load_text(&text, &at, Dialect::OpenApi, keep),
                        tree,
                        "{keyword}: {value}, keep {keep}"
                    );
                    compared += 1;
                }
            }
        }
        // A keyword repeated in the text (the tree keeps the last; the loader reads the tree).
        let text = schema.to_string();
        let repeated = format!("{{\"type\":\"array\",{}", &text[1..]);
        let tree: Value = serde_json::from_str(&repeated).unwrap();
        assert_eq!(
            load_text(&repeated, &at, Dialect::OpenApi, true),
            load_keeping_unknown(&tree, &at, Dialect::OpenApi)
        );
    }
    assert!(compared >= 100, "{compared}");
}
