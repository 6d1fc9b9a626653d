//! A ClusterQueue's heap of pending workloads (`pkg/cache/queue/cluster_queue.go`'s `heap`),
//! in [`QueueKey`] order, counting the keys of each scheduling equivalence class it holds.
//!
//! Setting a class aside (`handleInadmissibleHash`) moves every workload of that class out
//! of the heap. A trace's workloads mostly differ in their requests, so a class is usually
//! alone: the count answers "none" without walking the heap, which every parked head
//! otherwise would, over and over in a congested queue.

use std::collections::{HashMap, VecDeque};

use super::QueueKey;
use super::equivalence::Class;

/// Looked up per key moved (never iterated into the output): foldhash, fixed seed.
type Counts = HashMap<Class, u32, foldhash::fast::FixedState>;

/// Keys in order, in a ring buffer: a queue's keys mostly leave from the front (its heads)
/// and come in at the back (arrivals, which are the newest; heads set aside, in the order
/// they were popped), where a ring buffer moves nothing, and a tree of keys would allocate
/// and search for each (tens of millions over a long replay).
#[derive(Debug, Default, Clone)]
pub(super) struct Keys(VecDeque<QueueKey>);

impl Keys {
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &QueueKey> {
        self.0.iter()
    }

    pub(super) fn contains(&self, key: &QueueKey) -> bool {
        self.0.binary_search(key).is_ok()
    }

    /// Adds `key` in its place; false when it was there.
    pub(super) fn insert(&mut self, key: QueueKey) -> bool {
        if self.0.back().is_none_or(|last| *last < key) {
            self.0.push_back(key);
            return true;
        }
        match self.0.binary_search(&key) {
            Ok(_) => false,
            Err(i) => {
                self.0.insert(i, key);
                true
            }
        }
    }

    pub(super) fn remove(&mut self, key: &QueueKey) -> bool {
        match self.0.binary_search(key) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    pub(super) fn pop_first(&mut self) -> Option<QueueKey> {
        self.0.pop_front()
    }

    /// Takes the keys `take` says, in order.
    fn take_where(&mut self, take: impl Fn(&QueueKey) -> bool) -> Vec<QueueKey> {
        let mut taken = Vec::new();
        self.0.retain(|k| {
            let out = take(k);
            if out {
                taken.push(*k);
            }
            !out
        });
        taken
    }

    /// Moves every key of `other` here (keys are workloads: none is in both).
    fn append(&mut self, other: Keys) {
        if self.0.is_empty() {
            *self = other;
            return;
        }
        let mut merged = VecDeque::with_capacity(self.0.len() + other.0.len());
        let (mut a, mut b) = (
            std::mem::take(&mut self.0).into_iter().peekable(),
            other.0.into_iter().peekable(),
        );
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            debug_assert_ne!(x, y, "a key was already in the heap");
            let next = if x < y { a.next() } else { b.next() };
            merged.extend(next);
        }
        merged.extend(a);
        merged.extend(b);
        self.0 = merged;
    }
}

impl<'k> IntoIterator for &'k Keys {
    type Item = &'k QueueKey;
    type IntoIter = std::collections::vec_deque::Iter<'k, QueueKey>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A key's equivalence class: its workload's pod sets' number and the priority the key holds.
pub(super) fn class_of(pod_sets_id: &[u32], key: &QueueKey) -> Class {
    (pod_sets_id[key.3], key.0.0)
}

#[derive(Debug, Default, Clone)]
pub(super) struct Heap {
    keys: Keys,
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
        self.keys
            .take_where(|key| class_of(pod_sets_id, key) == class)
    }

    /// Moves every key of `keys` into the heap.
    pub(super) fn append(&mut self, pod_sets_id: &[u32], keys: Keys) {
        for key in &keys {
            *self.classes.entry(class_of(pod_sets_id, key)).or_default() += 1;
        }
        // Usually the heap is empty by now (the cycles popped it): the keys move whole.
        self.keys.append(keys);
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
        let mut back = Keys::default();
        for w in [5, 1] {
            assert!(back.insert(key(w)));
        }
        assert!(!back.insert(key(1)));
        heap.append(&pod_sets_id, back);
        assert_eq!(heap.take_class(&pod_sets_id, (7, 1)), vec![key(1), key(5)]);
        assert_eq!(heap.iter().copied().collect::<Vec<_>>(), vec![key(2)]);
        assert_eq!(heap.take_class(&pod_sets_id, (8, 1)), vec![key(2)]);
        assert_eq!(heap.len(), 0);
    }

    proptest::proptest! {
        /// Keys behave as the ordered set they replace: every operation answers as a
        /// `BTreeSet` does, and iteration keeps the order.
        #[test]
        fn keys_answer_as_an_ordered_set(
            ops in proptest::collection::vec((0u8..5, 0usize..24, 0i32..3), 0..120),
            other in proptest::collection::btree_set(24usize..40, 0..10),
        ) {
            let key = |w: usize, p: i32| (Reverse(p), (w % 7) as i64, w as u64, w);
            let mut keys = Keys::default();
            let mut set = std::collections::BTreeSet::new();
            for (op, w, p) in ops {
                let k = key(w, p);
                match op {
                    0 | 1 => proptest::prop_assert_eq!(keys.insert(k), set.insert(k)),
                    2 => proptest::prop_assert_eq!(keys.remove(&k), set.remove(&k)),
                    3 => proptest::prop_assert_eq!(keys.pop_first(), set.pop_first()),
                    _ => proptest::prop_assert_eq!(keys.contains(&k), set.contains(&k)),
                }
            }
            let mut more = Keys::default();
            for &w in other.iter().rev() {
                more.insert(key(w, (w % 3) as i32));
                set.insert(key(w, (w % 3) as i32));
            }
            keys.append(more);
            let got: Vec<QueueKey> = keys.iter().copied().collect();
            let want: Vec<QueueKey> = set.iter().copied().collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
