//! The product's own limits on input size, in one place.
//!
//! They keep hostile or absurd input (a YAML alias bomb, a pool of a billion nodes) from
//! exhausting memory, and are sized well above real clusters: Kubernetes' own scalability
//! envelope is 5,000 nodes and 150,000 pods per cluster, and the largest managed clusters run
//! 65,000 nodes. Each limit can be raised with the environment variable its error names.

use std::fmt::Display;

/// One limit: its default and the environment variable that raises it.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// What is counted, as the error message says it ("bytes in one input file").
    pub what: &'static str,
    pub env: &'static str,
    pub default: u64,
}

/// Bytes of one input file (YAML or JSON).
pub const FILE_BYTES: Limit = Limit {
    what: "bytes in one input file",
    env: "SCHEDSIM_MAX_FILE_BYTES",
    default: 16 << 30,
};

/// Documents in one multi-document YAML file (or values in one JSON stream).
pub const DOCUMENTS: Limit = Limit {
    what: "documents in one file",
    env: "SCHEDSIM_MAX_DOCUMENTS",
    default: 10_000_000,
};

/// Values copied by YAML aliases (`*name`, `<<: *name`) in one file: the defence against
/// "billion laughs" alias bombs, high enough for a template reused by a million pods.
pub const ALIAS_EXPANSION: Limit = Limit {
    what: "values copied by YAML aliases in one file",
    env: "SCHEDSIM_MAX_ALIAS_EXPANSION",
    default: 10_000_000,
};

/// Levels of nesting of YAML collections (Kubernetes objects need about 20). JSON files have
/// the fixed limit of 128 of the JSON reader (`serde_json`), whatever this says.
pub const NESTING: Limit = Limit {
    what: "levels of nesting",
    env: "SCHEDSIM_MAX_NESTING",
    default: 128,
};

/// Nodes in one scenario (inventories and generated pools together).
pub const NODES: Limit = Limit {
    what: "nodes in one scenario",
    env: "SCHEDSIM_MAX_NODES",
    default: 1_000_000,
};

/// Pods in one scenario (existing pods and workload pods together).
pub const PODS: Limit = Limit {
    what: "pods in one scenario",
    env: "SCHEDSIM_MAX_PODS",
    default: 10_000_000,
};

/// Variants of one scenario (the product of its `spec.variants` dimensions' options).
pub const VARIANTS: Limit = Limit {
    what: "variants of one scenario",
    env: "SCHEDSIM_MAX_VARIANTS",
    default: 100_000,
};

/// Points of a replay's time series at a fixed `spec.replay.sample` step (each a CSV row):
/// a step of a millisecond over a month would write billions.
pub const SERIES_POINTS: Limit = Limit {
    what: "points of a replay's time series",
    env: "SCHEDSIM_MAX_SERIES_POINTS",
    default: 10_000_000,
};

/// Pods that arrive in one replay (a trace streams, but each pod gets a 32-bit id).
pub const REPLAY_PODS: Limit = Limit {
    what: "pods arriving in one replay",
    env: "SCHEDSIM_MAX_REPLAY_PODS",
    default: u32::MAX as u64,
};

/// GPU devices of one FGD node list (`schedsim fgd --nodes`): each is simulated on its own.
pub const GPU_DEVICES: Limit = Limit {
    what: "GPU devices in one node list",
    env: "SCHEDSIM_MAX_GPU_DEVICES",
    default: 10_000_000,
};

/// Pods arriving in one FGD run: the pod list and the clones `--tune` adds.
pub const FGD_ARRIVALS: Limit = Limit {
    what: "pods arriving in one FGD run (the pod list and its clones)",
    env: "SCHEDSIM_MAX_FGD_ARRIVALS",
    default: 10_000_000,
};

/// Points (or removal sets) one `schedsim plan` search may simulate (`--max-evaluations`):
/// each keeps its result — the goal reached and up to 20 pending pods with their messages,
/// a few kilobytes — for the frontier and the report.
pub const PLAN_EVALUATIONS: Limit = Limit {
    what: "simulations in one plan search (--max-evaluations)",
    env: "SCHEDSIM_MAX_PLAN_EVALUATIONS",
    default: 100_000,
};

/// Node verdicts one `schedsim explain` records in a scenario: the pods explained × the nodes,
/// two bytes each while the run goes on.
pub const EXPLAIN_VERDICTS: Limit = Limit {
    what: "node verdicts in one explain (pods explained × nodes)",
    env: "SCHEDSIM_MAX_EXPLAIN_VERDICTS",
    default: 200_000_000,
};

/// Node lines one `schedsim explain --all-nodes` lists in a scenario (pods explained × nodes),
/// each a few hundred bytes in the report.
pub const EXPLAIN_NODE_LINES: Limit = Limit {
    what: "node lines in one explain --all-nodes (pods explained × nodes)",
    env: "SCHEDSIM_MAX_EXPLAIN_NODE_LINES",
    default: 2_000_000,
};

/// Every limit, for the README and `--help` texts.
pub const ALL: [Limit; 14] = [
    FILE_BYTES,
    DOCUMENTS,
    ALIAS_EXPANSION,
    NESTING,
    NODES,
    PODS,
    VARIANTS,
    SERIES_POINTS,
    REPLAY_PODS,
    GPU_DEVICES,
    FGD_ARRIVALS,
    PLAN_EVALUATIONS,
    EXPLAIN_VERDICTS,
    EXPLAIN_NODE_LINES,
];

impl Limit {
    /// The limit in force: the environment variable when it holds a number, else the default.
    pub fn value(&self) -> u64 {
        std::env::var(self.env)
            .ok()
            .and_then(|v| v.trim().replace('_', "").parse().ok())
            .unwrap_or(self.default)
    }

    /// Whether `count` is over the limit.
    pub fn exceeded_by(&self, count: u64) -> bool {
        count > self.value()
    }

    /// The message for an input that went over the limit with `actual`.
    pub fn message(&self, actual: impl Display) -> String {
        format!(
            "{actual} exceeds schedsim's limit of {} {} (raise it with the environment variable {}=N)",
            self.value(),
            self.what,
            self.env
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_limit_and_how_to_raise_it() {
        let m = DOCUMENTS.message("document 10000001");
        assert!(m.contains("limit of 10000000 documents in one file"), "{m}");
        assert!(m.contains("SCHEDSIM_MAX_DOCUMENTS=N"), "{m}");
    }
}
