//! Determined's construction of a trial's pod over the merged pod spec (`spec.go: createSpec`,
//! `configureJobSpec`, `modifyPodSpec`; `volumes.go`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::*;

/// `configureUniqueName`: `det-<first 8 chars of the cluster id>-<description>`.
pub(super) fn job_name(defaults: &ClusterDefaults, exp: &ExperimentConfig) -> String {
    let id = defaults.cluster_id.as_deref().unwrap_or(DEFAULT_CLUSTER_ID);
    let prefix: String = id.chars().take(8).collect();
    let description: String = exp
        .name
        .as_deref()
        .unwrap_or("trial")
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let description = description.trim_matches('-');
    let description = if description.is_empty() {
        "trial"
    } else {
        description
    };
    let mut name = format!("det-{prefix}-{description}");
    name.truncate(52);
    name.trim_end_matches('-').to_string()
}

// ------------------------------------------------------------------------------------------
// Determined's construction
// ------------------------------------------------------------------------------------------

/// Where a field of the merged pod came from, for warnings.
pub(super) struct Origins<'a> {
    pub(super) user: Option<&'a Value>,
    pub(super) default: Option<&'a Value>,
    pub(super) default_path: String,
}

impl Origins<'_> {
    /// Where the pod field at JSON pointer `pointer` was configured: the task's pod spec if it
    /// sets the field, else the default's path in the Helm values.
    fn base(&self, pointer: &str) -> &str {
        if self.user.and_then(|u| u.pointer(pointer)).is_some() || self.default.is_none() {
            USER_SOURCE
        } else {
            &self.default_path
        }
    }

    /// The config path of the pod field at JSON pointer `pointer` (no escaped keys).
    fn of(&self, pointer: &str) -> String {
        let field = pointer.trim_start_matches('/').replace('/', ".");
        format!("{}.{field}", self.base(pointer))
    }

    /// The config path of field `key` of the `determined-container`.
    fn of_container_field(&self, key: &str) -> String {
        let has = |pod: Option<&Value>| {
            pod.and_then(|p| find_container(p, DETERMINED_CONTAINER))
                .and_then(|c| c.get(key))
                .is_some()
        };
        let base = if has(self.user) || self.default.is_none() {
            USER_SOURCE
        } else {
            self.default_path.as_str()
        };
        format!("{base}.spec.containers[{DETERMINED_CONTAINER}].{key}")
    }
}

/// Why Determined ignores a field of the pod spec's `determined-container`.
pub(super) const IGNORED_REASONS: &[(&str, &str)] = &[
    ("image", "Determined sets the image from environment.image"),
    ("command", "Determined runs its own entrypoint"),
    ("args", "Determined runs its own entrypoint"),
    (
        "workingDir",
        "Determined sets the working directory to /run/determined/workdir",
    ),
    ("ports", "Determined sets the ports from environment.ports"),
    (
        "imagePullPolicy",
        "Determined sets it from environment.force_pull_image",
    ),
];

/// Everything Determined adds to a pod, for one trial.
pub(super) struct Builder<'a> {
    pub(super) exp: &'a ExperimentConfig,
    pub(super) defaults: &'a ClusterDefaults,
    pub(super) eff: &'a Effective<'a>,
    pub(super) origins: &'a Origins<'a>,
    /// The resource manager's slot type.
    pub(super) slot_type: Device,
    /// The device type of this pod's image and environment (CPU when it has no slots).
    pub(super) device: Device,
    pub(super) slots: i64,
    pub(super) pods: usize,
    pub(super) slots_per_pod: i64,
    pub(super) job_name: &'a str,
}

impl Builder<'_> {
    /// `configureJobSpec` over the merged pod spec. Returns the pod and the PriorityClass
    /// Determined creates, if any.
    pub(super) fn build(
        &self,
        merged: Value,
        w: &mut Vec<String>,
    ) -> (Value, Option<(String, i32)>) {
        let mut pod = match merged {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        pod.shift_remove("apiVersion");
        pod.shift_remove("kind");
        pod.shift_remove("status");
        let mut meta = take_object(&mut pod, "metadata");
        let mut spec = take_object(&mut pod, "spec");

        // Name, namespace.
        for (key, value, what) in [
            (
                "name",
                self.job_name.to_string(),
                "Determined names the trial's Job",
            ),
            (
                "namespace",
                self.eff.namespace.clone(),
                "Determined launches the trial in the resource pool's namespace",
            ),
        ] {
            if let Some(old) = meta.get(key).and_then(Value::as_str)
                && !old.is_empty()
                && old != value
            {
                w.push(format!(
                    "{} is overwritten: {what} ({value})",
                    self.origins.of(&format!("/metadata/{key}"))
                ));
            }
            meta.insert(key.into(), Value::String(value));
        }

        // Labels.
        let mut labels = take_object(&mut meta, "labels");
        let workspace = self.exp.workspace.as_deref().unwrap_or(DEFAULT_WORKSPACE);
        for (key, value) in [
            ("workspace", pod_label_value(workspace)),
            ("resource_pool", pod_label_value(&self.eff.pool)),
            ("task_type", "TRIAL".to_string()),
        ] {
            let key = format!("{LABEL_PREFIX}{key}");
            if let Some(old) = labels.get(&key).and_then(Value::as_str)
                && old != value
            {
                let pointer = format!(
                    "/metadata/labels/{}",
                    key.replace('~', "~0").replace('/', "~1")
                );
                w.push(format!(
                    "{}.metadata.labels[{key}] is overwritten: Determined sets it to {value:?}",
                    self.origins.base(&pointer)
                ));
            }
            labels.insert(key, Value::String(value));
        }

        // modifyPodSpec: scheduler and priority class.
        if self.defaults.default_scheduler.as_deref().map(str::trim) == Some(COSCHEDULER) {
            if str_field(&spec, "schedulerName").is_empty() {
                spec.insert("schedulerName".into(), COSCHEDULER.into());
            }
            if str_field(&spec, "schedulerName") == COSCHEDULER {
                let min_available = if self.slot_type == Device::Cuda && self.slots_per_pod > 0 {
                    (self.slots + self.slots_per_pod - 1) / self.slots_per_pod
                } else {
                    0
                };
                labels
                    .entry("pod-group.scheduling.sigs.k8s.io/name")
                    .or_insert_with(|| self.job_name.into());
                labels
                    .entry("pod-group.scheduling.sigs.k8s.io/min-available")
                    .or_insert_with(|| min_available.to_string().into());
            }
        }
        let mut priority_class = None;
        if str_field(&spec, "priorityClassName").is_empty() {
            let name = match self.exp.resources.priority {
                Some(p) => {
                    let name = format!("{}-priorityclass", self.job_name);
                    priority_class = Some((name.clone(), p));
                    name
                }
                None => MEDIUM_PRIORITY_CLASS.to_string(),
            };
            spec.insert("priorityClassName".into(), name.into());
        }
        meta.insert("labels".into(), Value::Object(labels));

        // addNodeDisabledAffinityToPodSpec.
        let cluster_id = self
            .defaults
            .cluster_id
            .as_deref()
            .unwrap_or(DEFAULT_CLUSTER_ID);
        add_node_selector_requirement(
            &mut spec,
            json!({"key": format!("determined.ai/cluster-id-{cluster_id}"), "operator": "DoesNotExist"}),
        );

        // Containers: the others kept, Determined's appended.
        let containers = match spec.shift_remove("containers") {
            Some(Value::Array(c)) => c,
            _ => Vec::new(),
        };
        let (det_specs, mut containers): (Vec<Value>, Vec<Value>) = containers
            .into_iter()
            .partition(|c| c.get("name").and_then(Value::as_str) == Some(DETERMINED_CONTAINER));
        let (det_mounts, volumes) = self.volumes();
        containers.push(self.determined_container(&det_specs, det_mounts, w));
        spec.insert("containers".into(), Value::Array(containers));

        let mut all_volumes = match spec.shift_remove("volumes") {
            Some(Value::Array(v)) => v,
            _ => Vec::new(),
        };
        all_volumes.extend(volumes);
        spec.insert("volumes".into(), Value::Array(all_volumes));

        // hostNetwork from task_container_defaults.network_mode.
        if spec.get("hostNetwork") == Some(&Value::Bool(true)) && !self.eff.host_network {
            w.push(format!(
                "{} is overwritten: Determined sets hostNetwork from \
                 task_container_defaults.network_mode ({})",
                self.origins.of("/spec/hostNetwork"),
                self.eff.network_mode
            ));
        }
        if self.eff.host_network {
            spec.insert("hostNetwork".into(), true.into());
        } else {
            spec.shift_remove("hostNetwork");
        }

        let mut init = match spec.shift_remove("initContainers") {
            Some(Value::Array(v)) => v,
            _ => Vec::new(),
        };
        init.push(self.init_container());
        spec.insert("initContainers".into(), Value::Array(init));

        if let Some(old) = spec.get("restartPolicy").and_then(Value::as_str)
            && old != "Never"
        {
            w.push(format!(
                "{} is overwritten: Determined always sets Never",
                self.origins.of("/spec/restartPolicy")
            ));
        }
        spec.insert("restartPolicy".into(), "Never".into());

        let mut out = Map::new();
        out.insert("apiVersion".into(), "v1".into());
        out.insert("kind".into(), "Pod".into());
        out.insert("metadata".into(), Value::Object(meta));
        out.insert("spec".into(), Value::Object(spec));
        (Value::Object(out), priority_class)
    }

    /// The image for this pod's device type.
    fn image(&self) -> String {
        let exp_images = self
            .exp
            .environment
            .image
            .as_ref()
            .map(RuntimeImage::per_device)
            .unwrap_or_default();
        let pick = |exp: &Option<String>, tcd: &Option<String>, fallback: &str| {
            exp.clone()
                .or_else(|| tcd.clone())
                .unwrap_or_else(|| fallback.to_string())
        };
        let images = &self.eff.images;
        match self.device {
            Device::Cpu => pick(&exp_images.cpu, &images.cpu, DEFAULT_CPU_IMAGE),
            Device::Cuda => pick(&exp_images.cuda, &images.cuda, DEFAULT_CUDA_IMAGE),
            Device::Rocm => pick(&exp_images.rocm, &images.rocm, DEFAULT_ROCM_IMAGE),
        }
    }

    fn pull_policy(&self) -> &'static str {
        let force = self
            .exp
            .environment
            .force_pull_image
            .unwrap_or(self.eff.force_pull_image);
        if force { "Always" } else { "IfNotPresent" }
    }

    /// `configureResourcesRequirements`: the slots of one pod as limits and requests.
    fn slot_resources(&self) -> Map<String, Value> {
        let mut list = Map::new();
        match self.slot_type {
            Device::Cpu => {
                let per_slot = self.defaults.slot_resource_requests.cpu.unwrap_or(0.0);
                // int64(cpu * float32(slots) * 1000) as a DecimalSI milli-quantity.
                let milli = (per_slot as f32 * self.slots_per_pod as f32 * 1000.0) as i64;
                let q = if milli % 1000 == 0 {
                    (milli / 1000).to_string()
                } else {
                    format!("{milli}m")
                };
                list.insert("cpu".into(), q.into());
            }
            Device::Cuda if self.slots_per_pod > 0 => {
                list.insert(
                    "nvidia.com/gpu".into(),
                    self.slots_per_pod.to_string().into(),
                );
            }
            Device::Rocm if self.slots_per_pod > 0 => {
                list.insert("amd.com/gpu".into(), self.slots_per_pod.to_string().into());
            }
            _ => {}
        }
        list
    }

    /// `configureEnvVars`: Determined's variables (a Go map, so in no particular order upstream;
    /// sorted here), then `DET_AGENT_ID` and `DET_KUBERNETES_POD_IP` from the downward API.
    fn env(&self) -> Vec<Value> {
        let mut vars: BTreeMap<String, String> = BTreeMap::new();
        if let Some(env) = &self.exp.environment.environment_variables {
            for item in env.for_device(self.device) {
                let (k, v) = item.split_once('=').unwrap_or((item, ""));
                vars.insert(k.to_string(), v.to_string());
            }
        }
        let slot_ids: Vec<String> = (0..self.slots_per_pod).map(|i| i.to_string()).collect();
        vars.insert("DET_SLOT_IDS".into(), format!("[{}]", slot_ids.join(",")));
        vars.insert(
            "DET_CLUSTER_ID".into(),
            self.defaults
                .cluster_id
                .clone()
                .unwrap_or_else(|| DEFAULT_CLUSTER_ID.into()),
        );
        if self.device == Device::Cpu {
            vars.insert("NVIDIA_VISIBLE_DEVICES".into(), "void".into());
        }
        vars.insert(
            "DET_KUBERNETES_JOB_PARALLELISM".into(),
            self.pods.to_string(),
        );
        let mut env: Vec<Value> = vars
            .into_iter()
            .map(|(name, value)| {
                if value.is_empty() {
                    json!({"name": name})
                } else {
                    json!({"name": name, "value": value})
                }
            })
            .collect();
        env.push(json!({"name": "DET_AGENT_ID", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}));
        env.push(json!({"name": "DET_KUBERNETES_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}));
        env
    }

    /// `configureVolumes` (`volumes.go`): the `determined-container`'s mounts and the volumes:
    /// bind mounts as `det-host-volume-<i>`, `det-shm-volume` at `/dev/shm`, and the run-archive
    /// volumes of the init container.
    fn volumes(&self) -> (Vec<Value>, Vec<Value>) {
        let mut mounts = Vec::new();
        let mut volumes = Vec::new();
        for (i, b) in self.exp.bind_mounts.iter().enumerate() {
            let name = format!("det-host-volume-{i}");
            let mut mount = json!({"name": name, "mountPath": b.container_path});
            if b.read_only {
                mount["readOnly"] = true.into();
            }
            let propagation = match b.propagation.as_deref() {
                Some("rprivate") => Some("None"),
                Some("rslave") => Some("HostToContainer"),
                Some("rshared") => Some("Bidirectional"),
                _ => None,
            };
            if let Some(p) = propagation {
                mount["mountPropagation"] = p.into();
            }
            mounts.push(mount);
            volumes.push(json!({"name": name, "hostPath": {"path": b.host_path}}));
        }
        mounts.push(json!({"name": "det-shm-volume", "mountPath": "/dev/shm"}));
        volumes.push(json!({"name": "det-shm-volume", "emptyDir": {"medium": "Memory"}}));
        let config_map = self.job_name;
        volumes.push(json!({"name": "archive-volume", "configMap": {"name": config_map}}));
        volumes.push(json!({
            "name": "entrypoint-volume",
            "configMap": {
                "name": config_map,
                "items": [{"key": "k8_init_container_entrypoint.sh", "path": "k8_init_container_entrypoint.sh"}],
                "defaultMode": 0o555,
            }
        }));
        volumes.push(json!({"name": "additional-files-volume", "emptyDir": {}}));
        (mounts, volumes)
    }

    /// `configureInitContainer` (without its arguments, which count the run archives). No
    /// resources: it requests nothing.
    fn init_container(&self) -> Value {
        json!({
            "name": DETERMINED_INIT_CONTAINER,
            "image": self.image(),
            "imagePullPolicy": self.pull_policy(),
            "command": [INIT_ENTRYPOINT],
            "workingDir": INIT_WORK_DIR,
            "volumeMounts": [
                {"name": "archive-volume", "mountPath": INIT_TAR_SRC, "readOnly": true},
                {"name": "entrypoint-volume", "mountPath": INIT_WORK_DIR, "readOnly": true},
                {"name": "additional-files-volume", "mountPath": INIT_TAR_DST},
            ],
        })
    }

    /// Determined's `determined-container`, with what it keeps of the pod spec's
    /// `determined-container`(s).
    fn determined_container(
        &self,
        specs: &[Value],
        det_mounts: Vec<Value>,
        w: &mut Vec<String>,
    ) -> Value {
        let slot_list = self.slot_resources();
        let mut limits = slot_list.clone();
        let mut requests = slot_list;
        let mut env = self.env();
        let mut env_from = Vec::new();
        let mut mounts = det_mounts;
        let mut devices = Vec::new();
        let mut security_context = None;
        for spec in specs {
            let Value::Object(c) = spec else { continue };
            for (key, value) in c {
                match (key.as_str(), value) {
                    ("name", _) => {}
                    ("env", Value::Array(v)) => env.extend(v.iter().cloned()),
                    ("envFrom", Value::Array(v)) => env_from.extend(v.iter().cloned()),
                    ("volumeMounts", Value::Array(v)) => mounts.extend(v.iter().cloned()),
                    ("volumeDevices", Value::Array(v)) => devices.extend(v.iter().cloned()),
                    ("securityContext", Value::Object(sc)) => {
                        if security_context.is_none() {
                            let mut sc = sc.clone();
                            for k in ["runAsUser", "runAsGroup"] {
                                if sc.shift_remove(k).is_some() {
                                    w.push(format!(
                                        "{}.{k} is ignored: Determined sets runAsUser and \
                                         runAsGroup from the agent user group",
                                        self.origins.of_container_field("securityContext")
                                    ));
                                }
                            }
                            security_context = Some(Value::Object(sc));
                        }
                    }
                    ("resources", Value::Object(r)) => {
                        for (rkey, rvalue) in r {
                            let target = match rkey.as_str() {
                                "limits" => &mut limits,
                                "requests" => &mut requests,
                                _ => {
                                    w.push(format!(
                                        "{}.{rkey} is ignored: Determined keeps only resources \
                                         limits and requests",
                                        self.origins.of_container_field("resources")
                                    ));
                                    continue;
                                }
                            };
                            for (name, q) in rvalue.as_object().into_iter().flatten() {
                                if let Some(set) = target.get(name) {
                                    if set != q {
                                        w.push(format!(
                                            "{}.{rkey}[{name}] is ignored: Determined sets \
                                             {name}: {} from the trial's slots",
                                            self.origins.of_container_field("resources"),
                                            set.as_str().unwrap_or_default()
                                        ));
                                    }
                                } else {
                                    target.insert(name.clone(), q.clone());
                                }
                            }
                        }
                    }
                    (other, _) => {
                        let reason = IGNORED_REASONS
                            .iter()
                            .find(|(k, _)| *k == other)
                            .map(|(_, r)| *r)
                            .unwrap_or(
                                "Determined builds its own determined-container and keeps only \
                                 env, envFrom, resources, volumeMounts, volumeDevices and \
                                 securityContext",
                            );
                        w.push(format!(
                            "{} is ignored: {reason}",
                            self.origins.of_container_field(other)
                        ));
                    }
                }
            }
        }
        let mut c = Map::new();
        c.insert("name".into(), DETERMINED_CONTAINER.into());
        c.insert("image".into(), self.image().into());
        c.insert("imagePullPolicy".into(), self.pull_policy().into());
        c.insert("env".into(), Value::Array(env));
        if !env_from.is_empty() {
            c.insert("envFrom".into(), Value::Array(env_from));
        }
        let mut resources = Map::new();
        if !limits.is_empty() {
            resources.insert("limits".into(), Value::Object(limits));
        }
        if !requests.is_empty() {
            resources.insert("requests".into(), Value::Object(requests));
        }
        if !resources.is_empty() {
            c.insert("resources".into(), Value::Object(resources));
        }
        c.insert("volumeMounts".into(), Value::Array(mounts));
        if !devices.is_empty() {
            c.insert("volumeDevices".into(), Value::Array(devices));
        }
        c.insert("workingDir".into(), WORK_DIR.into());
        // environment.ports: a Go map, in no particular order upstream; by name here.
        let ports: Vec<Value> = self
            .exp
            .environment
            .ports
            .values()
            .map(|p| json!({"containerPort": p}))
            .collect();
        if !ports.is_empty() {
            c.insert("ports".into(), Value::Array(ports));
        }
        if let Some(sc) = security_context {
            c.insert("securityContext".into(), sc);
        }
        Value::Object(c)
    }
}

/// `addNodeSelectorRequirement(pod, req, addOnLabel)`: appends `req` to the `matchExpressions`
/// of the first required node-selector term (creating the affinity, the selector and the term
/// as needed), unless an equal requirement is there. Other terms, ORed with the first, do not
/// get it.
pub(super) fn add_node_selector_requirement(spec: &mut Map<String, Value>, req: Value) {
    let affinity = object_entry(spec, "affinity");
    let node_affinity = object_entry(affinity, "nodeAffinity");
    let required = object_entry(
        node_affinity,
        "requiredDuringSchedulingIgnoredDuringExecution",
    );
    let terms = required
        .entry("nodeSelectorTerms")
        .or_insert_with(|| json!([]));
    if !terms.is_array() {
        *terms = json!([]);
    }
    let terms = terms.as_array_mut().expect("an array");
    if terms.is_empty() {
        terms.push(json!({}));
    }
    let first = terms[0].as_object_mut().expect("a node selector term");
    let exprs = first.entry("matchExpressions").or_insert_with(|| json!([]));
    if let Value::Array(items) = exprs
        && !items.contains(&req)
    {
        items.push(req);
    }
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------
