//! Whether cluster-autoscaler may drain a pod off a node it removes: its default drainability
//! rules (`simulator/drainability/rules/rules.go` `Default`, each rule in its folder there), in
//! their order, with the default flags (`--skip-nodes-with-system-pods`,
//! `--skip-nodes-with-local-storage`, `--skip-nodes-with-custom-controller-pods` all true,
//! `--min-replica-count` 0). The first rule with an outcome decides.
//!
//! Two rules read what a scenario does not hold, and are left out (the README says so): the
//! `customcontroller` rule's lookup of the controller object (taken to exist) and the
//! `longterminating` rule's clock (a terminating pod is taken as gone with its node).

use crate::model::Pod;
use crate::sched::pdb::Budget;

/// What happens to a pod of a node being removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drain {
    /// It goes with the node (a mirror pod, a DaemonSet's pod, a terminal or terminating pod).
    Stays,
    /// It is evicted and must land elsewhere (its controller creates it again).
    Moves,
    /// It keeps the node from being removed: CA's `BlockingPodReason` and its message.
    Blocks {
        reason: &'static str,
        message: String,
    },
}

/// Controller kinds CA counts as replicating their pods (`replicated` rule, `replicatedKind`).
const REPLICATED_KINDS: &[&str] = &["ReplicationController", "Job", "ReplicaSet", "StatefulSet"];

/// The rules for `pod`, with `budgets` the cluster's PodDisruptionBudgets and `allowed[i]` the
/// disruptions budget `i` still allows (CA's `RemainingPdbTracker`).
pub fn drain(pod: &Pod, budgets: &[Budget], allowed: &[i32]) -> Drain {
    let facts = pod.drain;
    // `mirror`, `longterminating`: nothing to move.
    if facts.mirror || pod.deletion_timestamp.is_some() {
        return Drain::Stays;
    }
    // `daemonset`, `safetoevict`, `terminal`: interrupting checks.
    if is_daemon_set_pod(pod) || facts.terminal {
        return Drain::Stays;
    }
    if facts.safe_to_evict == Some(true) {
        return Drain::Moves;
    }
    let name = &pod.name;
    let ns = &pod.namespace;
    let block = |reason, message| Drain::Blocks { reason, message };
    // `replicated`.
    let replicated =
        (pod.controller.as_deref()).is_some_and(|c| REPLICATED_KINDS.contains(&c.kind.as_str()));
    if !replicated {
        return block("NotReplicated", format!("{ns}/{name} is not replicated"));
    }
    let matching = || (budgets.iter().enumerate()).filter(|(_, b)| b.selects(pod));
    // `system`.
    if ns == "kube-system" && matching().next().is_none() {
        return block(
            "UnmovableKubeSystemPod",
            format!(
                "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {name}"
            ),
        );
    }
    // `notsafetoevict`.
    if facts.safe_to_evict == Some(false) {
        return block(
            "NotSafeToEvictAnnotation",
            format!("pod annotated as not safe to evict present: {name}"),
        );
    }
    // `localstorage`.
    if facts.blocking_local_storage {
        return block(
            "LocalStorageRequested",
            format!("pod with local storage present: {name}"),
        );
    }
    // `pdb`.
    if matching().any(|(i, _)| allowed[i] < 1) {
        return block(
            "NotEnoughPdb",
            format!("not enough pod disruption budget to move {ns}/{name}"),
        );
    }
    Drain::Moves
}

/// `pod_util.IsDaemonSetPod`: its controller is a DaemonSet.
pub fn is_daemon_set_pod(pod: &Pod) -> bool {
    pod.controller
        .as_deref()
        .is_some_and(|c| c.kind == "DaemonSet")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pod::{ControllerRef, DrainFacts};
    use crate::sched::pdb::UnhealthyPolicy;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

    fn pod(ns: &str, kind: Option<&str>, drain: DrainFacts) -> Pod {
        Pod {
            name: "p".into(),
            namespace: ns.into(),
            labels: [("app".to_string(), "web".to_string())]
                .into_iter()
                .collect::<std::collections::BTreeMap<_, _>>()
                .into(),
            controller: kind.map(|k| {
                std::sync::Arc::new(ControllerRef {
                    api_version: "apps/v1".into(),
                    kind: k.into(),
                    name: "c".into(),
                    uid: String::new(),
                })
            }),
            drain,
            ..Default::default()
        }
    }

    fn budget(ns: &str) -> Budget {
        Budget {
            namespace: ns.into(),
            name: "b".into(),
            selector: Some(LabelSelector::default()),
            min_available: None,
            max_unavailable: None,
            unhealthy_policy: UnhealthyPolicy::default(),
            pod_scales: Default::default(),
            status: None,
        }
    }

    fn reason(d: Drain) -> &'static str {
        match d {
            Drain::Stays => "stays",
            Drain::Moves => "moves",
            Drain::Blocks { reason, .. } => reason,
        }
    }

    /// The rules in CA's order: the first with an outcome decides.
    #[test]
    fn rules_in_order() {
        let plain = DrainFacts::default();
        let facts = |f: fn(&mut DrainFacts)| {
            let mut d = DrainFacts::default();
            f(&mut d);
            d
        };
        let cases: Vec<(Pod, Vec<Budget>, Vec<i32>, &str)> = vec![
            (
                pod("ns", Some("ReplicaSet"), plain),
                vec![],
                vec![],
                "moves",
            ),
            (pod("ns", Some("Job"), plain), vec![], vec![], "moves"),
            (
                pod("ns", Some("StatefulSet"), plain),
                vec![],
                vec![],
                "moves",
            ),
            (pod("ns", None, plain), vec![], vec![], "NotReplicated"),
            // A custom controller (a Kubeflow PyTorchJob) is not replicated by default.
            (
                pod("ns", Some("PyTorchJob"), plain),
                vec![],
                vec![],
                "NotReplicated",
            ),
            (pod("ns", Some("DaemonSet"), plain), vec![], vec![], "stays"),
            (
                pod("ns", None, facts(|d| d.mirror = true)),
                vec![],
                vec![],
                "stays",
            ),
            (
                pod("ns", None, facts(|d| d.terminal = true)),
                vec![],
                vec![],
                "stays",
            ),
            // safe-to-evict=true skips every blocking rule, the budgets' too.
            (
                pod("ns", None, facts(|d| d.safe_to_evict = Some(true))),
                vec![budget("ns")],
                vec![0],
                "moves",
            ),
            (
                pod("kube-system", Some("ReplicaSet"), plain),
                vec![],
                vec![],
                "UnmovableKubeSystemPod",
            ),
            (
                pod("kube-system", Some("ReplicaSet"), plain),
                vec![budget("kube-system")],
                vec![1],
                "moves",
            ),
            (
                pod(
                    "ns",
                    Some("ReplicaSet"),
                    facts(|d| d.safe_to_evict = Some(false)),
                ),
                vec![],
                vec![],
                "NotSafeToEvictAnnotation",
            ),
            (
                pod(
                    "ns",
                    Some("ReplicaSet"),
                    facts(|d| d.blocking_local_storage = true),
                ),
                vec![],
                vec![],
                "LocalStorageRequested",
            ),
            (
                pod("ns", Some("ReplicaSet"), plain),
                vec![budget("ns")],
                vec![0],
                "NotEnoughPdb",
            ),
            (
                pod("ns", Some("ReplicaSet"), plain),
                vec![budget("other")],
                vec![0],
                "moves",
            ),
            // Not replicated comes before the budget.
            (
                pod("ns", None, plain),
                vec![budget("ns")],
                vec![0],
                "NotReplicated",
            ),
        ];
        for (i, (p, budgets, allowed, want)) in cases.into_iter().enumerate() {
            assert_eq!(reason(drain(&p, &budgets, &allowed)), want, "case {i}");
        }
    }

    #[test]
    fn messages_are_cluster_autoscalers() {
        let p = pod("ns", None, DrainFacts::default());
        assert_eq!(
            drain(&p, &[], &[]),
            Drain::Blocks {
                reason: "NotReplicated",
                message: "ns/p is not replicated".into()
            }
        );
    }
}
