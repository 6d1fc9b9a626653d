//! The `device` variable of a DRA selector: a struct with `driver`, `attributes[domain][id]`
//! and `capacity[domain][id]` (and `allowMultipleAllocations` with DRAConsumableCapacity),
//! where an attribute without a domain belongs to the driver's and a domain the device lacks
//! reads as an empty map (`compile.go`: `DeviceMatches`, `parseQualifiedName`,
//! `newStringInterfaceMapWithDefault`, `getAttributeValue`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::ExecutionError;
use cel::common::traits::{Container, Indexer, Iterable};
use cel::common::types::{CelString, Kind, Type};
use cel::common::value::{CowVal, Val};
use cel::objects::{Key, Map, Value};
use k8s_openapi::api::resource::v1::{DeviceAttribute, DeviceCapacity};

use super::library::{CelQuantity, Semver};
use crate::model::quantity::Quantity;

/// The device a selector is asked about.
pub struct Device<'d> {
    /// `device.allowMultipleAllocations`, declared only with DRAConsumableCapacity (`None`
    /// without it: reading it is then an error, as cel-go's compiler reports).
    pub allow_multiple_allocations: Option<bool>,
    pub driver: &'d str,
    pub attributes: &'d BTreeMap<String, DeviceAttribute>,
    pub capacity: &'d BTreeMap<String, DeviceCapacity>,
}

/// Attributes and capacities of a device that lists none.
static NO_ATTRIBUTES: BTreeMap<String, DeviceAttribute> = BTreeMap::new();
static NO_CAPACITY: BTreeMap<String, DeviceCapacity> = BTreeMap::new();

impl<'d> Device<'d> {
    /// The view of `device`, published by `driver`; `consumable_capacity`: the
    /// DRAConsumableCapacity gate, which declares `device.allowMultipleAllocations`.
    pub fn of(
        driver: &'d str,
        device: &'d k8s_openapi::api::resource::v1::Device,
        consumable_capacity: bool,
    ) -> Self {
        Device {
            allow_multiple_allocations: consumable_capacity
                .then(|| device.allow_multiple_allocations.unwrap_or(false)),
            driver,
            attributes: device.attributes.as_ref().unwrap_or(&NO_ATTRIBUTES),
            capacity: device.capacity.as_ref().unwrap_or(&NO_CAPACITY),
        }
    }
}

/// `parseQualifiedName`: `domain/id`, or the driver's domain for a bare id.
pub(super) fn split_name<'n>(name: &'n str, driver: &'n str) -> (&'n str, &'n str) {
    name.split_once('/').unwrap_or((driver, name))
}

/// The `device` variable: a struct with three fields.
#[derive(Debug, Clone)]
pub(super) struct DeviceVal {
    allow_multiple_allocations: Option<bool>,
    driver: Value,
    attributes: Domains,
    capacity: Domains,
}

impl DeviceVal {
    pub(super) fn new(d: &Device) -> Result<DeviceVal, String> {
        let mut attributes: BTreeMap<String, HashMap<Key, Value>> = BTreeMap::new();
        for (name, attr) in d.attributes {
            let value = attribute_value(attr).map_err(|e| format!("attribute {name}: {e}"))?;
            let (domain, id) = split_name(name, d.driver);
            (attributes.entry(domain.to_owned()).or_default()).insert(Key::from(id), value);
        }
        let mut capacity: BTreeMap<String, HashMap<Key, Value>> = BTreeMap::new();
        for (name, cap) in d.capacity {
            let q: Quantity = (cap.value.0.parse())
                .map_err(|e| format!("capacity {name}: quantity {:?}: {e}", cap.value.0))?;
            let (domain, id) = split_name(name, d.driver);
            (capacity.entry(domain.to_owned()).or_default())
                .insert(Key::from(id), Value::Opaque(Arc::new(CelQuantity(q))));
        }
        let domains = |m: BTreeMap<String, HashMap<Key, Value>>| Domains {
            keys: Arc::new(m.keys().map(|k| CelString::from(k.clone())).collect()),
            map: Arc::new(
                m.into_iter()
                    .map(|(k, v)| (k, Value::Map(Map { map: Arc::new(v) })))
                    .collect(),
            ),
        };
        Ok(DeviceVal {
            allow_multiple_allocations: d.allow_multiple_allocations,
            driver: Value::String(Arc::new(d.driver.to_owned())),
            attributes: domains(attributes),
            capacity: domains(capacity),
        })
    }
}

/// `getAttributeValue`.
pub(super) fn attribute_value(a: &DeviceAttribute) -> Result<Value, String> {
    if let Some(i) = a.int {
        return Ok(Value::Int(i));
    }
    if let Some(b) = a.bool {
        return Ok(Value::Bool(b));
    }
    if let Some(s) = &a.string {
        return Ok(Value::String(Arc::new(s.clone())));
    }
    if let Some(v) = &a.version {
        let v = semver::Version::parse(v).map_err(|e| format!("parse semantic version: {e}"))?;
        return Ok(Value::Opaque(Arc::new(Semver(v))));
    }
    Err("unsupported attribute value".into())
}

static DEVICE_TYPE: std::sync::LazyLock<Type> =
    std::sync::LazyLock::new(|| Type::simple_type(Kind::Struct, "kubernetes.DRADevice"));
static DOMAINS_TYPE: std::sync::LazyLock<Type> =
    std::sync::LazyLock::new(|| Type::simple_type(Kind::Map, "map"));

impl Val for DeviceVal {
    fn get_type(&self) -> &Type {
        &DEVICE_TYPE
    }
    fn cel_type() -> &'static Type {
        &DEVICE_TYPE
    }
    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
}

impl Indexer for DeviceVal {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        match idx.downcast_ref::<CelString>().map(|s| s.inner()) {
            Some("driver") => Ok(CowVal::Owned(boxed(self.driver.clone())?)),
            Some("attributes") => Ok(CowVal::owned(self.attributes.clone())),
            Some("capacity") => Ok(CowVal::owned(self.capacity.clone())),
            Some("allowMultipleAllocations") if self.allow_multiple_allocations.is_some() => {
                Ok(CowVal::Owned(boxed(Value::Bool(
                    self.allow_multiple_allocations == Some(true),
                ))?))
            }
            Some(field) => Err(ExecutionError::no_such_key(field)),
            None => Err(ExecutionError::no_such_key("?")),
        }
    }
    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

fn boxed<'v>(v: Value) -> Result<Box<dyn Val + 'v>, ExecutionError> {
    Box::<dyn Val>::try_from(v).map(|b| b as Box<dyn Val + 'v>)
}

/// `attributes` or `capacity`: domain → map; a domain the device lacks is an empty map
/// (`newStringInterfaceMapWithDefault`).
#[derive(Debug, Clone)]
struct Domains {
    map: Arc<BTreeMap<String, Value>>,
    /// The domains, for `in` and the macros that iterate a map's keys.
    keys: Arc<Vec<CelString<'static>>>,
}

impl Val for Domains {
    fn get_type(&self) -> &Type {
        &DOMAINS_TYPE
    }
    fn cel_type() -> &'static Type {
        &DOMAINS_TYPE
    }
    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn as_container(&self) -> Option<&dyn Container> {
        Some(self)
    }
    fn as_iterable<'b, 'v>(&'b self) -> Option<&'b (dyn Iterable + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
}

impl Container for Domains {
    fn contains(&self, value: &dyn Val) -> Result<bool, ExecutionError> {
        let key = value.downcast_ref::<CelString>().map(|s| s.inner());
        Ok(key.is_some_and(|k| self.map.contains_key(k)))
    }
}

struct Keys<'b>(std::slice::Iter<'b, CelString<'static>>);

impl<'b, 'v> cel::common::traits::Iterator<'b, 'v> for Keys<'b> {
    fn next(&mut self) -> Option<&'b (dyn Val + 'v)> {
        self.0.next().map(|k| k as &dyn Val)
    }
}

impl Iterable for Domains {
    fn iter<'b, 'v>(&'b self) -> Box<dyn cel::common::traits::Iterator<'b, 'v> + 'b>
    where
        Self: 'v,
    {
        Box::new(Keys(self.keys.iter()))
    }
}

impl Indexer for Domains {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let Some(domain) = idx.downcast_ref::<CelString>().map(|s| s.inner()) else {
            return Err(ExecutionError::no_such_key("?"));
        };
        let value = (self.map.get(domain).cloned()).unwrap_or_else(|| {
            Value::Map(Map {
                map: Arc::new(HashMap::new()),
            })
        });
        Ok(CowVal::Owned(boxed(value)?))
    }
    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}
