//! The paper's charts of an experiment (its Figs. 7 and 9–14): per workload, the unallocated
//! GPUs and the fragmentation against the arrived workload, one line per policy (the median
//! over seeds in a band from the 25th to the 75th percentile), and the unallocated GPUs at
//! 100 % arrived as boxes over seeds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::experiment::{Cell, Workload};
use crate::report::chart::{Chart, register_font, write_chart};
use crate::sched::gpu_share::policy::Policy;

/// Runs `--charts` keeps in memory (each holds two curves of 131 points until drawn).
pub const MAX_RUNS: u64 = 100_000;

/// One run's allocation and fragmentation curves (`None` where no row fell near a column).
type RunCurves = [Vec<Option<f64>>; 2];

/// Per (workload, policy): each seed's curves.
#[derive(Default)]
pub struct SeedCurves {
    by: BTreeMap<(usize, Policy), Vec<RunCurves>>,
}

impl SeedCurves {
    pub fn add(&mut self, c: &Cell) {
        (self.by.entry((c.workload, c.policy)).or_default())
            .push([c.curves.alloc.clone(), c.curves.frag.clone()]);
    }
}

/// The `q` quantile of sorted `values`, interpolated between neighbours (numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

/// Five figures of `values` (least, p25, median, p75, most), `None` when there are none.
fn spread(mut values: Vec<f64>) -> Option<[f64; 5]> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some([0.0, 0.25, 0.5, 0.75, 1.0].map(|q| quantile(&values, q)))
}

/// One band per policy of a workload: curve `which` (0 allocation, 1 fragmentation) mapped by
/// `y`, for the columns up to `last`.
fn bands(
    curves: &SeedCurves,
    workload: usize,
    which: usize,
    last: usize,
    y: impl Fn(f64) -> f64,
) -> Vec<(String, Vec<[f64; 4]>)> {
    let mut out = Vec::new();
    for ((w, policy), runs) in &curves.by {
        if *w != workload {
            continue;
        }
        let points = (0..=last)
            .filter_map(|k| {
                let values = runs.iter().filter_map(|r| r[which][k]).map(&y).collect();
                let s = spread(values)?;
                Some([k as f64, s[1], s[2], s[3]])
            })
            .collect();
        out.push((policy.label().to_string(), points));
    }
    out
}

/// Writes the charts (SVG and PNG) into `out`; returns the files' paths without extension.
pub fn write_charts(
    out: &Path,
    workloads: &[Workload],
    curves: &SeedCurves,
) -> Result<Vec<PathBuf>, String> {
    register_font();
    let mut written = Vec::new();
    let mut at_100 = Vec::new();
    for (w, workload) in workloads.iter().enumerate() {
        let unallocated = Chart::Bands {
            caption: format!(
                "{}: unallocated GPUs (median over seeds, 25–75 %)",
                workload.name
            ),
            x_axis: "arrived workload (% of the cluster's GPUs)",
            y_axis: "unallocated GPUs (%)",
            lines: bands(curves, w, 0, 130, |a| 100.0 - a),
        };
        let fragmentation = Chart::Bands {
            caption: format!(
                "{}: fragmented GPUs (median over seeds, 25–75 %)",
                workload.name
            ),
            x_axis: "arrived workload (% of the cluster's GPUs)",
            y_axis: "fragmented GPUs (% of the cluster's GPUs)",
            lines: bands(curves, w, 1, 120, |f| f),
        };
        for (chart, name) in [
            (unallocated, "unallocated"),
            (fragmentation, "fragmentation"),
        ] {
            let path = out.join(format!("fgd-{}-{name}", workload.name));
            write_chart(&path, &chart)?;
            written.push(path);
        }
        for ((cw, policy), runs) in &curves.by {
            if *cw == w {
                let values = runs
                    .iter()
                    .filter_map(|r| r[0][100])
                    .map(|a| 100.0 - a)
                    .collect();
                at_100.push((
                    format!("{} · {}", workload.name, policy.label()),
                    spread(values),
                ));
            }
        }
    }
    let boxes = Chart::Boxes {
        caption: "Unallocated GPUs at 100 % arrived, over seeds".to_string(),
        axis: "unallocated GPUs (%)".to_string(),
        rows: at_100,
    };
    let path = out.join("fgd-unallocated-at-100");
    write_chart(&path, &boxes)?;
    written.push(path);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_as_numpy_does() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(spread(vec![3.0, 1.0, 2.0]), Some([1.0, 1.5, 2.0, 2.5, 3.0]));
        assert_eq!(spread(vec![]), None);
    }
}
