//! A set of resource-table indices (see `cluster::ResourceTable`).
//!
//! Kubernetes puts no bound on how many resource names a cluster uses, so neither does this
//! set: the first 128 indices (every real scenario: cpu, memory, ephemeral-storage and a few
//! dozen extended resources) live inline as bits, so the filters' hot paths allocate nothing;
//! indices past them spill into words on the heap.

/// Indices below this are kept inline.
const INLINE: usize = 128;

/// A set of resource-table indices.
#[derive(Debug, Clone, Default, Eq)]
pub struct ResourceSet {
    inline: u128,
    /// Word `w` holds indices `INLINE + 64·w ..`; never ends in a zero word, so equal sets
    /// are equal values (the set only grows).
    spilled: Vec<u64>,
}

impl ResourceSet {
    pub fn insert(&mut self, index: usize) {
        match index.checked_sub(INLINE) {
            None => self.inline |= 1 << index,
            Some(past) => {
                let word = past / 64;
                if self.spilled.len() <= word {
                    self.spilled.resize(word + 1, 0);
                }
                self.spilled[word] |= 1 << (past % 64);
            }
        }
    }

    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        match index.checked_sub(INLINE) {
            None => self.inline & (1 << index) != 0,
            Some(past) => {
                (self.spilled.get(past / 64)).is_some_and(|w| w & (1 << (past % 64)) != 0)
            }
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.inline == 0 && self.spilled.is_empty()
    }

    /// Whether every index of this set is in `other`.
    pub fn is_subset(&self, other: &ResourceSet) -> bool {
        self.inline & !other.inline == 0
            && (self.spilled.iter().enumerate())
                .all(|(w, bits)| bits & !other.spilled.get(w).copied().unwrap_or(0) == 0)
    }
}

/// By hand so that the common case, nothing spilled, compares one integer (the derived
/// comparison calls `memcmp` on the empty spill: a hot path of the pending-pod diagnosis).
impl PartialEq for ResourceSet {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.inline == other.inline
            && match (self.spilled.is_empty(), other.spilled.is_empty()) {
                (true, true) => true,
                (false, false) => self.spilled == other.spilled,
                _ => false,
            }
    }
}

impl std::hash::Hash for ResourceSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inline.hash(state);
        self.spilled.hash(state);
    }
}

impl FromIterator<usize> for ResourceSet {
    fn from_iter<I: IntoIterator<Item = usize>>(indices: I) -> Self {
        let mut set = ResourceSet::default();
        for i in indices {
            set.insert(i);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_past_the_inline_bits_are_kept() {
        let set: ResourceSet = [0, 127, 128, 200, 1000].into_iter().collect();
        for i in 0..1100 {
            assert_eq!(
                set.contains(i),
                [0, 127, 128, 200, 1000].contains(&i),
                "{i}"
            );
        }
        assert!(!set.is_empty());
        assert!(ResourceSet::default().is_empty());
    }

    #[test]
    fn subsets_compare_every_word() {
        let big: ResourceSet = [1, 130, 300].into_iter().collect();
        let small: ResourceSet = [1, 300].into_iter().collect();
        assert!(small.is_subset(&big));
        assert!(!big.is_subset(&small));
        assert!(ResourceSet::default().is_subset(&small));
        let inline_only: ResourceSet = [1].into_iter().collect();
        assert!(!small.is_subset(&inline_only));
        assert!(inline_only.is_subset(&small));
    }

    #[test]
    fn equal_sets_are_equal_however_built() {
        let a: ResourceSet = [300, 2].into_iter().collect();
        let b: ResourceSet = [2, 300, 300].into_iter().collect();
        assert_eq!(a, b);
    }
}
