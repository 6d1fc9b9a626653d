//! Dynamic Resource Allocation against upstream's test tables, transcribed as data into
//! `tests/data/dra/`: the CEL selector cases, the allocator cases and the API server's
//! validation of the objects; the allocator on NVIDIA's published devices (`fixtures/dra/`);
//! the objects through a scenario's `spec.objects`, and the claims pods get.

mod allocator;
mod capacity;
mod cel;
mod claims;
#[path = "../common/mod.rs"]
mod common;
mod extended;
mod fixtures;
mod generate;
mod load;
mod partitionable;
mod plugin;
mod properties;
mod taints;
mod validation;

/// A table of cases transcribed from upstream: one document, `cases:`.
#[derive(Debug, serde::Deserialize)]
struct Table<C> {
    cases: Vec<C>,
}

/// The cases of table `name` (its text embedded at `text`).
fn cases<C: serde::de::DeserializeOwned>(text: &str, name: &str) -> Vec<C> {
    let docs = schedsim::yaml::parse_documents(text.to_string(), std::path::Path::new(name))
        .expect("case file parses");
    let doc = docs
        .iter()
        .find(|d| !d.value.is_null())
        .expect("one document");
    (serde_json::from_value::<Table<C>>(doc.value.clone()).expect("case shape")).cases
}
