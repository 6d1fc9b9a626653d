//! Kueue's objects as schedsim reads them: `ResourceFlavor`, `ClusterQueue`, `Cohort`,
//! `LocalQueue`, `WorkloadPriorityClass`, at `kueue.x-k8s.io/v1beta1` (what most manifests
//! say) and `v1beta2` (what current controllers import). The two differ, for the fields
//! read here, only in the ClusterQueue's cohort field (`cohort` vs `cohortName`) and in
//! v1beta1's extra fungibility values `Borrow`/`Preempt`.
//!
//! Sources: kubernetes-sigs/kueue `apis/kueue/v1beta{1,2}/{resourceflavor,clusterqueue,cohort,
//! localqueue,workloadpriorityclass}_types.go`. An object is decoded only once the API server
//! would accept it: its CRD's rules and Kueue's webhook (`super::validation`).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde::Deserialize;

use crate::model::quantity::Quantity;
use crate::model::resources;
use crate::model::validate::FieldError;

pub const API_VERSIONS: &[&str] = &["kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"];
/// Cohort was served at `v1alpha1` before it reached the beta versions.
pub const COHORT_API_VERSIONS: &[&str] = &[
    "kueue.x-k8s.io/v1alpha1",
    "kueue.x-k8s.io/v1beta1",
    "kueue.x-k8s.io/v1beta2",
];

/// A flavor and a resource: the unit Kueue counts quota in.
pub type FlavorResource = (String, String);

/// `ResourceFlavor`: the node labels and taints of a kind of node, and the tolerations Kueue
/// adds to admitted pods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceFlavor {
    pub name: String,
    pub node_labels: BTreeMap<String, String>,
    pub node_taints: Vec<Taint>,
    pub tolerations: Vec<Toleration>,
}

/// One resource's quota in one flavor, in Kueue's units (cpu in millicores, others as the
/// quantity's value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceQuota {
    pub nominal: i64,
    pub borrowing_limit: Option<i64>,
    pub lending_limit: Option<i64>,
}

/// A resource group: resources that get their flavor together, and the flavors in the order
/// they are tried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceGroup {
    pub covered_resources: Vec<String>,
    pub flavors: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum QueueingStrategy {
    StrictFIFO,
    #[default]
    BestEffortFIFO,
}

/// `FlavorFungibilityPolicy`; v1beta1's `Borrow` and `Preempt` mean `MayStopSearch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum FungibilityPolicy {
    MayStopSearch,
    TryNextFlavor,
    Borrow,
    Preempt,
}

impl FungibilityPolicy {
    fn try_next(self) -> bool {
        self == FungibilityPolicy::TryNextFlavor
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum FungibilityPreference {
    BorrowingOverPreemption,
    PreemptionOverBorrowing,
}

/// `FlavorFungibility`, defaulted as the CRD defaults it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlavorFungibility {
    /// `whenCanBorrow: TryNextFlavor` (default `MayStopSearch`).
    pub try_next_when_can_borrow: bool,
    /// `whenCanPreempt: TryNextFlavor` (the default).
    pub try_next_when_can_preempt: bool,
    pub preference: Option<FungibilityPreference>,
}

impl Default for FlavorFungibility {
    fn default() -> Self {
        FlavorFungibility {
            try_next_when_can_borrow: false,
            try_next_when_can_preempt: true,
            preference: None,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum PreemptionPolicy {
    #[default]
    Never,
    LowerPriority,
    LowerOrNewerEqualPriority,
    Any,
}

/// `StopPolicy` of a ClusterQueue or LocalQueue (`None` by default): a stopped queue admits
/// nothing; `HoldAndDrain` also evicts what it admitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum StopPolicy {
    #[default]
    None,
    Hold,
    HoldAndDrain,
}

impl StopPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            StopPolicy::None => "None",
            StopPolicy::Hold => "Hold",
            StopPolicy::HoldAndDrain => "HoldAndDrain",
        }
    }
}

/// `ClusterQueuePreemption`, defaulted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preemption {
    pub reclaim_within_cohort: PreemptionPolicy,
    /// `borrowWithinCohort.policy` (`Never` or `LowerPriority`).
    pub borrow_within_cohort: PreemptionPolicy,
    pub borrow_within_cohort_max_priority: Option<i32>,
    pub within_cluster_queue: PreemptionPolicy,
}

/// `ClusterQueue`: quotas per flavor and resource, the cohort it borrows from and lends to,
/// and how it queues.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterQueue {
    pub name: String,
    pub cohort: Option<String>,
    /// Shared with the flavor assignments made in the queue, whose reasons name its flavors
    /// and resources by their place here.
    pub resource_groups: Arc<[ResourceGroup]>,
    pub quotas: BTreeMap<FlavorResource, ResourceQuota>,
    pub queueing_strategy: QueueingStrategy,
    pub namespace_selector: Option<LabelSelector>,
    pub flavor_fungibility: FlavorFungibility,
    pub preemption: Preemption,
    pub stop_policy: StopPolicy,
}

impl ClusterQueue {
    /// The resource group covering `resource` (`RGByResource`).
    pub fn group_of(&self, resource: &str) -> Option<&ResourceGroup> {
        self.group_index_of(resource)
            .map(|g| &self.resource_groups[g])
    }

    /// The place of the resource group covering `resource` (`RGByResource`).
    pub fn group_index_of(&self, resource: &str) -> Option<usize> {
        (self.resource_groups.iter())
            .position(|g| g.covered_resources.iter().any(|r| r == resource))
    }
}

/// `Cohort` (v1beta2; `v1alpha1` before): a node of the cohort tree with quotas of its own.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cohort {
    pub name: String,
    pub parent: Option<String>,
    pub quotas: BTreeMap<FlavorResource, ResourceQuota>,
}

/// `LocalQueue`: the namespaced name workloads use, pointing at a ClusterQueue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalQueue {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
    pub stop_policy: StopPolicy,
}

/// `WorkloadPriorityClass`: a priority for workloads that name it in the
/// `kueue.x-k8s.io/priority-class` label.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadPriorityClass {
    pub name: String,
    pub value: i32,
}

// ---- the documents, read leniently as the API server reads them ----

#[derive(Deserialize)]
struct Doc<S> {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: S,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FlavorSpec {
    #[serde(default)]
    node_labels: BTreeMap<String, String>,
    #[serde(default)]
    node_taints: Vec<Taint>,
    #[serde(default)]
    tolerations: Vec<Toleration>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueueSpec {
    #[serde(default)]
    cohort: Option<String>,
    #[serde(default)]
    cohort_name: Option<String>,
    #[serde(default)]
    parent_name: Option<String>,
    #[serde(default)]
    resource_groups: Vec<GroupSpec>,
    #[serde(default)]
    queueing_strategy: Option<QueueingStrategy>,
    #[serde(default)]
    namespace_selector: Option<LabelSelector>,
    #[serde(default)]
    flavor_fungibility: Option<FungibilitySpec>,
    #[serde(default)]
    preemption: Option<PreemptionSpec>,
    #[serde(default)]
    cluster_queue: Option<String>,
    #[serde(default)]
    stop_policy: Option<StopPolicy>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupSpec {
    #[serde(default)]
    covered_resources: Vec<String>,
    #[serde(default)]
    flavors: Vec<FlavorQuotasSpec>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FlavorQuotasSpec {
    #[serde(default)]
    name: String,
    #[serde(default)]
    resources: Vec<QuotaSpec>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuotaSpec {
    #[serde(default)]
    name: String,
    #[serde(default)]
    nominal_quota: Option<K8sQuantity>,
    #[serde(default)]
    borrowing_limit: Option<K8sQuantity>,
    #[serde(default)]
    lending_limit: Option<K8sQuantity>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FungibilitySpec {
    #[serde(default)]
    when_can_borrow: Option<FungibilityPolicy>,
    #[serde(default)]
    when_can_preempt: Option<FungibilityPolicy>,
    #[serde(default)]
    preference: Option<FungibilityPreference>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PreemptionSpec {
    #[serde(default)]
    reclaim_within_cohort: Option<PreemptionPolicy>,
    #[serde(default)]
    borrow_within_cohort: Option<BorrowSpec>,
    #[serde(default)]
    within_cluster_queue: Option<PreemptionPolicy>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BorrowSpec {
    #[serde(default)]
    policy: Option<PreemptionPolicy>,
    #[serde(default)]
    max_priority_threshold: Option<i32>,
}

#[derive(Deserialize)]
struct PriorityDoc {
    #[serde(default)]
    value: i32,
}

type Decoded<T> = Result<T, Vec<FieldError>>;

fn decode<T: serde::de::DeserializeOwned>(value: &serde_json::Value) -> Decoded<T> {
    serde_json::from_value(value.clone()).map_err(|e| vec![FieldError::new("", e.to_string())])
}

fn name_of(meta: &ObjectMeta, errs: &mut Vec<FieldError>) -> String {
    let name = meta.name.clone().unwrap_or_default();
    if name.is_empty() {
        errs.push(FieldError::new("metadata.name", "Required value".into()));
    }
    name
}

/// The object's name, and whether the API server accepts the object (`super::validation`):
/// it is decoded only then.
fn accepted(kind: &str, value: &serde_json::Value, admit: bool) -> Result<String, Vec<FieldError>> {
    let meta: ObjectMeta = value
        .get("metadata")
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .unwrap_or_default();
    let mut errs = Vec::new();
    let name = name_of(&meta, &mut errs);
    if admit {
        errs.extend(super::validation::check(kind, value));
    }
    done(name, errs)
}

fn done<T>(value: T, errs: Vec<FieldError>) -> Decoded<T> {
    if errs.is_empty() {
        Ok(value)
    } else {
        Err(errs)
    }
}

pub fn resource_flavor(value: &serde_json::Value) -> Decoded<ResourceFlavor> {
    resource_flavor_with(value, true)
}

fn resource_flavor_with(value: &serde_json::Value, admit: bool) -> Decoded<ResourceFlavor> {
    let name = accepted("ResourceFlavor", value, admit)?;
    let d: Doc<FlavorSpec> = decode(value)?;
    Ok(ResourceFlavor {
        name,
        node_labels: d.spec.node_labels,
        node_taints: d.spec.node_taints,
        tolerations: d.spec.tolerations,
    })
}

/// A quantity in Kueue's units for `resource` (`resources.ResourceValue`: cpu as
/// `SafeMilliValue`, others as `SafeValue`, both capped at the int64 bounds where
/// apimachinery's `MilliValue`/`Value` would wrap; pkg/util/math/math.go).
fn amount(resource: &str, q: &K8sQuantity, path: &str, errs: &mut Vec<FieldError>) -> i64 {
    match q.0.parse::<Quantity>() {
        Ok(q) => safe_value(&q, resource == resources::CPU),
        Err(e) => {
            errs.push(FieldError::new(
                path,
                format!("Invalid value: {:?}: {e}", q.0),
            ));
            0
        }
    }
}

/// `SafeMilliValue` / `SafeValue`: the value, or the int64 bound it lies past.
pub fn safe_value(q: &Quantity, milli: bool) -> i64 {
    use crate::model::quantity::Format;
    use num_bigint::BigInt;
    let scale = if milli { -3 } else { 0 };
    let bound = |v: i64| Quantity::from_decimal(BigInt::from(v), scale, Format::DecimalSI);
    if q.cmp_value(&bound(i64::MAX)).is_gt() {
        i64::MAX
    } else if q.cmp_value(&bound(i64::MIN)).is_lt() {
        i64::MIN
    } else if milli {
        q.milli_value()
    } else {
        q.value()
    }
}

/// Resource groups and their quotas, in Kueue's units.
fn groups(
    specs: &[GroupSpec],
    errs: &mut Vec<FieldError>,
) -> (Vec<ResourceGroup>, BTreeMap<FlavorResource, ResourceQuota>) {
    let mut groups = Vec::new();
    let mut quotas = BTreeMap::new();
    for (g, spec) in specs.iter().enumerate() {
        for (f, flavor) in spec.flavors.iter().enumerate() {
            for (r, quota) in flavor.resources.iter().enumerate() {
                let rat = format!("spec.resourceGroups[{g}].flavors[{f}].resources[{r}]");
                let read = |q: &Option<K8sQuantity>, field: &str, errs: &mut Vec<FieldError>| {
                    q.as_ref()
                        .map(|q| amount(&quota.name, q, &format!("{rat}.{field}"), errs))
                };
                let rq = ResourceQuota {
                    nominal: read(&quota.nominal_quota, "nominalQuota", errs).unwrap_or(0),
                    borrowing_limit: read(&quota.borrowing_limit, "borrowingLimit", errs),
                    lending_limit: read(&quota.lending_limit, "lendingLimit", errs),
                };
                quotas.insert((flavor.name.clone(), quota.name.clone()), rq);
            }
        }
        groups.push(ResourceGroup {
            covered_resources: spec.covered_resources.clone(),
            flavors: spec.flavors.iter().map(|f| f.name.clone()).collect(),
        });
    }
    (groups, quotas)
}

pub fn cluster_queue(value: &serde_json::Value) -> Decoded<ClusterQueue> {
    cluster_queue_with(value, true)
}

fn cluster_queue_with(value: &serde_json::Value, admit: bool) -> Decoded<ClusterQueue> {
    let name = accepted("ClusterQueue", value, admit)?;
    let d: Doc<QueueSpec> = decode(value)?;
    let mut errs = Vec::new();
    let cohort = (d.spec.cohort_name.or(d.spec.cohort)).filter(|c| !c.is_empty());
    let (resource_groups, quotas) = groups(&d.spec.resource_groups, &mut errs);
    let fungibility = d.spec.flavor_fungibility.unwrap_or_default();
    let flavor_fungibility = FlavorFungibility {
        try_next_when_can_borrow: fungibility.when_can_borrow.is_some_and(|p| p.try_next()),
        try_next_when_can_preempt: fungibility.when_can_preempt.is_none_or(|p| p.try_next()),
        preference: fungibility.preference,
    };
    let p = d.spec.preemption.unwrap_or_default();
    let borrow = p.borrow_within_cohort.unwrap_or_default();
    let preemption = Preemption {
        reclaim_within_cohort: p.reclaim_within_cohort.unwrap_or_default(),
        borrow_within_cohort: borrow.policy.unwrap_or_default(),
        borrow_within_cohort_max_priority: borrow.max_priority_threshold,
        within_cluster_queue: p.within_cluster_queue.unwrap_or_default(),
    };
    let queue = ClusterQueue {
        name,
        cohort,
        resource_groups: resource_groups.into(),
        quotas,
        queueing_strategy: d.spec.queueing_strategy.unwrap_or_default(),
        namespace_selector: d.spec.namespace_selector,
        flavor_fungibility,
        preemption,
        stop_policy: d.spec.stop_policy.unwrap_or_default(),
    };
    done(queue, errs)
}

pub fn cohort(value: &serde_json::Value) -> Decoded<Cohort> {
    cohort_with(value, true)
}

fn cohort_with(value: &serde_json::Value, admit: bool) -> Decoded<Cohort> {
    let name = accepted("Cohort", value, admit)?;
    let d: Doc<QueueSpec> = decode(value)?;
    let mut errs = Vec::new();
    let (_, quotas) = groups(&d.spec.resource_groups, &mut errs);
    let cohort = Cohort {
        name,
        parent: d.spec.parent_name.filter(|p| !p.is_empty()),
        quotas,
    };
    done(cohort, errs)
}

pub fn local_queue(value: &serde_json::Value) -> Decoded<LocalQueue> {
    local_queue_with(value, true)
}

fn local_queue_with(value: &serde_json::Value, admit: bool) -> Decoded<LocalQueue> {
    let name = accepted("LocalQueue", value, admit)?;
    let d: Doc<QueueSpec> = decode(value)?;
    Ok(LocalQueue {
        namespace: d.metadata.namespace.unwrap_or_else(|| "default".into()),
        name,
        cluster_queue: d.spec.cluster_queue.unwrap_or_default(),
        stop_policy: d.spec.stop_policy.unwrap_or_default(),
    })
}

pub fn workload_priority_class(value: &serde_json::Value) -> Decoded<WorkloadPriorityClass> {
    workload_priority_class_with(value, true)
}

fn workload_priority_class_with(
    value: &serde_json::Value,
    admit: bool,
) -> Decoded<WorkloadPriorityClass> {
    let name = accepted("WorkloadPriorityClass", value, admit)?;
    let d: PriorityDoc = decode(value)?;
    Ok(WorkloadPriorityClass {
        name,
        value: d.value,
    })
}

/// The decoders without the API server's checks, as upstream's unit tests build objects
/// (their tables use names and quotas the API server would refuse).
#[cfg(test)]
pub(crate) mod unchecked {
    use super::*;

    pub fn resource_flavor(value: &serde_json::Value) -> Decoded<ResourceFlavor> {
        super::resource_flavor_with(value, false)
    }

    pub fn cluster_queue(value: &serde_json::Value) -> Decoded<ClusterQueue> {
        super::cluster_queue_with(value, false)
    }

    pub fn cohort(value: &serde_json::Value) -> Decoded<Cohort> {
        super::cohort_with(value, false)
    }

    pub fn local_queue(value: &serde_json::Value) -> Decoded<LocalQueue> {
        super::local_queue_with(value, false)
    }

    pub fn workload_priority_class(value: &serde_json::Value) -> Decoded<WorkloadPriorityClass> {
        super::workload_priority_class_with(value, false)
    }
}
