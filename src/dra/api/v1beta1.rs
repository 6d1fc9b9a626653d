//! `resource.k8s.io/v1beta1`, which Kubernetes 1.34 still serves (NVIDIA's DRA driver
//! examples use it), read as the API server reads it: defaulted with v1beta1's defaults
//! (`pkg/apis/resource/v1beta1/defaults.go`) and converted to the internal form, which is
//! `v1`'s (`pkg/apis/resource/v1beta1/conversion.go` and its generated conversions, 1.34):
//! - a request's own fields (`deviceClassName`, `selectors`, `allocationMode`, `count`,
//!   `adminAccess`, `tolerations`, `capacity`) move into `exactly` when any of them is set
//!   (`hasAnyMainRequestFieldsSet`), beside `firstAvailable`; a request with both is then
//!   refused by validation, as the API server refuses it;
//! - a device's `basic` fields become the device's own.
//!
//! Everything else (DeviceClasses, constraints, configs, subrequests, the status) has the
//! same shape in both versions. Validation then runs on the `v1` form, so its messages name
//! `v1`'s field paths (`…exactly.selectors[0]…`), as the API server's do: it validates the
//! internal form too.

use serde_json::{Map, Value};

/// The version this module converts.
pub const API_VERSION: &str = "resource.k8s.io/v1beta1";

/// A request's fields that v1 keeps in `exactly`, as v1beta1 names them.
const EXACT_FIELDS: [&str; 7] = [
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
];

/// The `v1` form of a `v1beta1` object of `kind`, as JSON.
pub fn to_v1(kind: &str, object: &Value) -> Value {
    let mut v1 = object.clone();
    v1["apiVersion"] = Value::from(super::API_VERSIONS[0]);
    let requests = match kind {
        "ResourceClaim" => v1.pointer_mut("/spec/devices/requests"),
        "ResourceClaimTemplate" => v1.pointer_mut("/spec/spec/devices/requests"),
        "ResourceSlice" => {
            if let Some(Value::Array(devices)) = v1.pointer_mut("/spec/devices") {
                devices.iter_mut().for_each(flatten_basic);
            }
            None
        }
        _ => None,
    };
    if let Some(Value::Array(requests)) = requests {
        requests.iter_mut().for_each(convert_request);
    }
    v1
}

/// Go's zero value: a field a Go struct leaves unset.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(_) | Value::Array(_) | Value::Object(_) => false,
    }
}

/// `SetDefaults_DeviceRequest` (only a request that names a class: one without has
/// subrequests), then `Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest`.
fn convert_request(request: &mut Value) {
    let Value::Object(fields) = request else {
        return;
    };
    let class = fields.get("deviceClassName").and_then(Value::as_str);
    if class.is_some_and(|c| !c.is_empty()) {
        let mode = fields.get("allocationMode").and_then(Value::as_str);
        if mode.is_none_or(str::is_empty) {
            fields.insert("allocationMode".into(), Value::from("ExactCount"));
        }
        let exact_count =
            fields.get("allocationMode").and_then(Value::as_str) == Some("ExactCount");
        if exact_count && fields.get("count").is_none_or(is_zero) {
            fields.insert("count".into(), Value::from(1));
        }
    }
    let mut exactly = Map::new();
    for name in EXACT_FIELDS {
        if let Some(value) = fields.remove(name) {
            exactly.insert(name.into(), value);
        }
    }
    if exactly.values().any(|v| !is_zero(v)) {
        exactly.retain(|_, v| !v.is_null());
        // Go's zero value, which `v1` requires to be present.
        exactly.entry("deviceClassName").or_insert(Value::from(""));
        fields.insert("exactly".into(), Value::Object(exactly));
    }
}

/// `Convert_v1beta1_Device_To_resource_Device`: the `basic` fields, the device's own.
fn flatten_basic(device: &mut Value) {
    let Value::Object(fields) = device else {
        return;
    };
    if let Some(Value::Object(basic)) = fields.remove("basic") {
        for (name, value) in basic {
            fields.entry(name).or_insert(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_moves_its_own_fields_into_exactly_with_v1beta1_defaults() {
        let claim = json!({"apiVersion": API_VERSION, "kind": "ResourceClaim", "spec": {"devices": {"requests": [
            {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": "true"}}]},
            {"name": "any", "firstAvailable": [{"name": "a", "deviceClassName": "c"}]},
            {"name": "both", "count": 2, "firstAvailable": [{"name": "a", "deviceClassName": "c"}]},
        ]}}});
        let v1 = to_v1("ResourceClaim", &claim);
        assert_eq!(v1["apiVersion"], "resource.k8s.io/v1");
        let requests = &v1["spec"]["devices"]["requests"];
        assert_eq!(
            requests[0],
            json!({"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": "true"}}], "allocationMode": "ExactCount", "count": 1}})
        );
        assert_eq!(
            requests[1],
            json!({"name": "any", "firstAvailable": [{"name": "a", "deviceClassName": "c"}]})
        );
        assert_eq!(
            requests[2]["exactly"],
            json!({"count": 2, "deviceClassName": ""})
        );
    }

    #[test]
    fn a_device_loses_its_basic_wrapper() {
        let slice = json!({"spec": {"devices": [
            {"name": "gpu-0", "basic": {"attributes": {"index": {"int": 0}}, "capacity": {"memory": {"value": "40Gi"}}}},
            {"name": "bare"},
        ]}});
        let v1 = to_v1("ResourceSlice", &slice);
        assert_eq!(
            v1["spec"]["devices"],
            json!([
                {"name": "gpu-0", "attributes": {"index": {"int": 0}}, "capacity": {"memory": {"value": "40Gi"}}},
                {"name": "bare"},
            ])
        );
    }
}
