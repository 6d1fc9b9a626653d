//! The backoff formula and the two backoff heaps (`backoff_queue.go`, 1.34+).
//!
//! `podBackoffQ` holds pods rejected by plugins, ordered by backoff expiry and, inside one
//! 1-s window, by activeQ's order (`lessBackoffCompletedWithPriority`); `podErrorBackoffQ`
//! holds pods that failed with an error, ordered by expiry only (ties, which upstream's heap
//! leaves to chance, are broken here by activeQ's order).

use std::collections::BTreeSet;

use super::active::{SortKey, sort_key};
use super::{PodId, QueueConfig, QueuedPod, Time};

/// `backoffQOrderingWindowDuration`: 1 s.
pub const ORDERING_WINDOW_MS: u64 = 1_000;

/// `calculateBackoffDuration`: `initial · 2^(count−1)`, capped at `max`.
pub fn backoff_duration(config: &QueueConfig, count: u32) -> u64 {
    if count == 0 {
        return 0;
    }
    let shift = count - 1;
    if shift >= 63 || config.initial_backoff_ms > config.max_backoff_ms >> shift {
        return config.max_backoff_ms;
    }
    config.initial_backoff_ms << shift
}

/// `getBackoffTime`: `alignToWindow(Timestamp + duration)`, where the count is
/// `ConsecutiveErrorsCount` when it is positive, else `UnschedulableCount`. `None` (Go's zero
/// time) when the pod never failed or backoff is disabled (`podMaxBackoff == 0`).
pub fn backoff_expiry(config: &QueueConfig, pod: &QueuedPod) -> Option<Time> {
    if config.max_backoff_ms == 0 {
        return None;
    }
    let count = if pod.consecutive_errors > 0 {
        pod.consecutive_errors
    } else {
        pod.unschedulable_count
    };
    if count == 0 {
        return None;
    }
    Some(
        pod.timestamp
            .plus(backoff_duration(config, count))
            .align_to_window(),
    )
}

/// `isPodBackingoff`: `!expiry.Before(alignToWindow(now))`, so a pod leaves backoff at the
/// first whole-second flush strictly after its (truncated) expiry.
pub fn is_backing_off(config: &QueueConfig, pod: &QueuedPod, now: Time) -> bool {
    match backoff_expiry(config, pod) {
        None => false,
        Some(expiry) => expiry >= now.align_to_window(),
    }
}

/// Which of the two heaps a pod belongs in: no rejector plugin means an error.
pub fn is_error(pod: &QueuedPod) -> bool {
    pod.unschedulable_plugins.is_empty() && pod.pending_plugins.is_empty()
}

type BackoffKey = (Option<Time>, SortKey, PodId);

/// `backoffQueue`: `podBackoffQ` and `podErrorBackoffQ`.
#[derive(Debug, Default, Clone)]
pub struct BackoffQueue {
    plugin_rejected: BTreeSet<BackoffKey>,
    errored: BTreeSet<BackoffKey>,
}

impl BackoffQueue {
    fn key(config: &QueueConfig, pod: &QueuedPod) -> BackoffKey {
        (backoff_expiry(config, pod), sort_key(pod), pod.pod.id)
    }

    fn heap(&mut self, pod: &QueuedPod) -> &mut BTreeSet<BackoffKey> {
        if is_error(pod) {
            &mut self.errored
        } else {
            &mut self.plugin_rejected
        }
    }

    pub fn insert(&mut self, config: &QueueConfig, pod: &QueuedPod) {
        let key = Self::key(config, pod);
        self.heap(pod).insert(key);
    }

    /// Removes `pod` (as it was when inserted).
    pub fn remove(&mut self, config: &QueueConfig, pod: &QueuedPod) -> bool {
        let key = Self::key(config, pod);
        self.heap(pod).remove(&key)
    }

    pub fn len(&self) -> usize {
        self.plugin_rejected.len() + self.errored.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len_plugin_rejected(&self) -> usize {
        self.plugin_rejected.len()
    }

    /// The head of `podBackoffQ` (never the error heap): what Pop takes when activeQ is empty.
    pub fn first_plugin_rejected(&self) -> Option<PodId> {
        self.plugin_rejected.first().map(|k| k.2)
    }

    /// `popAllBackoffCompleted`: the pods whose backoff is over, `podBackoffQ` first, each
    /// heap in order until its first pod still backing off.
    pub fn completed(&self, now: Time) -> Vec<PodId> {
        let aligned = now.align_to_window();
        let done = |k: &&BackoffKey| k.0.is_none_or(|e| e < aligned);
        let mut out: Vec<PodId> = self
            .plugin_rejected
            .iter()
            .take_while(done)
            .map(|k| k.2)
            .collect();
        out.extend(self.errored.iter().take_while(done).map(|k| k.2));
        out
    }

    /// The earliest expiry in either heap: the next flush that moves something is the first
    /// whole second strictly after it.
    pub fn earliest_expiry(&self) -> Option<Option<Time>> {
        [self.plugin_rejected.first(), self.errored.first()]
            .into_iter()
            .flatten()
            .map(|k| k.0)
            .min()
    }

    /// Pods in order: `podBackoffQ`, then `podErrorBackoffQ`.
    pub fn ids(&self) -> impl Iterator<Item = PodId> + '_ {
        self.plugin_rejected
            .iter()
            .chain(self.errored.iter())
            .map(|k| k.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_the_cap() {
        let c = QueueConfig::default();
        let got: Vec<u64> = (0..8).map(|n| backoff_duration(&c, n)).collect();
        assert_eq!(got, [0, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
        assert_eq!(backoff_duration(&c, 200), 10_000);
    }
}
