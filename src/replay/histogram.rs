//! Waits as a histogram: exact while it holds few distinct values, then log-linear buckets
//! (HdrHistogram's layout) with a relative error below 0.1 %, so memory stays bounded however
//! long the replay, and two histograms merge exactly.

use std::collections::BTreeMap;

/// Distinct values kept exactly before the histogram turns to buckets.
const EXACT_VALUES: usize = 16_384;
/// Values below this stay exact in buckets too; above, each power of two has this many
/// buckets (a relative width of 1/1024).
const SUB_BUCKETS: u64 = 1024;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Value (or bucket's lowest value) → count.
    counts: BTreeMap<u64, u64>,
    bucketed: bool,
    total: u64,
    sum: u128,
    max: u64,
}

impl Histogram {
    pub fn add(&mut self, value: u64) {
        let key = match self.bucketed {
            true => bucket(value),
            false => value,
        };
        *self.counts.entry(key).or_default() += 1;
        self.total += 1;
        self.sum += u128::from(value);
        self.max = self.max.max(value);
        if !self.bucketed && self.counts.len() > EXACT_VALUES {
            self.turn_to_buckets();
        }
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.bucketed && !self.bucketed {
            self.turn_to_buckets();
        }
        for (&k, &n) in &other.counts {
            let key = match self.bucketed {
                true => bucket(k),
                false => k,
            };
            *self.counts.entry(key).or_default() += n;
        }
        self.total += other.total;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
        if !self.bucketed && self.counts.len() > EXACT_VALUES {
            self.turn_to_buckets();
        }
    }

    fn turn_to_buckets(&mut self) {
        let mut buckets = BTreeMap::new();
        for (&k, &n) in &self.counts {
            *buckets.entry(bucket(k)).or_default() += n;
        }
        self.counts = buckets;
        self.bucketed = true;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    /// The mean, rounded down.
    pub fn mean(&self) -> Option<u64> {
        (self.total > 0).then(|| (self.sum / u128::from(self.total)) as u64)
    }

    /// Whether [`Self::quantile`] is exact (else within 0.1 % below the true value).
    pub fn exact(&self) -> bool {
        !self.bucketed
    }

    /// The nearest-rank quantile `q` (0 < q ≤ 1): the smallest value with at least
    /// ⌈q·n⌉ values at or below it. The maximum is exact.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (&k, &n) in &self.counts {
            seen += n;
            if seen >= rank {
                return Some(k.min(self.max));
            }
        }
        Some(self.max)
    }

    /// Each value (bucket) with the share of values at or below it: the CDF's steps.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut seen = 0;
        (self.counts.iter())
            .map(|(&k, &n)| {
                seen += n;
                (k, seen as f64 / self.total as f64)
            })
            .collect()
    }
}

/// The lowest value of `value`'s bucket: exact below [`SUB_BUCKETS`], then the value with all
/// but its 10 highest bits cleared.
fn bucket(value: u64) -> u64 {
    if value < SUB_BUCKETS {
        return value;
    }
    let shift = 63 - value.leading_zeros() - (SUB_BUCKETS.trailing_zeros());
    (value >> shift) << shift
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles_are_exact_for_few_values() {
        let mut h = Histogram::default();
        for v in [30_000, 0, 0, 12_000, 5_000] {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), Some(5_000));
        assert_eq!(h.quantile(0.2), Some(0));
        assert_eq!(h.quantile(0.8), Some(12_000));
        assert_eq!(h.quantile(0.99), Some(30_000));
        assert_eq!(h.max(), Some(30_000));
        assert_eq!(h.mean(), Some(9_400));
        assert!(h.exact());
    }

    #[test]
    fn many_values_turn_turn_to_buckets_within_a_thousandth() {
        let mut h = Histogram::default();
        for v in 0..100_000u64 {
            h.add(v * 37);
        }
        assert!(!h.exact());
        assert!(h.counts.len() < 20_000);
        let p90 = h.quantile(0.9).unwrap();
        let truth = 89_999 * 37;
        assert!(
            p90 <= truth && truth - p90 <= truth / 1000,
            "{p90} vs {truth}"
        );
        assert_eq!(h.max(), Some(99_999 * 37));
    }

    #[test]
    fn merging_equals_adding_everything_to_one() {
        let (mut a, mut b, mut all) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for v in 0..30_000u64 {
            let h: &mut Histogram = if v % 3 == 0 { &mut a } else { &mut b };
            h.add(v * v % 7919);
            all.add(v * v % 7919);
        }
        a.merge(&b);
        assert_eq!(a.quantile(0.5), all.quantile(0.5));
        assert_eq!(a.count(), all.count());
    }
}
