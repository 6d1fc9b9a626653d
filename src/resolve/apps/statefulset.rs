//! A StatefulSet as its controller runs it (`pkg/controller/statefulset`): one pod per
//! ordinal from `spec.ordinals.start` (default 0), `replicas` of them (default 1), named
//! `<set>-<ordinal>` (`getPodName`), labelled with the template's labels,
//! `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` (`initIdentity`) and
//! `controller-revision-hash` (`<set>-<hash>`, the revision's name; see the parent module on
//! hashes). With `podManagementPolicy: OrderedReady` (the default) the controller creates the
//! pod of an ordinal only once every lower one is Running and Ready (`processReplica` stops at
//! the first that is not): in schedsim, bound. `Parallel` creates them all at once.
//!
//! A pod of an ordinal that already exists in the scenario (`isMemberOf`: its name's parent is
//! the set) is not created again; a bound one is Ready, an unbound one (a pending pod of a
//! dump) holds the next ordinals back until it binds. A terminating pod still holds its
//! ordinal (the controller waits for it to go, which a run never sees) and counts as Ready.
//!
//! The API server validates the StatefulSet's template only against its selector; its pods
//! are validated when the controller creates them, so a StatefulSet whose pods the API server
//! refuses exists and has no pods. PersistentVolumeClaims (`volumeClaimTemplates`) are not
//! simulated.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::existing::{Claimant, KnownPods};
use super::{
    CONTROLLER_REVISION_HASH_LABEL, ControllerPods, Naming, controller_ref, template_hash,
    template_pod, validation,
};
use crate::features::FeatureGates;
use crate::model::validate::FieldError;
use crate::sched::plan::{DependsOnStatus, Requirement, Step, Waiter};

/// `apps.StatefulSetPodNameLabel`.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// `apps.PodIndexLabel` (PodIndexLabel, on by default since 1.28).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// `getParentNameAndOrdinal`: `(.*)-([0-9]+)$`, the ordinal an int32.
pub fn parent_and_ordinal(pod: &str) -> Option<(&str, i64)> {
    let (parent, digits) = pod.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ordinal = digits.parse::<i32>().ok()?;
    Some((parent, i64::from(ordinal)))
}

/// What stands at an ordinal before the controller acts.
enum Slot {
    Missing,
    /// A bound pod: Running and Ready.
    Ready,
    /// A pending pod of the scenario (`namespace/name`).
    Pending(String),
}

/// The StatefulSet's pods: those of its missing ordinals, each held back, with
/// `OrderedReady`, until the pod before it runs.
pub fn stateful_set_pods(
    ss: &StatefulSet,
    selector_given: bool,
    known: &mut KnownPods,
    naming: &mut Naming,
    gates: &FeatureGates,
) -> Result<ControllerPods, Vec<FieldError>> {
    let name = ss.metadata.name.clone().unwrap_or_default();
    let namespace = (ss.metadata.namespace.clone()).unwrap_or_else(|| "default".into());
    let uid = ss.metadata.uid.as_deref();
    let spec = ss.spec.clone().unwrap_or_default();
    let mut errs = validation::stateful_set(ss, selector_given);
    let replicas = spec.replicas.unwrap_or(1);
    if crate::limits::PODS.exceeded_by(replicas.max(0) as u64) {
        errs.push(FieldError::new(
            "spec.replicas",
            crate::limits::PODS.message(format!("a StatefulSet of {replicas} pods")),
        ));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let mut notes = Vec::new();
    let who = format!("StatefulSet {namespace}/{name}");
    if spec
        .volume_claim_templates
        .as_ref()
        .is_some_and(|v| !v.is_empty())
    {
        notes.push(format!(
            "{who} has volumeClaimTemplates: PersistentVolumeClaims are not simulated (schedsim runs no VolumeBinding), so its pods are placed as if their volumes could bind on any node"
        ));
    }
    let mut template = match template_pod(&spec.template, &name, &namespace, "spec.template", gates)
    {
        Ok(t) => t,
        Err(errs) => {
            let first = &errs[0];
            notes.push(format!(
                "{who}: the API server refuses the pods its controller creates (spec.template.{}: {}): it has no pods",
                first.path.trim_start_matches("spec.template."),
                first.message
            ));
            return Ok(ControllerPods::at_once(Vec::new(), notes));
        }
    };
    let start = i64::from(spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0));
    let end = start + i64::from(replicas.max(0));
    let ordered = spec.pod_management_policy.as_deref() != Some("Parallel");
    // The ordinals its pods already hold.
    let claimant = Claimant {
        namespace: &namespace,
        kind: "StatefulSet",
        name: &name,
        uid: uid.unwrap_or(""),
        selector: &spec.selector,
    };
    let mut slots: Vec<Slot> = (start..end).map(|_| Slot::Missing).collect();
    let mut condemned = Vec::new();
    for p in known.claim(&claimant) {
        let Some((parent, ordinal)) = parent_and_ordinal(&p.name) else {
            continue;
        };
        if parent != name {
            continue;
        }
        if !(start..end).contains(&ordinal) {
            condemned.push(p.name.clone());
            continue;
        }
        slots[(ordinal - start) as usize] = match p.bound {
            true => Slot::Ready,
            false => Slot::Pending(format!("{}/{}", p.namespace, p.name)),
        };
    }
    if !condemned.is_empty() {
        notes.push(format!(
            "{who} has pods past its ordinals {start}..{}: {}; its controller deletes them, schedsim keeps them",
            end - 1,
            condemned.join(", ")
        ));
    }
    let template_json = serde_json::to_value(&spec.template).unwrap_or_default();
    let revision = format!("{name}-{}", template_hash(&template_json, None));
    template
        .labels
        .insert(CONTROLLER_REVISION_HASH_LABEL.into(), revision);
    template.workload = Some(name.clone());
    template.controller = Some(controller_ref("StatefulSet", &name, uid));
    let mut out = ControllerPods {
        notes,
        ..ControllerPods::default()
    };
    // What the next ordinal waits for: nothing, one of `out.pods`, or a pending pod.
    let mut before: Option<Slot> = None;
    let mut before_index = 0;
    for (k, slot) in slots.into_iter().enumerate() {
        let ordinal = start + k as i64;
        let pod_name = format!("{name}-{ordinal}");
        if matches!(slot, Slot::Missing) {
            naming.take(&namespace, &pod_name);
            let mut p = template.clone();
            p.labels.insert(POD_NAME_LABEL.into(), pod_name.clone());
            p.labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
            p.name = pod_name.clone();
            let index = out.pods.len();
            let mut requires = Vec::new();
            let requirement = |pods| Requirement {
                pods,
                job: format!("{name}-{}", ordinal - 1),
                status: DependsOnStatus::Ready,
                by: Waiter::StatefulSet(format!("{namespace}/{name}")),
            };
            match before.take().filter(|_| ordered) {
                Some(Slot::Missing) => requires.push(requirement(before_index..before_index + 1)),
                Some(Slot::Pending(key)) => out.waits_for.push((index, key, requirement(0..0))),
                _ => {}
            }
            out.steps.push(Step::Schedule {
                pod: index,
                requires,
            });
            out.pods.push(p);
            before_index = index;
            before = Some(Slot::Missing);
        } else {
            before = Some(slot);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pod;
    use crate::resolve::apps::existing::KnownPod;

    fn set(extra: serde_json::Value) -> StatefulSet {
        let mut v = serde_json::json!({
            "metadata": {"name": "db", "namespace": "ns"},
            "spec": {
                "replicas": 3,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}}
            }
        });
        for (k, val) in extra.as_object().unwrap() {
            v["spec"][k] = val.clone();
        }
        serde_json::from_value(v).unwrap()
    }

    fn run(ss: &StatefulSet, known: &mut KnownPods) -> ControllerPods {
        stateful_set_pods(
            ss,
            true,
            known,
            &mut Naming::default(),
            &FeatureGates::default(),
        )
        .unwrap()
    }

    fn names(pods: &[Pod]) -> Vec<&str> {
        pods.iter().map(|p| p.name.as_str()).collect()
    }

    fn requires(out: &ControllerPods) -> Vec<Option<std::ops::Range<usize>>> {
        out.steps
            .iter()
            .map(|s| match s {
                Step::Schedule { requires, .. } => requires.first().map(|r| r.pods.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn ordinals_names_and_labels() {
        let out = run(
            &set(serde_json::json!({"ordinals": {"start": 5}})),
            &mut KnownPods::default(),
        );
        assert_eq!(names(&out.pods), ["db-5", "db-6", "db-7"]);
        let p = &out.pods[1];
        assert_eq!(p.labels[POD_NAME_LABEL], "db-6");
        assert_eq!(p.labels[POD_INDEX_LABEL], "6");
        assert!(p.labels[CONTROLLER_REVISION_HASH_LABEL].starts_with("db-"));
        assert_eq!(p.workload.as_deref(), Some("db"));
        assert_eq!(p.controller_kind(), Some("StatefulSet"));
    }

    #[test]
    fn ordered_ready_chains_each_pod_to_the_one_before() {
        let out = run(&set(serde_json::json!({})), &mut KnownPods::default());
        assert_eq!(requires(&out), [None, Some(0..1), Some(1..2)]);
        let parallel = run(
            &set(serde_json::json!({"podManagementPolicy": "Parallel"})),
            &mut KnownPods::default(),
        );
        assert_eq!(requires(&parallel), [None, None, None]);
    }

    fn member(name: &str, bound: bool) -> KnownPod {
        KnownPod {
            namespace: "ns".into(),
            name: name.into(),
            labels: [("app".to_string(), "db".to_string())].into(),
            controller: Some(controller_ref("StatefulSet", "db", None)),
            node: bound.then(|| "n".into()),
            bound,
            terminating: false,
        }
    }

    #[test]
    fn existing_ordinals_are_not_created_again() {
        let mut known = KnownPods::default();
        known.add(member("db-1", true));
        known.add(member("db-7", true));
        let out = run(&set(serde_json::json!({})), &mut known);
        assert_eq!(names(&out.pods), ["db-0", "db-2"]);
        // db-2 waits for db-1, which runs: only for nothing it creates.
        assert_eq!(requires(&out), [None, None]);
        assert!(
            out.notes.iter().any(|n| n.contains("db-7")),
            "{:?}",
            out.notes
        );
    }

    #[test]
    fn a_pending_lower_ordinal_holds_the_next_back() {
        let mut known = KnownPods::default();
        known.add(member("db-0", false));
        let out = run(&set(serde_json::json!({})), &mut known);
        assert_eq!(names(&out.pods), ["db-1", "db-2"]);
        assert_eq!(out.waits_for.len(), 1);
        assert_eq!(
            (out.waits_for[0].0, out.waits_for[0].1.as_str()),
            (0, "ns/db-0")
        );
        assert_eq!(out.waits_for[0].2.job, "db-0");
        assert_eq!(requires(&out), [None, Some(0..1)]);
    }

    #[test]
    fn refused_pods_make_a_statefulset_without_pods() {
        let ss = set(
            serde_json::json!({"template": {"metadata": {"labels": {"app": "db"}},
            "spec": {"containers": []}}}),
        );
        let out = run(&ss, &mut KnownPods::default());
        assert!(out.pods.is_empty());
        assert!(out.notes[0].contains("refuses"), "{:?}", out.notes);
    }

    #[test]
    fn parent_and_ordinal_follow_the_regex() {
        assert_eq!(parent_and_ordinal("web-0"), Some(("web", 0)));
        assert_eq!(parent_and_ordinal("my-web-12"), Some(("my-web", 12)));
        assert_eq!(parent_and_ordinal("web-"), None);
        assert_eq!(parent_and_ordinal("web-a1"), None);
        assert_eq!(parent_and_ordinal("web-99999999999"), None);
    }
}
