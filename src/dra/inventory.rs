//! A scenario's DRA objects as the scheduler's informers list them: DeviceClasses by name,
//! ResourceSlices, and ResourceClaims and ResourceClaimTemplates by namespace and name (the
//! claims include those the resourceclaim controller generated for pods, `dra::controller`).
//! The DynamicResources plugin reads it; the loader fills it.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::resource::v1::{
    DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
};

use super::allocator::DeviceId;

/// The DRA objects of a scenario.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub classes: BTreeMap<String, DeviceClass>,
    pub slices: Vec<ResourceSlice>,
    /// Namespace → name → claim.
    claims: BTreeMap<String, BTreeMap<String, ResourceClaim>>,
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
        let name = claim.metadata.name.clone().unwrap_or_default();
        (self
            .claims
            .entry(namespace_of(&claim.metadata))
            .or_default())
        .insert(name, claim)
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
    /// admin access, which do not count as allocated. (Consumable capacity is not simulated,
    /// so a result with a `shareID` holds its device whole, as upstream with that feature off.)
    pub fn allocated_devices(&self) -> HashSet<DeviceId> {
        self.claims()
            .filter_map(|c| c.status.as_ref()?.allocation.as_ref()?.devices.as_ref())
            .flat_map(|d| d.results.iter().flatten())
            .filter(|r| r.admin_access != Some(true))
            .map(|r| (r.driver.clone(), r.pool.clone(), r.device.clone()))
            .collect()
    }
}
