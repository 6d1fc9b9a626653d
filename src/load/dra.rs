//! Dynamic Resource Allocation in the load: the DeviceClasses, ResourceSlices,
//! ResourceClaims and ResourceClaimTemplates of `spec.objects` (`resource.k8s.io/v1`, the
//! identical `v1beta2`, or `v1beta1` converted as the API server converts it) decoded, named, defaulted and validated as the API server admits them
//! (`dra::api`) into the scenario's `dra::Inventory`; then the resourceclaim controller
//! (`dra::controller`) over every pod, once, where all of them meet ([`sync_claims`]).

use std::collections::HashSet;
use std::collections::btree_map::Entry;

use k8s_openapi::api::resource::v1::{
    DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
};
use k8s_openapi::api::resource::v1beta1;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::origin::Origin;
use super::{Errors, Loader};
use crate::dra::{Inventory, api, controller, resourceclaim, taints};
use crate::features::FeatureGates;
use crate::model::Pod;

/// A slice's DRA features the allocator leaves alone, for the warnings that say so: those
/// behind DRAPartitionableDevices when it is off (first), and those it does not simulate;
/// `consumable`: DRAConsumableCapacity is on (devices are then shared by capacity).
///
/// With the gate off, the API server drops `sharedCounters`, `consumesCounters` and the node
/// selection per device when it creates a slice (`dropDisabledFields`), but a slice stored
/// while the gate was on keeps them, and that is what a dump of a cluster holds. So schedsim
/// loads them as written and its allocator treats them as upstream's does with the feature
/// off: a slice with counter sets or per-device node selection is not read, a device that
/// consumes counters is never allocated.
fn left_alone(
    slice: &ResourceSlice,
    partitionable: bool,
    consumable: bool,
) -> (Vec<&'static str>, Vec<&'static str>) {
    let spec = &slice.spec;
    let devices = spec.devices.as_deref().unwrap_or(&[]);
    let any = |f: fn(&k8s_openapi::api::resource::v1::Device) -> bool| devices.iter().any(f);
    let gated = [
        (
            spec.shared_counters.as_ref().is_some_and(|c| !c.is_empty()),
            "sharedCounters (the allocator leaves the slice out)",
        ),
        (
            spec.per_device_node_selection.is_some(),
            "perDeviceNodeSelection (the allocator leaves the slice out)",
        ),
        (
            any(|d| d.consumes_counters.as_ref().is_some_and(|c| !c.is_empty())),
            "consumesCounters (the allocator never allocates such a device)",
        ),
    ];
    let unsimulated = [
        (
            !consumable && any(|d| d.allow_multiple_allocations == Some(true)),
            "allowMultipleAllocations (DRAConsumableCapacity is off: such a device is allocated whole)",
        ),
        (
            any(|d| d.binding_conditions.as_ref().is_some_and(|c| !c.is_empty())),
            "bindingConditions",
        ),
        (
            any(|d| (d.attributes.iter().flatten()).any(|(_, a)| list_valued(a))),
            "list-type attributes (DRAListTypeAttributes; a selector that meets such a device fails)",
        ),
    ];
    let used = |list: &[(bool, &'static str)]| -> Vec<&'static str> {
        list.iter()
            .filter_map(|&(used, what)| used.then_some(what))
            .collect()
    };
    let gated = if partitionable {
        Vec::new()
    } else {
        used(&gated)
    };
    (gated, used(&unsimulated))
}

/// The objects a warning is about: how many, and the first, described. Only the first is
/// described: finding an object's line re-reads its whole file with positions.
struct Examples<T> {
    count: usize,
    first: Option<T>,
}

impl<T> Default for Examples<T> {
    fn default() -> Self {
        Examples {
            count: 0,
            first: None,
        }
    }
}

impl<T> Examples<T> {
    fn add(&mut self, describe: impl FnOnce() -> T) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(describe());
        }
    }
}

impl Loader<'_> {
    /// The DRA objects of `spec.objects`, each admitted as the API server admits it; a name
    /// used twice is refused as the API server refuses it. A DeviceTaintRule is read but not
    /// simulated, with a warning.
    pub(super) fn dra_objects(
        &mut self,
        origins: Vec<Origin>,
        gates: &FeatureGates,
        errors: &mut Errors,
        warnings: &mut Vec<String>,
    ) -> Inventory {
        let (partitionable, consumable) = (
            gates.dra_partitionable_devices,
            gates.dra_consumable_capacity,
        );
        let mut inventory = Inventory::default();
        let mut slice_names = HashSet::new();
        let mut gated_slices: Examples<(String, Vec<&str>)> = Examples::default();
        let mut unsimulated_slices: Examples<(String, Vec<&str>)> = Examples::default();
        // Slices with device taints while DRADeviceTaints is off, and DeviceTaintRules.
        let mut tainted_slices: Examples<String> = Examples::default();
        let mut taint_rules: Examples<String> = Examples::default();
        // Claims and templates that request capacity while the gate is off.
        let mut capacity_requests: Examples<String> = Examples::default();
        for origin in origins {
            let exists = |resource: &str, name: &str, namespace: Option<&str>| {
                let message = match namespace {
                    Some(ns) => format!(
                        "{resource}.resource.k8s.io {name:?} already exists in namespace {ns:?}"
                    ),
                    None => format!("{resource}.resource.k8s.io {name:?} already exists"),
                };
                origin.error_at("metadata.name", message)
            };
            match origin.kind().unwrap_or("") {
                "DeviceClass" => match admit(&origin, false, api::validate_device_class) {
                    Ok(c) => {
                        let name = c.metadata.name.clone().unwrap_or_default();
                        match inventory.classes.entry(name) {
                            Entry::Occupied(e) => {
                                errors.push(exists("deviceclasses", e.key(), None))
                            }
                            Entry::Vacant(e) => {
                                e.insert(c);
                            }
                        }
                    }
                    Err(mut e) => errors.append(&mut e),
                },
                "ResourceSlice" => match admit(&origin, false, api::validate_resource_slice) {
                    Ok(s) => {
                        let name = s.metadata.name.clone().unwrap_or_default();
                        if !slice_names.insert(name.clone()) {
                            errors.push(exists("resourceslices", &name, None));
                            continue;
                        }
                        let (gated, unsimulated) = left_alone(&s, partitionable, consumable);
                        let what = || format!("ResourceSlice {name} ({})", origin.describe());
                        if !gated.is_empty() {
                            gated_slices.add(|| (what(), gated));
                        }
                        if !unsimulated.is_empty() {
                            unsimulated_slices.add(|| (what(), unsimulated));
                        }
                        let devices = s.spec.devices.iter().flatten();
                        if !gates.dra_device_taints && devices.clone().any(taints::tainted) {
                            tainted_slices.add(what);
                        }
                        inventory.slices.push(s);
                    }
                    Err(mut e) => errors.append(&mut e),
                },
                "ResourceClaim" => {
                    let admitted = admit(&origin, true, |c: &ResourceClaim| {
                        api::validate_resource_claim(c)
                    });
                    match admitted {
                        Ok(c) => {
                            let (ns, name) = key(&c.metadata);
                            if !consumable && requests_capacity(&c.spec) {
                                capacity_requests.add(|| {
                                    format!("ResourceClaim {ns}/{name} ({})", origin.describe())
                                });
                            }
                            if inventory.claim(&ns, &name).is_some() {
                                errors.push(exists("resourceclaims", &name, Some(&ns)));
                            } else {
                                inventory.insert_claim(c);
                            }
                        }
                        Err(mut e) => errors.append(&mut e),
                    }
                }
                "ResourceClaimTemplate" => {
                    let admitted = admit(&origin, true, |t: &ResourceClaimTemplate| {
                        api::validate_resource_claim_template(t)
                    });
                    match admitted {
                        Ok(t) => {
                            let (ns, name) = key(&t.metadata);
                            if !consumable && requests_capacity(&t.spec.spec) {
                                capacity_requests.add(|| {
                                    let at = origin.describe();
                                    format!("ResourceClaimTemplate {ns}/{name} ({at})")
                                });
                            }
                            if inventory.template(&ns, &name).is_some() {
                                errors.push(exists("resourceclaimtemplates", &name, Some(&ns)));
                            } else {
                                inventory.insert_template(t);
                            }
                        }
                        Err(mut e) => errors.append(&mut e),
                    }
                }
                "DeviceTaintRule" => {
                    let name = origin.value()["metadata"]["name"].as_str().unwrap_or("");
                    taint_rules.add(|| format!("DeviceTaintRule {name} ({})", origin.describe()));
                }
                _ => {}
            }
        }
        if let Some((first, features)) = gated_slices.first.as_ref() {
            warnings.push(format!(
                "{} ResourceSlice(s) use DRA features behind the DRAPartitionableDevices gate, which is off (spec.scheduler.featureGates turns it on), such as {first}: {}",
                gated_slices.count,
                features.join(", ")
            ));
        }
        if let Some(first) = tainted_slices.first.as_ref() {
            warnings.push(format!(
                "feature gate DRADeviceTaints is off: {} ResourceSlice(s) have device taints, such as {first}; the scheduler ignores them, as the allocator of a kube-scheduler with the gate off does: enable the gate in spec.scheduler.featureGates to keep a device from requests that do not tolerate its NoSchedule and NoExecute taints",
                tainted_slices.count
            ));
        }
        if let Some(first) = taint_rules.first.as_ref() {
            warnings.push(format!(
                "{} DeviceTaintRule(s), such as {first}, are not simulated: the taints they add to devices are ignored",
                taint_rules.count
            ));
        }
        if let Some((first, features)) = unsimulated_slices.first.as_ref() {
            warnings.push(format!(
                "{} ResourceSlice(s) use DRA features schedsim does not simulate, such as {first}: {}",
                unsimulated_slices.count,
                features.join(", ")
            ));
        }
        if let Some(first) = capacity_requests.first.as_ref() {
            warnings.push(format!(
                "feature gate DRAConsumableCapacity is off: {} ResourceClaim(s) and template(s) request device capacity (capacity.requests), such as {first}; the scheduler then ignores them, as the stable allocator a kube-scheduler with the gate off runs does (an API server with the gate off drops the field), and allocates whole devices: enable the gate in spec.scheduler.featureGates to share devices by capacity",
                capacity_requests.count
            ));
        }
        inventory
    }
}

/// A device attribute with a list of values (`bools`, `ints`, `strings`, `versions`), which
/// only DRAListTypeAttributes' experimental allocator reads.
fn list_valued(a: &k8s_openapi::api::resource::v1::DeviceAttribute) -> bool {
    a.bools.is_some() || a.ints.is_some() || a.strings.is_some() || a.versions.is_some()
}

/// Some request or subrequest of the claim has `capacity` (DRAConsumableCapacity).
fn requests_capacity(spec: &k8s_openapi::api::resource::v1::ResourceClaimSpec) -> bool {
    (spec
        .devices
        .iter()
        .flat_map(|d| d.requests.iter().flatten()))
    .any(|r| {
        r.exactly.as_ref().is_some_and(|e| e.capacity.is_some())
            || (r.first_available.iter().flatten()).any(|s| s.capacity.is_some())
    })
}

fn key(meta: &ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// Decodes an object as `resource.k8s.io/v1` (a `v1beta2` one is the same JSON; a `v1beta1`
/// one is decoded as itself, for its own shape's errors, then converted as the API server
/// converts it: `api::v1beta1`), named and defaulted as the API server does before validating
/// (a name from `generateName`, see `Origin::admitted_value`; a namespaced object without a
/// namespace goes to `default`, as `kubectl` sends it; a cluster-scoped one loses its
/// namespace, as `BeforeCreate` clears it), then validates it.
fn admit<T>(
    origin: &Origin,
    namespaced: bool,
    validate: impl Fn(&T) -> Vec<crate::model::validate::FieldError>,
) -> Result<T, Errors>
where
    T: serde::de::DeserializeOwned + Admit,
{
    let value = origin.admitted_value();
    let mut object: T = if value["apiVersion"] == api::API_VERSIONS[0] {
        origin.decode().map_err(|e| vec![e])?
    } else {
        let kind = origin.kind().unwrap_or("");
        let v1 = if value["apiVersion"] == api::v1beta1::API_VERSION {
            T::check_v1beta1(origin).map_err(|e| vec![e])?;
            api::v1beta1::to_v1(kind, &value)
        } else {
            let mut v1 = value.into_owned();
            v1["apiVersion"] = Value::from(api::API_VERSIONS[0]);
            v1
        };
        (origin.doc)
            .decode(&origin.file, &origin.path, &v1)
            .map_err(|e| vec![e])?
    };
    let meta = object.meta();
    if namespaced {
        if meta.namespace.as_deref().unwrap_or("").is_empty() {
            meta.namespace = Some("default".into());
        }
    } else {
        meta.namespace = None;
    }
    object.set_defaults();
    origin.check_all(match validate(&object) {
        errs if errs.is_empty() => Ok(()),
        errs => Err(errs),
    })?;
    Ok(object)
}

/// What [`admit`] completes before validating: the metadata, and the defaults.
trait Admit {
    /// The same kind at `resource.k8s.io/v1beta1`.
    type V1beta1: serde::de::DeserializeOwned;
    fn meta(&mut self) -> &mut ObjectMeta;
    fn set_defaults(&mut self) {}
    /// Decodes the object as the `v1beta1` kind, for the errors of that shape.
    fn check_v1beta1(origin: &Origin) -> Result<(), crate::error::InputError> {
        origin.decode::<Self::V1beta1>().map(drop)
    }
}

impl Admit for DeviceClass {
    type V1beta1 = v1beta1::DeviceClass;
    fn meta(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Admit for ResourceSlice {
    type V1beta1 = v1beta1::ResourceSlice;
    fn meta(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Admit for ResourceClaim {
    type V1beta1 = v1beta1::ResourceClaim;
    fn meta(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
    fn set_defaults(&mut self) {
        api::set_defaults(&mut self.spec);
    }
}

impl Admit for ResourceClaimTemplate {
    type V1beta1 = v1beta1::ResourceClaimTemplate;
    fn meta(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
    fn set_defaults(&mut self) {
        api::set_defaults(&mut self.spec.spec);
    }
}

/// With DRAExtendedResource on: pods that request an implicit extended resource name
/// (`deviceclass.resource.kubernetes.io/<class>`), which kube-scheduler 1.34 never allocates
/// devices for (`dra::extended`), said once with the first of them.
pub(super) fn implicit_extended_names<'p>(
    pods: impl Iterator<Item = &'p (Pod, Origin)>,
) -> Option<String> {
    let prefix = crate::dra::extended::RESOURCE_DEVICE_CLASS_PREFIX;
    let asking: Vec<(&Pod, &Origin, &String)> = pods
        .filter_map(|(p, at)| {
            let name = p.requests.keys().find(|r| r.starts_with(prefix))?;
            Some((p, at, name))
        })
        .collect();
    let (pod, at, name) = asking.first()?;
    Some(format!(
        "feature gate DRAExtendedResource: {} pod(s) request an implicit extended resource name, such as pod {} ({}): {name}; kube-scheduler 1.34 allocates no DRA device for such names (DynamicResources reads only names v1helper.IsExtendedResourceName accepts, which excludes names under kubernetes.io/; later releases read them): name the resource in the DeviceClass's extendedResourceName instead",
        asking.len(),
        pod.key(),
        at.describe(),
    ))
}

/// Gives every pod without a UID (or with one another pod already has: a template's, copied
/// by a controller) the stable UID the API server would give it.
fn assign_uids<'p>(taken: &mut HashSet<String>, pods: impl Iterator<Item = &'p mut Pod>) {
    for pod in pods {
        if pod.uid.is_empty() || !taken.insert(pod.uid.clone()) {
            pod.uid = crate::model::generated_names::pod_uid(&pod.namespace, &pod.name);
            taken.insert(pod.uid.clone());
        }
    }
}

/// The resourceclaim controller over every pod of the scenario, in the order they are
/// created: existing pods, then the workload pods in arrival order (timeline arrivals and
/// the pods Kueue creates included), then the runtime-only baseline's pods (the same pods in
/// the other run: the same claims, by name). Pods get their UIDs first, since claims name
/// their owner by it. A pod claim the controller cannot satisfy (its template is missing)
/// stays unresolved for the scheduler to hold the pod back, with a warning; a bound pod whose
/// claim is missing or not allocated is warned about (its devices count as free).
pub(super) fn sync_claims(
    inventory: &mut Inventory,
    existing: &mut [(Pod, Origin)],
    workloads: &mut [(Pod, Origin)],
    baseline: &mut [Pod],
    seed: u64,
    warnings: &mut Vec<String>,
) {
    let claims = |p: &Pod| !p.resource_claims.is_empty();
    let any_claims = existing.iter().any(|(p, _)| claims(p))
        || workloads.iter().any(|(p, _)| claims(p))
        || baseline.iter().any(claims);
    if inventory.is_empty() && !any_claims {
        return;
    }
    let mut taken = HashSet::new();
    assign_uids(&mut taken, existing.iter_mut().map(|(p, _)| p));
    let mut baseline_taken = taken.clone();
    assign_uids(&mut taken, workloads.iter_mut().map(|(p, _)| p));
    assign_uids(&mut baseline_taken, baseline.iter_mut());

    let mut failed: Vec<String> = Vec::new();
    for (pod, at) in existing.iter_mut().chain(workloads.iter_mut()) {
        for f in controller::sync_pod(inventory, pod, seed) {
            failed.push(format!(
                "pod {} ({}): {}",
                pod.key(),
                at.describe(),
                f.message
            ));
        }
    }
    for pod in baseline.iter_mut() {
        // The same pods as above: their failures are already reported.
        controller::sync_pod(inventory, pod, seed);
    }
    if let Some(first) = failed.first() {
        warnings.push(format!(
            "{} pod claim(s) got no ResourceClaim from the resourceclaim controller (FailedResourceClaimCreation), such as {first} (kube-scheduler holds such pods back until their claims exist)",
            failed.len()
        ));
    }
    let mut unallocated = Vec::new();
    for (pod, at) in existing.iter() {
        for pod_claim in &pod.resource_claims {
            let problem = match resourceclaim::name(pod, pod_claim) {
                Ok(None) => continue,
                Err(e) => e.message().to_string(),
                Ok(Some(name)) => match inventory.claim(&pod.namespace, name.name) {
                    None => format!(
                        "its ResourceClaim {}/{} does not exist",
                        pod.namespace, name.name
                    ),
                    Some(c) if c.status.as_ref().is_none_or(|s| s.allocation.is_none()) => {
                        format!(
                            "its ResourceClaim {}/{} is not allocated",
                            pod.namespace, name.name
                        )
                    }
                    Some(_) => continue,
                },
            };
            unallocated.push(format!(
                "pod {} ({}), pod claim {}: {problem}",
                pod.key(),
                at.describe(),
                pod_claim.name
            ));
        }
    }
    if let Some(first) = unallocated.first() {
        warnings.push(format!(
            "{} claim(s) of bound pods hold no devices, such as {first}: a bound pod's claims should be allocated; schedsim counts no devices for them",
            unallocated.len()
        ));
    }
}
