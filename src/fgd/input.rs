//! The openb node and pod lists as the FGD simulator reads them
//! (`data/csv/openb_node_list_gpu_node.csv`, `data/csv/openb_pod_list_<workload>.csv`).

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::error::{InputError, Position};
use crate::limits;
use crate::sched::gpu_share::Demand;

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

/// One pod of a trace: its name, memory and demand (c, μ, k, τ) — μ at most 1000 here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracePod {
    pub name: String,
    pub memory_mib: i64,
    pub demand: Demand,
}

impl std::ops::Deref for TracePod {
    type Target = Demand;
    fn deref(&self) -> &Demand {
        &self.demand
    }
}

/// Which of a pod's GPU fields a [`TracePod::new`] refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuField {
    Count,
    Milli,
}

impl TracePod {
    /// A pod as the reference reads it, whatever the form it came in: `gpu_milli` above 1000
    /// clamped (`GetPodResource`); no GPU count or no milli makes a CPU-only pod, whose model
    /// list is ignored (the converter writes the model annotation for GPU pods only); the
    /// list's empty parts dropped (`pod_csv_to_yaml.py`). A share of more than one GPU is
    /// refused: the reference panics on it.
    pub fn new(
        name: String,
        (cpu_milli, memory_mib): (i64, i64),
        (gpus, milli): (i64, i64),
        spec: &str,
    ) -> Result<Self, (GpuField, String)> {
        let milli = milli.min(1000);
        let (gpus, milli) = if gpus <= 0 || milli <= 0 {
            (0, 0)
        } else {
            (gpus, milli)
        };
        if gpus > 1 && milli < 1000 {
            let message =
                format!("{gpus} GPUs of {milli} milli each: a pod shares at most one GPU");
            return Err((GpuField::Milli, message));
        }
        let gpus = u32::try_from(gpus)
            .map_err(|_| (GpuField::Count, format!("{gpus} GPUs is out of range")))?;
        let spec = match gpus {
            0 => String::new(),
            _ => (spec.split('|').filter(|m| !m.is_empty()))
                .collect::<Vec<_>>()
                .join("|"),
        };
        Ok(TracePod {
            name,
            memory_mib,
            demand: Demand {
                cpu_milli,
                gpus,
                milli,
                spec,
                plugin: false,
            },
        })
    }

    /// Whether τ allows `model`.
    pub fn allows(&self, model: &str) -> bool {
        crate::model::gpu_share::accepts(&self.spec, model)
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
        let pod = TracePod::new(
            table.text(row, "name").to_string(),
            (
                table.number(row, "cpu_milli")?,
                table.number(row, "memory_mib")?,
            ),
            (
                table.number(row, "num_gpu")?,
                table.number(row, "gpu_milli")?,
            ),
            table.optional(row, "gpu_spec"),
        );
        pods.push(pod.map_err(|(field, message)| {
            let column = match field {
                GpuField::Count => "num_gpu",
                GpuField::Milli => "gpu_milli",
            };
            table.error(row, column, message)
        })?);
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
use crate::model::gpu_share::{GPU_COUNT, GPU_MILLI, GPU_MODEL};

/// Whether a list is given as Kubernetes objects (the reference's `node_yaml/` and converted
/// pod files) rather than CSV: by the file's extension.
fn is_yaml(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// An error at a field path of the object being read (relative to the object), with its
/// line and column.
type FieldErr<'e> = &'e dyn Fn(&str, String) -> InputError;

/// The Kubernetes objects of `kind` in a YAML or JSON file (documents, or `kind: List`
/// items), each decoded and made into what `convert` returns; errors name the object's field
/// and its position.
fn objects<T: serde::de::DeserializeOwned, U>(
    path: &Path,
    kind: &str,
    mut convert: impl FnMut(T, FieldErr<'_>) -> Result<U, InputError>,
) -> Result<Vec<U>, InputError> {
    let mut out = Vec::new();
    for doc in crate::yaml::read_documents(path)? {
        let items: Vec<(String, &serde_json::Value)> = match doc.value.get("items") {
            Some(serde_json::Value::Array(items)) => (items.iter().enumerate())
                .map(|(i, v)| (format!("items[{i}]"), v))
                .collect(),
            _ => vec![(String::new(), &doc.value)],
        };
        for (at, value) in items {
            if value.get("kind").and_then(|k| k.as_str()) != Some(kind) {
                continue;
            }
            let object = doc.decode(path, &at, value)?;
            let error = |field: &str, message: String| {
                doc.error(path, &crate::yaml::join_path(&at, field), message)
            };
            out.push(convert(object, &error)?);
        }
    }
    Ok(out)
}

/// A quantity of a resource list (at field path `list_path`) as the reference reads it: CPU
/// in milli, others in units; a missing one is 0.
fn quantity(
    list: Option<&BTreeMap<String, Quantity>>,
    (list_path, name): (&str, &str),
    milli: bool,
    error: FieldErr<'_>,
) -> Result<i64, InputError> {
    let Some(q) = list.and_then(|l| l.get(name)) else {
        return Ok(0);
    };
    let parsed: crate::model::quantity::Quantity = (q.0.parse())
        .map_err(|e| error(&format!("{list_path}.{name}"), format!("{:?}: {e}", q.0)))?;
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
    let mut devices: u64 = 0;
    objects(path, "Node", |node: Node, error| {
        let allocatable = node.status.as_ref().and_then(|s| s.allocatable.as_ref());
        let at = |name| ("status.allocatable", name);
        let gpus = quantity(allocatable, at(GPU_COUNT), false, error)?.max(0);
        devices = devices.saturating_add(gpus as u64);
        if limits::GPU_DEVICES.exceeded_by(devices) {
            let field = format!("status.allocatable.{GPU_COUNT}");
            return Err(error(&field, limits::GPU_DEVICES.message(devices)));
        }
        let labels = node.metadata.labels.as_ref();
        Ok(GpuNode {
            name: node.metadata.name.clone().unwrap_or_default(),
            cpu_milli: quantity(allocatable, at("cpu"), true, error)?,
            memory_mib: quantity(allocatable, at("memory"), false, error)? >> 20,
            gpus: gpus as usize,
            model: (labels.and_then(|l| l.get(GPU_MODEL)).cloned()).unwrap_or_default(),
        })
    })
}

/// Pods as Kubernetes Pod objects: CPU and memory requested by their containers, the GPU
/// request from the `alibabacloud.com/gpu-count`, `gpu-milli` and `gpu-card-model`
/// annotations (the reference's `pod_csv_to_yaml.py` output).
fn read_pod_objects(path: &Path) -> Result<Vec<TracePod>, InputError> {
    objects(path, "Pod", |pod: Pod, error| {
        let containers = (pod.spec.as_ref())
            .map(|s| s.containers.as_slice())
            .unwrap_or_default();
        let (mut cpu, mut memory) = (0i64, 0i64);
        for (i, c) in containers.iter().enumerate() {
            let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
            let list = format!("spec.containers[{i}].resources.requests");
            // The API server refuses negative requests (`ValidateResourceQuantityValue`).
            let request = |name, milli| {
                let value = quantity(requests, (list.as_str(), name), milli, error)?;
                match value < 0 {
                    true => Err(error(
                        &format!("{list}.{name}"),
                        "must be greater than or equal to 0".into(),
                    )),
                    false => Ok(value),
                }
            };
            cpu = cpu.saturating_add(request("cpu", true)?);
            memory = memory.saturating_add(request("memory", false)?);
        }
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        let annotation = |key: &str| format!("metadata.annotations.{key}");
        let number = |key: &str| -> Result<i64, InputError> {
            match annotations.get(key) {
                None => Ok(0),
                Some(v) => (v.trim().parse())
                    .map_err(|_| error(&annotation(key), format!("`{v}` is not a whole number"))),
            }
        };
        let model = annotations.get(GPU_MODEL).map_or("", String::as_str);
        TracePod::new(
            pod.metadata.name.clone().unwrap_or_default(),
            (cpu, memory >> 20),
            (number(GPU_COUNT)?, number(GPU_MILLI)?),
            model,
        )
        .map_err(|(field, message)| {
            let key = match field {
                GpuField::Count => GPU_COUNT,
                GpuField::Milli => GPU_MILLI,
            };
            error(&annotation(key), message)
        })
    })
}
