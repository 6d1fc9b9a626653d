//! A ClusterQueue's heap of pending workloads (`pkg/cache/queue/cluster_queue.go`'s `heap`),
//! in [`QueueKey`] order, counting the keys of each scheduling equivalence class it holds.
//!
//! Setting a class aside (`handleInadmissibleHash`) moves every workload of that class out
//! of the heap. A trace's workloads mostly differ in their requests, so a class is usually
//! alone: the count answers "none" without walking the heap, which every parked head
//! otherwise would, over and over in a congested queue.

use std::collections::{BTreeSet, HashMap};

use super::QueueKey;
use super::equivalence::Class;

/// Looked up per key moved (never iterated into the output): foldhash, fixed seed.
type Counts = HashMap<Class, u32, foldhash::fast::FixedState>;

/// A key's equivalence class: its workload's pod sets' number and the priority the key holds.
pub(super) fn class_of(pod_sets_id: &[u32], key: &QueueKey) -> Class {
    (pod_sets_id[key.3], key.0.0)
}

#[derive(Debug, Default, Clone)]
pub(super) struct Heap {
    keys: BTreeSet<QueueKey>,
    classes: Counts,
}

impl Heap {
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &QueueKey> {
        self.keys.iter()
    }

    pub(super) fn insert(&mut self, pod_sets_id: &[u32], key: QueueKey) {
        if self.keys.insert(key) {
            *self.classes.entry(class_of(pod_sets_id, &key)).or_default() += 1;
        }
    }

    pub(super) fn remove(&mut self, pod_sets_id: &[u32], key: &QueueKey) -> bool {
        let removed = self.keys.remove(key);
        if removed {
            self.uncount(class_of(pod_sets_id, key));
        }
        removed
    }

    pub(super) fn pop_first(&mut self, pod_sets_id: &[u32]) -> Option<QueueKey> {
        let key = self.keys.pop_first()?;
        self.uncount(class_of(pod_sets_id, &key));
        Some(key)
    }

    /// Takes every key of `class` out of the heap, in order.
    pub(super) fn take_class(&mut self, pod_sets_id: &[u32], class: Class) -> Vec<QueueKey> {
        if self.classes.remove(&class).is_none() {
            debug_assert!(
                !(self.keys.iter()).any(|key| class_of(pod_sets_id, key) == class),
                "the heap holds keys of a class it did not count"
            );
            return Vec::new();
        }
        let taken: Vec<QueueKey> = (self.keys.iter())
            .filter(|key| class_of(pod_sets_id, key) == class)
            .copied()
            .collect();
        for key in &taken {
            self.keys.remove(key);
        }
        taken
    }

    /// Moves every key of `keys` into the heap.
    pub(super) fn append(&mut self, pod_sets_id: &[u32], mut keys: BTreeSet<QueueKey>) {
        for key in &keys {
            *self.classes.entry(class_of(pod_sets_id, key)).or_default() += 1;
        }
        // Usually the heap is empty by now (the cycles popped it): the set moves whole.
        if self.keys.is_empty() {
            self.keys = keys;
        } else {
            let before = self.keys.len() + keys.len();
            self.keys.append(&mut keys);
            // A key in both would be counted twice; keys are workloads, in one place only.
            debug_assert_eq!(self.keys.len(), before, "a key was already in the heap");
        }
    }

    fn uncount(&mut self, class: Class) {
        match self.classes.get_mut(&class) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                self.classes.remove(&class);
            }
            None => debug_assert!(false, "a key left the heap of a class it did not count"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;

    /// Keys leave the heap in order, by class when set aside, and the counts follow every
    /// move: a class the heap no longer holds is found without a walk (which the debug build
    /// checks against the walk).
    #[test]
    fn a_class_taken_leaves_the_others_in_order() {
        // Workloads 0..6: pod sets 7, 7, 8, 7, 9, 7; priorities 1 but workload 3 at 2.
        let pod_sets_id = [7, 7, 8, 7, 9, 7];
        let key = |w: usize| (Reverse(if w == 3 { 2 } else { 1 }), 0, w as u64, w);
        let mut heap = Heap::default();
        for w in [5, 0, 1, 2, 3, 4] {
            heap.insert(&pod_sets_id, key(w));
        }
        heap.insert(&pod_sets_id, key(0)); // already there: counted once
        assert_eq!(
            heap.take_class(&pod_sets_id, (7, 1)),
            vec![key(0), key(1), key(5)]
        );
        assert_eq!(heap.take_class(&pod_sets_id, (7, 1)), vec![]);
        assert_eq!(heap.pop_first(&pod_sets_id), Some(key(3)));
        assert_eq!(heap.take_class(&pod_sets_id, (7, 2)), vec![]);
        assert!(heap.remove(&pod_sets_id, &key(4)));
        assert!(!heap.remove(&pod_sets_id, &key(4)));
        assert_eq!(heap.take_class(&pod_sets_id, (9, 1)), vec![]);
        heap.append(&pod_sets_id, [key(1), key(5)].into());
        assert_eq!(heap.take_class(&pod_sets_id, (7, 1)), vec![key(1), key(5)]);
        assert_eq!(heap.iter().copied().collect::<Vec<_>>(), vec![key(2)]);
        assert_eq!(heap.take_class(&pod_sets_id, (8, 1)), vec![key(2)]);
        assert_eq!(heap.len(), 0);
    }
}
