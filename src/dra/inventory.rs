//! A scenario's DRA objects as the scheduler's informers list them: DeviceClasses by name,
//! ResourceSlices, and ResourceClaims and ResourceClaimTemplates by namespace and name (the
//! claims include those the resourceclaim controller generated for pods, `dra::controller`).
//! The DynamicResources plugin reads it; the loader fills it.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use k8s_openapi::api::resource::v1::{
    DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
};

use super::DeviceId;

/// The DRA objects of a scenario.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub classes: BTreeMap<String, DeviceClass>,
    pub slices: Vec<ResourceSlice>,
    /// Namespace → name → claim.
    claims: BTreeMap<String, BTreeMap<String, ResourceClaim>>,
    /// Pod UID → the claims that pod controls, as (namespace, name): the controller's
    /// `claimPodOwnerIndex`.
    owned: BTreeMap<String, BTreeSet<(String, String)>>,
    /// Namespace → name → template.
    templates: BTreeMap<String, BTreeMap<String, ResourceClaimTemplate>>,
}

fn namespace_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    meta.namespace.clone().unwrap_or_default()
}

impl Inventory {
    /// No DRA object at all.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
            && self.slices.is_empty()
            && self.claims.is_empty()
            && self.templates.is_empty()
    }

    /// The claim `namespace/name` (the plugin's `ResourceClaims().Get`).
    pub fn claim(&self, namespace: &str, name: &str) -> Option<&ResourceClaim> {
        self.claims.get(namespace)?.get(name)
    }

    /// Every claim, by namespace then name.
    pub fn claims(&self) -> impl Iterator<Item = &ResourceClaim> {
        self.claims.values().flat_map(BTreeMap::values)
    }

    /// Adds a claim (its `metadata.namespace` set); gives back the one of that name it
    /// replaces.
    pub fn insert_claim(&mut self, claim: ResourceClaim) -> Option<ResourceClaim> {
        let key = (
            namespace_of(&claim.metadata),
            claim.metadata.name.clone().unwrap_or_default(),
        );
        let owner = pod_owner(&claim).map(str::to_string);
        let namespace = self.claims.entry(key.0.clone()).or_default();
        let old = namespace.insert(key.1.clone(), claim);
        if let Some(uid) = old.as_ref().and_then(pod_owner)
            && let Some(owned) = self.owned.get_mut(uid)
        {
            owned.remove(&key);
        }
        if let Some(uid) = owner {
            self.owned.entry(uid).or_default().insert(key);
        }
        old
    }

    /// The claims pod `uid` controls (`claimPodOwnerIndex`), by namespace then name.
    pub fn claims_owned_by(&self, uid: &str) -> impl Iterator<Item = &ResourceClaim> {
        (self.owned.get(uid).into_iter().flatten()).filter_map(|(ns, name)| self.claim(ns, name))
    }

    /// The template `namespace/name`.
    pub fn template(&self, namespace: &str, name: &str) -> Option<&ResourceClaimTemplate> {
        self.templates.get(namespace)?.get(name)
    }

    /// Every template, by namespace then name.
    pub fn templates(&self) -> impl Iterator<Item = &ResourceClaimTemplate> {
        self.templates.values().flat_map(BTreeMap::values)
    }

    /// Adds a template (its `metadata.namespace` set); gives back the one it replaces.
    pub fn insert_template(
        &mut self,
        template: ResourceClaimTemplate,
    ) -> Option<ResourceClaimTemplate> {
        let name = template.metadata.name.clone().unwrap_or_default();
        (self
            .templates
            .entry(namespace_of(&template.metadata))
            .or_default())
        .insert(name, template)
    }

    /// The devices that claims already allocated hold, which no other claim may get: the
    /// plugin's initial "allocated" set. A port of the scheduler's `foreachAllocatedDevice`
    /// (`pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go`): every result
    /// of every claim with `status.allocation`, reserved or not, except those allocated with
    /// admin access, which do not count as allocated. A result with a `shareID` holds its
    /// device whole here, as upstream with DRAConsumableCapacity off; the scheduler reads
    /// shares with the gate on (`sched::dra_manager::holdings`).
    pub fn allocated_devices(&self) -> HashSet<DeviceId> {
        self.claims()
            .filter_map(|c| c.status.as_ref()?.allocation.as_ref()?.devices.as_ref())
            .flat_map(|d| d.results.iter().flatten())
            .filter(|r| r.admin_access != Some(true))
            .map(|r| (r.driver.clone(), r.pool.clone(), r.device.clone()))
            .collect()
    }
}

/// The UID of the v1 Pod that controls a claim (`claimPodOwnerIndexFunc`).
fn pod_owner(claim: &ResourceClaim) -> Option<&str> {
    (claim.metadata.owner_references.iter().flatten())
        .find(|o| o.controller == Some(true) && o.api_version == "v1" && o.kind == "Pod")
        .map(|o| o.uid.as_str())
}
