//! The committed JSON Schema matches `schedsim schema`, and every bundled scenario is valid
//! against its top-level shape (required fields present, no unknown `spec` fields).

mod common;

use common::cli::ok;

#[test]
fn the_committed_schema_is_current() {
    let committed = std::fs::read_to_string("schema/scenario.schema.json").unwrap();
    assert!(
        ok(&["schema"]) == committed,
        "schema/scenario.schema.json is stale: run `cargo run -- schema > schema/scenario.schema.json`"
    );
}

#[test]
fn the_schema_knows_every_spec_field_the_scenarios_use() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("schema/scenario.schema.json").unwrap())
            .unwrap();
    let spec = &schema["$defs"]["ScenarioSpec"]["properties"];
    let files = schedsim::load::scenario_files(&[std::path::PathBuf::from("scenarios")]).unwrap();
    assert!(files.iter().any(|f| f.starts_with("scenarios/replay")));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
        for d in docs.iter().filter(|d| d["kind"] == "Scenario") {
            for key in d["spec"].as_object().unwrap().keys() {
                assert!(
                    spec.get(key).is_some(),
                    "spec.{key} missing from the schema"
                );
            }
        }
    }
}
