//! The openb node and pod lists as the FGD simulator reads them
//! (`data/csv/openb_node_list_gpu_node.csv`, `data/csv/openb_pod_list_<workload>.csv`).

use std::path::Path;

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

/// The node list (`--nodes`).
pub fn read_nodes(path: &Path) -> Result<Vec<GpuNode>, InputError> {
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

/// A pod list (`--pods`). `gpu_spec` is optional (the `multigpu*` lists have none); the
/// trace's times, QoS and phase are not read: every row is one pod that arrives.
pub fn read_pods(path: &Path) -> Result<Vec<TracePod>, InputError> {
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
