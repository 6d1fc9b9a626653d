//! The FGD paper's experiment matrix (reference `experiments/`): workloads × policies ×
//! seeds, each run independent, in parallel, written in the layout of the reference's
//! `experiments/analysis/analysis_*_discrete.csv` so the two compare cell by cell.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::discrete::{COLUMNS, Curves, curves, python_float};
use super::frag::{Typical, typical_pods};
use super::input::{GpuNode, TracePod, read_pods};
use super::policy::Policy;
use super::run::run;
use crate::error::InputError;

/// One workload: its name (the file stem), its pods sorted by name, its target workload.
pub struct Workload {
    pub name: String,
    pub sorted: Vec<TracePod>,
    pub typical: Vec<Typical>,
}

impl Workload {
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let mut sorted = read_pods(path)?;
        let typical = typical_pods(&sorted);
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

/// The runs to make, in output order: by workload, policy, seed.
pub fn cells(workloads: usize, policies: &[Policy], seeds: &[i64]) -> Vec<(usize, Policy, i64)> {
    let mut out = Vec::new();
    for w in 0..workloads {
        for &p in policies {
            for &s in seeds {
                out.push((w, p, s));
            }
        }
    }
    out
}

/// Runs `todo` (a shard of [`cells`]) in parallel; the results keep `todo`'s order.
pub fn run_all(
    nodes: &[GpuNode],
    workloads: &[Workload],
    todo: &[(usize, Policy, i64)],
    ratio: f64,
) -> Vec<Cell> {
    todo.par_iter()
        .map(|&(w, policy, seed)| {
            let wl = &workloads[w];
            let result = run(nodes, &wl.sorted, &wl.typical, policy, seed, ratio);
            Cell {
                workload: w,
                policy,
                seed,
                total_gpus: result.total_gpus,
                failed: result.failed,
                curves: curves(&result.rows, result.total_gpus),
            }
        })
        .collect()
}

/// The three result files and a summary of failed pods, written into `out`.
pub fn write(
    out: &Path,
    workloads: &[Workload],
    cells: &[Cell],
    ratio: f64,
) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out)?;
    let header: String = (0..COLUMNS).map(|k| format!(",{k}")).collect();
    let mut allo = format!("workload,sc_policy,tune,seed,total_gpus{header}\n");
    let mut frag = format!("workload,sc_policy,tune,seed{header}\n");
    let mut ratio_csv = frag.clone();
    let mut fail = String::from("workload,sc_policy,tune,seed,failed_pods\n");
    let cell_text = |v: &Option<f64>| v.map(python_float).unwrap_or_default();
    for c in cells {
        let meta = format!(
            "{},{},{},{}",
            workloads[c.workload].name,
            c.policy.label(),
            python_float(ratio),
            c.seed
        );
        let _ = write!(allo, "{meta},{}", c.total_gpus);
        let _ = write!(frag, "{meta}");
        let _ = write!(ratio_csv, "{meta}");
        for k in 0..COLUMNS {
            let _ = write!(allo, ",{}", cell_text(&c.curves.alloc[k]));
            let _ = write!(frag, ",{}", cell_text(&c.curves.frag[k]));
            let _ = write!(ratio_csv, ",{}", cell_text(&c.curves.frag_ratio[k]));
        }
        allo.push('\n');
        frag.push('\n');
        ratio_csv.push('\n');
        let _ = writeln!(fail, "{meta},{}", c.failed);
    }
    let files = [
        ("analysis_allo_discrete.csv", allo),
        ("analysis_frag_discrete.csv", frag),
        ("analysis_frag_ratio_discrete.csv", ratio_csv),
        ("analysis_fail.csv", fail),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = out.join(name);
        crate::report::write_atomic(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}
