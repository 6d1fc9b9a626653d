//! Editing a pod template as Trainer's JobSet builder does: containers by name, env and ports
//! upserted, JobSet labels and volume claims, and the API server's and JobSet webhook's
//! defaults (`kubeflow/trainer:pkg/runtime/framework/plugins/jobset/builder.go`).

use serde_json::{Map, Value, json};

pub(super) fn containers(template: &Value) -> impl Iterator<Item = &Value> {
    template
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

pub(super) fn container<'a>(template: &'a Value, name: &str) -> Option<&'a Value> {
    containers(template).find(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

pub(super) fn has_container(template: &Value, name: &str) -> bool {
    container(template, name).is_some()
}

pub(super) fn container_mut<'a>(
    template: &'a mut Value,
    name: &str,
) -> Option<&'a mut Map<String, Value>> {
    template
        .pointer_mut("/spec/containers")
        .and_then(Value::as_array_mut)?
        .iter_mut()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))?
        .as_object_mut()
}

/// `apply.UpsertPort`: by container port.
pub(super) fn upsert_port(template: &mut Value, container_name: &str, port: i64) {
    let Some(c) = container_mut(template, container_name) else {
        return;
    };
    let Some(list) = c.entry("ports").or_insert_with(|| json!([])).as_array_mut() else {
        return;
    };
    if !list
        .iter()
        .any(|p| p.get("containerPort").and_then(Value::as_i64) == Some(port))
    {
        list.push(json!({"containerPort": port}));
    }
}

/// `apply.UpsertEnvVars`: replace by name in place, or append. False when the container is
/// missing.
pub(super) fn upsert_env(template: &mut Value, container_name: &str, env: &[Value]) -> bool {
    let Some(c) = container_mut(template, container_name) else {
        return false;
    };
    let list = c.entry("env").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return false;
    };
    for e in env {
        let name = e.get("name");
        match list.iter_mut().find(|x| x.get("name") == name) {
            Some(existing) => *existing = e.clone(),
            None => list.push(e.clone()),
        }
    }
    true
}

pub(super) fn set_meta(template: &mut Value, field: &str, key: &str, value: &str) {
    let meta = object_entry(template, "metadata");
    let map = meta.entry(field.to_string()).or_insert_with(|| json!({}));
    if let Some(m) = map.as_object_mut() {
        m.insert(key.to_string(), Value::String(value.to_string()));
    }
}

pub(super) fn object_entry<'a>(v: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !v.is_object() {
        *v = json!({});
    }
    let obj = v.as_object_mut().expect("just made an object");
    let e = obj.entry(key.to_string()).or_insert_with(|| json!({}));
    if !e.is_object() {
        *e = json!({});
    }
    e.as_object_mut().expect("just made an object")
}

/// JobSet's labels ([`super::jobset::pod_labels`]) on a replicated job's pod template; per-pod
/// indices are added when pods are made.
pub(super) fn jobset_labels(template: &mut Value, jobset: &str, rjob: &str, replicas: i32) {
    for (k, v) in super::jobset::pod_labels(jobset, rjob, replicas) {
        set_meta(template, "labels", k, &v);
    }
}

/// JobSet `volumeClaimPolicies`: each claim template becomes a volume `<name>` backed by the
/// PVC `<name>-<jobset>` in every pod that mounts it.
pub(super) fn add_claim_volumes(template: &mut Value, jobset_spec: &Value, jobset: &str) {
    let names: Vec<String> = jobset_spec
        .get("volumeClaimPolicies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|p| {
            p.get("templates")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(|t| {
            t.pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    if names.is_empty() {
        return;
    }
    let spec = object_entry(template, "spec");
    let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
    if let Some(list) = volumes.as_array_mut() {
        for n in names {
            if !list
                .iter()
                .any(|v| v.get("name").and_then(Value::as_str) == Some(&n))
            {
                list.push(json!({"name": n, "persistentVolumeClaim": {"claimName": format!("{n}-{jobset}")}}));
            }
        }
    }
}

/// Defaults the API server and the JobSet webhook apply to the pod template that change what
/// a reader sees: `restartPolicy: OnFailure` (JobSet), requests defaulting to limits.
pub(super) fn api_server_defaults(template: &mut Value) {
    let spec = object_entry(template, "spec");
    spec.entry("restartPolicy")
        .or_insert_with(|| json!("OnFailure"));
    for list in ["initContainers", "containers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            for port in c
                .get_mut("ports")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(p) = port.as_object_mut() {
                    p.entry("protocol").or_insert_with(|| json!("TCP"));
                }
            }
            let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
                continue;
            };
            let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() else {
                continue;
            };
            let requests = res.entry("requests").or_insert_with(|| json!({}));
            if let Some(r) = requests.as_object_mut() {
                for (k, v) in limits {
                    r.entry(k).or_insert(v);
                }
            }
        }
    }
}
