//! The ML-policy plugins' part of a TrainJob's pods: pod counts (`numNodes`), Torch's `PET_*`
//! env and MPI's launcher/node wiring (`kubeflow/trainer:pkg/runtime/framework/plugins/
//! {torch,mpi}`).

use serde_json::{Value, json};

use super::runtime::{LAUNCHER, MlPolicy, MpiPolicy, NODE};
use super::template::*;
use super::trainjob::TrainJob;

/// Torch's rendezvous port (`pub(super) constants.ContainerTrainerPort`).
pub(super) const TORCH_MASTER_PORT: i64 = 29500;

/// Pods per Job: template parallelism, or for the trainer job the ML policy's `numNodes`
/// (default 1) overridden by `trainer.numNodes`; MPI counts the job named `node`
/// (`numNodes`, minus the launcher when it runs as a node).
pub(super) fn pod_count(
    job: &TrainJob,
    ml: Option<&MlPolicy>,
    name: &str,
    is_trainer: bool,
    template_parallelism: i32,
) -> i32 {
    let Some(ml) = ml else {
        return template_parallelism.max(1);
    };
    let policy_nodes = ml.num_nodes.unwrap_or(1);
    let trainjob_nodes = job.spec.trainer.as_ref().and_then(|t| t.num_nodes);
    if let Some(mpi) = &ml.mpi {
        // The MPI plugin only recounts the `node` job, and only when the TrainJob sets numNodes.
        if name == NODE {
            return match trainjob_nodes {
                Some(n) if mpi.run_launcher_as_node == Some(true) => (n - 1).max(1),
                Some(n) => n,
                None if is_trainer => policy_nodes.max(1),
                None => template_parallelism.max(1),
            };
        }
        return if is_trainer {
            policy_nodes.max(1)
        } else {
            template_parallelism.max(1)
        };
    }
    if is_trainer {
        trainjob_nodes.unwrap_or(policy_nodes.max(1))
    } else {
        template_parallelism.max(1)
    }
}

/// Torch's env for the trainer container (`plugins/torch/torch.go`).
pub(super) fn torch_env(
    job: &TrainJob,
    torch: &Value,
    num_nodes: i32,
    template: &Value,
) -> Vec<Value> {
    // The TrainJob's numProcPerNode, else the policy's (v2.1), else `auto`.
    let setting = job
        .spec
        .trainer
        .as_ref()
        .and_then(|t| t.num_proc_per_node.as_ref())
        .or_else(|| torch.get("numProcPerNode"));
    let nproc = match setting {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) if s != "auto" => s.clone(),
        _ => auto_nproc(job, template),
    };
    vec![
        json!({"name": "PET_NNODES", "value": num_nodes.to_string()}),
        json!({"name": "PET_NPROC_PER_NODE", "value": nproc}),
        json!({"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}),
        json!({"name": "PET_MASTER_ADDR", "value": format!("{0}-{NODE}-0-0.{0}", job.name())}),
        json!({"name": "PET_MASTER_PORT", "value": TORCH_MASTER_PORT.to_string()}),
    ]
}

/// The MPI policy on the `node` and `launcher` jobs (`plugins/mpi/mpi.go: EnforceMLPolicy`):
/// the SSH-key secret volume mounted into container `node`; on the launcher also the hostfile
/// and OpenMPI's env. Slots are the TrainJob's `numProcPerNode`, else the policy's, raised to
/// the GPU count when the policy says 1.
pub(super) fn mpi_policy(template: &mut Value, job: &TrainJob, mpi: &MpiPolicy, rjob: &str) {
    let mut volumes = vec![json!({"name": "mpi-ssh-auth", "secret": {
        "secretName": format!("{}-mpi-ssh-auth", job.name()), "defaultMode": 0o640,
        "items": [{"key": "ssh-privatekey", "path": "id_rsa"}, {"key": "ssh-publickey", "path": "id_rsa.pub"},
                  {"key": "ssh-publickey", "path": "authorized_keys"}]}})];
    let ssh_path = mpi
        .ssh_auth_mount_path
        .clone()
        .unwrap_or_else(|| "/root/.ssh".into());
    let mut mounts = vec![json!({"name": "mpi-ssh-auth", "mountPath": ssh_path})];
    let mut env = Vec::new();
    if rjob == LAUNCHER {
        volumes.push(json!({"name": "mpi-hostfile", "configMap": {
            "name": format!("{}-mpi-hostfile", job.name()), "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}]}}));
        mounts.push(json!({"name": "mpi-hostfile", "mountPath": "/etc/mpi"}));
        let trainer = job.spec.trainer.as_ref();
        let slots = match trainer
            .and_then(|t| t.num_proc_per_node.as_ref())
            .and_then(Value::as_i64)
        {
            Some(n) => n,
            None => {
                let policy = i64::from(mpi.num_proc_per_node.unwrap_or(1));
                let gpus = trainer
                    .and_then(|t| t.resources_per_node.as_ref())
                    .and_then(|r| r.limits.as_ref().or(r.requests.as_ref()))
                    .and_then(|l| l.iter().find(|(k, _)| k.contains("gpu")))
                    .and_then(|(_, q)| q.0.parse::<crate::model::quantity::Quantity>().ok())
                    .map(|q| q.value())
                    .unwrap_or(0);
                if policy == 1 && gpus > 1 {
                    gpus
                } else {
                    policy
                }
            }
        };
        env = vec![
            json!({"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"}),
            json!({"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"}),
            json!({"name": "OMPI_MCA_orte_set_default_slots", "value": slots.to_string()}),
            json!({"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"}),
        ];
    }
    let spec = object_entry(template, "spec");
    let list = spec.entry("volumes").or_insert_with(|| json!([]));
    if let Some(list) = list.as_array_mut() {
        for v in volumes {
            match list.iter_mut().find(|x| x.get("name") == v.get("name")) {
                Some(existing) => *existing = v,
                None => list.push(v),
            }
        }
    }
    if let Some(c) = container_mut(template, NODE) {
        let list = c.entry("volumeMounts").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            for m in mounts {
                match list
                    .iter_mut()
                    .find(|x| x.get("mountPath") == m.get("mountPath"))
                {
                    Some(existing) => *existing = m,
                    None => list.push(m),
                }
            }
        }
    }
    upsert_env(template, NODE, &env);
}

/// `auto`, unless the trainer has no GPU: then the CPU count (at least 1).
pub(super) fn auto_nproc(job: &TrainJob, template: &Value) -> String {
    let resources = job
        .spec
        .trainer
        .as_ref()
        .and_then(|t| t.resources_per_node.as_ref())
        .and_then(|r| serde_json::to_value(r).ok())
        .or_else(|| container(template, NODE).and_then(|c| c.get("resources").cloned()))
        .unwrap_or(Value::Null);
    let lists = ["requests", "limits"].map(|k| resources.get(k).and_then(Value::as_object));
    let has_gpu = lists
        .iter()
        .flatten()
        .any(|m| m.keys().any(|k| k.contains("gpu")));
    if has_gpu {
        return "auto".into();
    }
    let cpu = lists
        .iter()
        .flatten()
        .find_map(|m| m.get("cpu"))
        .and_then(|v| match v {
            Value::String(s) => s
                .parse::<crate::model::quantity::Quantity>()
                .ok()
                .map(|q| q.value()),
            Value::Number(n) => n.as_f64().map(|f| f.ceil() as i64),
            _ => None,
        });
    cpu.unwrap_or(1).max(1).to_string()
}
