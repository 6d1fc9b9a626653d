//! The openb node and pod lists as the FGD simulator reads them
//! (`data/csv/openb_node_list_gpu_node.csv`, `data/csv/openb_pod_list_<workload>.csv`).

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::error::{InputError, Position};
use crate::limits;

/// One GPU node: `sn,cpu_milli,memory_mib,gpu,model`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuNode {
    pub name: String,
    pub cpu_milli: i64,
    pub memory_mib: i64,
    /// Identical devices of 1000 milli each.
    pub gpus: usize,
    pub model: String,
}

/// One pod of a trace: (c, μ, k, τ) and its memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracePod {
    pub name: String,
    pub cpu_milli: i64,
    pub memory_mib: i64,
    /// k: whole GPUs, or 1 for a sharing pod; 0 for a CPU-only pod.
    pub gpus: u32,
    /// μ: milli of each GPU (≤ 1000); 0 for a CPU-only pod.
    pub milli: i64,
    /// τ: the allowed models as written (`A|B`), empty for any.
    pub spec: String,
}

impl TracePod {
    /// g = μ·k, the GPU milli the pod asks for.
    pub fn total_milli(&self) -> i64 {
        self.milli * i64::from(self.gpus)
    }

    /// Whether it takes a share of one device.
    pub fn shares(&self) -> bool {
        self.gpus == 1 && self.milli < 1000
    }

    /// Whether τ allows `model`.
    pub fn allows(&self, model: &str) -> bool {
        self.spec.is_empty() || self.spec.split('|').any(|m| m == model)
    }
}

/// The node list (`--nodes`): the openb CSV, or Kubernetes Node objects in YAML or JSON.
pub fn read_nodes(path: &Path) -> Result<Vec<GpuNode>, InputError> {
    let nodes = if is_yaml(path) {
        read_node_objects(path)?
    } else {
        read_node_csv(path)?
    };
    if nodes.is_empty() {
        return Err(InputError::new(path, "no node in the node list"));
    }
    Ok(nodes)
}

fn read_node_csv(path: &Path) -> Result<Vec<GpuNode>, InputError> {
    let table = Table::read(path, &["sn", "cpu_milli", "memory_mib", "gpu", "model"])?;
    let mut nodes = Vec::with_capacity(table.rows.len());
    let mut devices: u64 = 0;
    for row in 0..table.rows.len() {
        let gpus = table.number(row, "gpu")?;
        devices = devices.saturating_add(gpus as u64);
        if limits::GPU_DEVICES.exceeded_by(devices) {
            return Err(table.error(row, "gpu", limits::GPU_DEVICES.message(devices)));
        }
        nodes.push(GpuNode {
            name: table.text(row, "sn").to_string(),
            cpu_milli: table.number(row, "cpu_milli")?,
            memory_mib: table.number(row, "memory_mib")?,
            gpus: gpus as usize,
            model: table.text(row, "model").to_string(),
        });
    }
    Ok(nodes)
}

/// A pod list: the openb CSV, or Kubernetes Pod objects in YAML or JSON. `gpu_spec` is optional (the `multigpu*` lists have none); the
/// trace's times, QoS and phase are not read: every row is one pod that arrives.
pub fn read_pods(path: &Path) -> Result<Vec<TracePod>, InputError> {
    if is_yaml(path) {
        return read_pod_objects(path);
    }
    let required = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"];
    let table = Table::read(path, &required)?;
    let mut pods = Vec::with_capacity(table.rows.len());
    for row in 0..table.rows.len() {
        let gpus = table.number(row, "num_gpu")?;
        // A gpu_milli above 1000 is clamped (the reference's GetPodResource).
        let milli = table.number(row, "gpu_milli")?.min(1000);
        let (gpus, milli) = if gpus == 0 || milli == 0 {
            (0, 0)
        } else {
            (gpus, milli)
        };
        if gpus > 1 && milli < 1000 {
            return Err(table.error(
                row,
                "gpu_milli",
                format!("{gpus} GPUs of {milli} milli each: a pod shares at most one GPU"),
            ));
        }
        pods.push(TracePod {
            name: table.text(row, "name").to_string(),
            cpu_milli: table.number(row, "cpu_milli")?,
            memory_mib: table.number(row, "memory_mib")?,
            gpus: u32::try_from(gpus)
                .map_err(|_| table.error(row, "num_gpu", format!("{gpus} GPUs is out of range")))?,
            milli,
            // The reference's converter writes the model annotation for GPU pods only, its
            // empty parts dropped (`pod_csv_to_yaml.py`).
            spec: if gpus == 0 {
                String::new()
            } else {
                let spec = table.optional(row, "gpu_spec").split('|');
                spec.filter(|m| !m.is_empty()).collect::<Vec<_>>().join("|")
            },
        });
    }
    Ok(pods)
}

/// A CSV file read whole, its columns found by header name.
struct Table<'p> {
    path: &'p Path,
    header: Vec<String>,
    rows: Vec<(csv::StringRecord, u64)>,
}

impl<'p> Table<'p> {
    fn read(path: &'p Path, required: &[&str]) -> Result<Self, InputError> {
        let mut reader = csv::ReaderBuilder::new()
            .from_path(path)
            .map_err(|e| InputError::new(path, e.to_string()))?;
        let header: Vec<String> = (reader.headers())
            .map_err(|e| InputError::new(path, e.to_string()))?
            .iter()
            .map(str::to_string)
            .collect();
        for name in required {
            if !header.iter().any(|h| h == name) {
                let at = Some(Position { line: 1, column: 1 });
                return Err(InputError::new(path, format!("no `{name}` column"))
                    .at(at)
                    .field(format!("header (columns: {})", header.join(","))));
            }
        }
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let position = e.position().map(|p| Position {
                    line: p.line() as u32,
                    column: 1,
                });
                InputError::new(path, e.to_string()).at(position)
            })?;
            let line = record.position().map_or(0, |p| p.line());
            rows.push((record, line));
        }
        Ok(Table { path, header, rows })
    }

    fn index(&self, column: &str) -> Option<usize> {
        self.header.iter().position(|h| h == column)
    }

    fn text(&self, row: usize, column: &str) -> &str {
        let i = self.index(column).expect("a required column");
        self.rows[row].0.get(i).unwrap_or("")
    }

    fn optional(&self, row: usize, column: &str) -> &str {
        (self.index(column))
            .and_then(|i| self.rows[row].0.get(i))
            .unwrap_or("")
    }

    fn number(&self, row: usize, column: &str) -> Result<i64, InputError> {
        let text = self.text(row, column).trim();
        match text.parse::<i64>() {
            Ok(v) if v >= 0 => Ok(v),
            _ => Err(self.error(
                row,
                column,
                format!("`{text}` is not a whole non-negative number"),
            )),
        }
    }

    fn error(&self, row: usize, column: &str, message: String) -> InputError {
        let (record, line) = &self.rows[row];
        let i = self.index(column).unwrap_or(0);
        let col = 1
            + (0..i)
                .map(|j| record.get(j).map_or(0, str::len) + 1)
                .sum::<usize>();
        InputError::new(self.path, message)
            .at(Some(Position {
                line: *line as u32,
                column: col as u32,
            }))
            .field(column.to_string())
    }
}

/// The FGD simulator's annotations and labels (`pkg/type/open-gpu-share/utils/const.go`).
const GPU_MILLI: &str = "alibabacloud.com/gpu-milli";
const GPU_COUNT: &str = "alibabacloud.com/gpu-count";
const GPU_MODEL: &str = "alibabacloud.com/gpu-card-model";

/// Whether a list is given as Kubernetes objects (the reference's `node_yaml/` and converted
/// pod files) rather than CSV: by the file's extension.
fn is_yaml(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// The Kubernetes objects of `kind` in a YAML or JSON file (documents, or `kind: List`
/// items), decoded with their field paths for errors.
fn objects<T: serde::de::DeserializeOwned>(path: &Path, kind: &str) -> Result<Vec<T>, InputError> {
    let mut out = Vec::new();
    for doc in crate::yaml::read_documents(path)? {
        let items: Vec<(String, &serde_json::Value)> = match doc.value.get("items") {
            Some(serde_json::Value::Array(items)) => (items.iter().enumerate())
                .map(|(i, v)| (format!("items[{i}]"), v))
                .collect(),
            _ => vec![(String::new(), &doc.value)],
        };
        for (at, value) in items {
            if value.get("kind").and_then(|k| k.as_str()) == Some(kind) {
                out.push(doc.decode(path, &at, value)?);
            }
        }
    }
    Ok(out)
}

/// A quantity of a resource list as the reference reads it: CPU in milli, others in units.
fn quantity(
    path: &Path,
    list: Option<&BTreeMap<String, Quantity>>,
    name: &str,
    milli: bool,
) -> Result<i64, InputError> {
    let Some(q) = list.and_then(|l| l.get(name)) else {
        return Ok(0);
    };
    let parsed: crate::model::quantity::Quantity =
        (q.0.parse()).map_err(|e| InputError::new(path, format!("{name}: {:?}: {e}", q.0)))?;
    Ok(if milli {
        parsed.milli_value()
    } else {
        parsed.value()
    })
}

/// Nodes as Kubernetes Node objects: CPU and memory from `status.allocatable`, the GPUs
/// from `alibabacloud.com/gpu-count` there, the model from the `alibabacloud.com/gpu-card-model`
/// label (the reference's `data/node_yaml/openb_node_list_gpu_node.yaml`).
fn read_node_objects(path: &Path) -> Result<Vec<GpuNode>, InputError> {
    let mut nodes = Vec::new();
    let mut devices: u64 = 0;
    for node in objects::<Node>(path, "Node")? {
        let allocatable = node.status.as_ref().and_then(|s| s.allocatable.as_ref());
        let gpus = quantity(path, allocatable, GPU_COUNT, false)?.max(0);
        devices = devices.saturating_add(gpus as u64);
        if limits::GPU_DEVICES.exceeded_by(devices) {
            return Err(InputError::new(path, limits::GPU_DEVICES.message(devices)));
        }
        let labels = node.metadata.labels.as_ref();
        nodes.push(GpuNode {
            name: node.metadata.name.clone().unwrap_or_default(),
            cpu_milli: quantity(path, allocatable, "cpu", true)?,
            memory_mib: quantity(path, allocatable, "memory", false)? >> 20,
            gpus: gpus as usize,
            model: (labels.and_then(|l| l.get(GPU_MODEL)).cloned()).unwrap_or_default(),
        });
    }
    Ok(nodes)
}

/// Pods as Kubernetes Pod objects: CPU and memory requested by their containers, the GPU
/// request from the `alibabacloud.com/gpu-count`, `gpu-milli` and `gpu-card-model`
/// annotations (the reference's `pod_csv_to_yaml.py` output).
fn read_pod_objects(path: &Path) -> Result<Vec<TracePod>, InputError> {
    let mut pods = Vec::new();
    for pod in objects::<Pod>(path, "Pod")? {
        let containers = pod
            .spec
            .as_ref()
            .map(|s| s.containers.as_slice())
            .unwrap_or_default();
        let (mut cpu, mut memory) = (0, 0);
        for c in containers {
            let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
            cpu += quantity(path, requests, "cpu", true)?;
            memory += quantity(path, requests, "memory", false)?;
        }
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        let number = |key: &str| -> Result<i64, InputError> {
            match annotations.get(key) {
                None => Ok(0),
                Some(v) => v.trim().parse().map_err(|_| {
                    InputError::new(path, format!("`{v}` is not a whole number"))
                        .field(format!("metadata.annotations.{key}"))
                }),
            }
        };
        let gpus = number(GPU_COUNT)?.max(0);
        let milli = number(GPU_MILLI)?.clamp(0, 1000);
        let (gpus, milli) = if gpus == 0 || milli == 0 {
            (0, 0)
        } else {
            (gpus, milli)
        };
        pods.push(TracePod {
            name: pod.metadata.name.clone().unwrap_or_default(),
            cpu_milli: cpu,
            memory_mib: memory >> 20,
            gpus: u32::try_from(gpus).unwrap_or(u32::MAX),
            milli,
            spec: match gpus {
                0 => String::new(),
                _ => annotations.get(GPU_MODEL).cloned().unwrap_or_default(),
            },
        });
    }
    Ok(pods)
}
