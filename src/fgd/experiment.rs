//! The FGD paper's experiment matrix (reference `experiments/`): workloads × policies ×
//! seeds, each run independent, in parallel, written in the layout of the reference's
//! `experiments/analysis/analysis_*_discrete.csv` so the two compare cell by cell.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use rayon::prelude::*;

use super::discrete::{COLUMNS, Curves, curves, python_float};
use super::input::{GpuNode, TracePod, read_pods};
use super::run::run;
use crate::error::InputError;
use crate::report::AtomicFile;
use crate::sched::gpu_share::frag::{Typical, typical_pods};
use crate::sched::gpu_share::policy::Policy;

/// One workload: its name (the file stem), its pods sorted by name, its target workload.
pub struct Workload {
    pub name: String,
    pub sorted: Vec<TracePod>,
    pub typical: Vec<Typical>,
}

impl Workload {
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let mut sorted = read_pods(path)?;
        let typical = typical_pods(sorted.iter().map(|p| &p.demand));
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let name = (path.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Workload {
            name,
            sorted,
            typical,
        })
    }
}

/// One cell of the matrix and its curves.
pub struct Cell {
    pub workload: usize,
    pub policy: Policy,
    pub seed: i64,
    pub total_gpus: i64,
    pub failed: usize,
    pub curves: Curves,
}

/// The matrix of runs, in output order: by workload, then policy, then seed. Cells are found
/// from their index, so a matrix of any size takes no memory.
pub struct Matrix<'m> {
    pub workloads: usize,
    pub policies: &'m [Policy],
    pub seeds: &'m [i64],
}

impl Matrix<'_> {
    pub fn len(&self) -> u64 {
        (self.workloads as u64) * (self.policies.len() as u64) * (self.seeds.len() as u64)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cell `i`: (workload, policy, seed).
    pub fn cell(&self, i: u64) -> (usize, Policy, i64) {
        let seeds = self.seeds.len() as u64;
        let policies = self.policies.len() as u64;
        let seed = self.seeds[(i % seeds) as usize];
        let policy = self.policies[((i / seeds) % policies) as usize];
        ((i / seeds / policies) as usize, policy, seed)
    }
}

/// Runs written at a time: memory holds one chunk's curves whatever the matrix's size.
const CHUNK: usize = 1024;

/// Runs `todo` in parallel; the results keep `todo`'s order. The first run (in that order)
/// that cannot be made is the error, naming its workload and seed.
pub fn run_all(
    nodes: &[GpuNode],
    workloads: &[Workload],
    todo: &[(usize, Policy, i64)],
    ratio: f64,
) -> Result<Vec<Cell>, String> {
    todo.par_iter()
        .map(|&(w, policy, seed)| {
            let wl = &workloads[w];
            let result = run(nodes, &wl.sorted, &wl.typical, policy, seed, ratio)
                .map_err(|e| format!("{} seed {seed}: {e}", wl.name))?;
            Ok(Cell {
                workload: w,
                policy,
                seed,
                total_gpus: result.total_gpus,
                failed: result.failed,
                curves: curves(&result.rows, result.total_gpus),
            })
        })
        .collect()
}

/// The names of the result files, in the order [`run_and_write`] writes them.
pub const FILES: [&str; 4] = [
    "analysis_allo_discrete.csv",
    "analysis_frag_discrete.csv",
    "analysis_frag_ratio_discrete.csv",
    "analysis_fail.csv",
];

/// Runs the cells `select` keeps (a shard) a chunk at a time and writes the three result
/// files and a count of failed pods per run into `out`, each replaced only once complete;
/// `on_cell` sees each run as it is written. Returns how many runs were made.
pub fn run_and_write(
    out: &Path,
    nodes: &[GpuNode],
    workloads: &[Workload],
    matrix: &Matrix<'_>,
    select: impl Fn(u64) -> bool,
    ratio: f64,
    mut on_cell: impl FnMut(&Cell),
) -> Result<u64, String> {
    let io = |path: &Path, e: std::io::Error| format!("writing {}: {e}", path.display());
    let mut files = Vec::new();
    for name in FILES {
        let path = out.join(name);
        let file = AtomicFile::create(&path).map_err(|e| io(&path, e))?;
        files.push((path, file));
    }
    let header: String = (0..COLUMNS).map(|k| format!(",{k}")).collect();
    let heads = [
        format!("workload,sc_policy,tune,seed,total_gpus{header}\n"),
        format!("workload,sc_policy,tune,seed{header}\n"),
        format!("workload,sc_policy,tune,seed{header}\n"),
        "workload,sc_policy,tune,seed,failed_pods\n".to_string(),
    ];
    for ((path, file), head) in files.iter_mut().zip(heads) {
        file.write_all(head.as_bytes()).map_err(|e| io(path, e))?;
    }
    let mut made = 0;
    let mut todo = Vec::with_capacity(CHUNK);
    let mut next = 0;
    while next < matrix.len() {
        todo.clear();
        while next < matrix.len() && todo.len() < CHUNK {
            if select(next) {
                todo.push(matrix.cell(next));
            }
            next += 1;
        }
        let cells = run_all(nodes, workloads, &todo, ratio)?;
        for c in &cells {
            on_cell(c);
            let rows = rows_of(workloads, c, ratio);
            for ((path, file), row) in files.iter_mut().zip(rows) {
                file.write_all(row.as_bytes()).map_err(|e| io(path, e))?;
            }
        }
        made += cells.len() as u64;
    }
    for (path, file) in files {
        file.commit().map_err(|e| io(&path, e))?;
    }
    Ok(made)
}

/// A run's line in each of the four files.
fn rows_of(workloads: &[Workload], c: &Cell, ratio: f64) -> [String; 4] {
    let meta = format!(
        "{},{},{},{}",
        workloads[c.workload].name,
        c.policy.label(),
        python_float(ratio),
        c.seed
    );
    let cell_text = |v: &Option<f64>| v.map(python_float).unwrap_or_default();
    let line = |values: &[Option<f64>], lead: &str| {
        let mut text = format!("{meta}{lead}");
        for v in values {
            let _ = write!(text, ",{}", cell_text(v));
        }
        text.push('\n');
        text
    };
    [
        line(&c.curves.alloc, &format!(",{}", c.total_gpus)),
        line(&c.curves.frag, ""),
        line(&c.curves.frag_ratio, ""),
        format!("{meta},{}\n", c.failed),
    ]
}
