//! The schema model's loaders over real schemas: CRD structural schemas from the corpus and
//! OpenChoreo's JSON Schema parameters with `$defs`/`$ref`.

use covenant::schema::openapi::{crd_schemas, load, Dialect};
use covenant::schema::pointer::Location;
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
    assert_eq!(limits.properties["cpu"].types, [Type::String]);
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
