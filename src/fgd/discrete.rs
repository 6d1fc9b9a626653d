//! The per-run curves of the reference's `experiments/analysis/merge_*_discrete.py`: each
//! arrival row gets the integer percentage of GPU capacity arrived so far, and each column
//! 0..=130 averages the rows at that percentage (or, when there are none, at ±1).

use super::run::{Row, round2};

/// Columns: arrived workload as a percentage of the cluster's GPUs.
pub const COLUMNS: usize = 131;

/// A run's three curves; `None` where no row falls near the column.
pub struct Curves {
    /// Allocated GPU milli in % of all GPUs, rounded to 2 decimals (`analysis_allo`).
    pub alloc: Vec<Option<f64>>,
    /// Fragmented GPU milli in % of all GPUs, rounded to 2 decimals (`analysis_frag`).
    pub frag: Vec<Option<f64>>,
    /// Fragmented share of the idle GPU milli, % (`analysis_frag_ratio`).
    pub frag_ratio: Vec<Option<f64>>,
}

pub fn curves(rows: &[Row], total_gpus: i64) -> Curves {
    let total = total_gpus as f64;
    // `round(x, 0)`: ties to even, on the double pandas computes.
    let arrive: Vec<i64> = (rows.iter())
        .map(|r| (r.arrived_milli as f64 / total / 10.0).round_ties_even() as i64)
        .collect();
    let alloc: Vec<f64> = (rows.iter())
        .map(|r| round2(r.used_milli as f64 / total / 10.0))
        .collect();
    let mut out = Curves {
        alloc: vec![None; COLUMNS],
        frag: vec![None; COLUMNS],
        frag_ratio: vec![None; COLUMNS],
    };
    for k in 0..COLUMNS as i64 {
        let mut at: Vec<usize> = (0..rows.len()).filter(|&i| arrive[i] == k).collect();
        if at.is_empty() {
            at = (0..rows.len())
                .filter(|&i| (arrive[i] - k).abs() <= 1)
                .collect();
        }
        if at.is_empty() {
            continue;
        }
        let mean =
            |f: &dyn Fn(usize) -> f64| at.iter().map(|&i| f(i)).sum::<f64>() / at.len() as f64;
        let k = k as usize;
        out.alloc[k] = Some(round2(mean(&|i| alloc[i])));
        let frag_milli = mean(&|i| rows[i].frag_milli);
        out.frag[k] = Some(round2(100.0 * frag_milli / 1000.0 / total));
        out.frag_ratio[k] = Some(mean(&|i| rows[i].frag_ratio));
    }
    out
}

/// A float as Python's `repr` writes it into the CSVs (`2.0`, `0.25`, `nan`: a cluster with
/// no idle GPU has a fragmentation ratio of 0/0, as in the reference).
pub fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let s = format!("{x}");
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::python_float;

    #[test]
    fn floats_are_written_as_python_writes_them() {
        assert_eq!(python_float(2.0), "2.0");
        assert_eq!(python_float(0.25), "0.25");
        assert_eq!(python_float(12.345678901234567), "12.345678901234567");
        assert_eq!(python_float(f64::NAN), "nan");
        assert_eq!(python_float(-0.0), "-0.0");
    }
}
