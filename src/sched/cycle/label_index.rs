//! Bound-pod groups and spread specs filed by namespace and label, so that "which of them
//! carry (or require) `key=value` in this namespace" is a lookup. PodTopologySpread counts
//! pods of the incoming pod's namespace that its selectors match; with one spec per job (the
//! default constraints select by the JobSet's Service) scanning every spec at each bind, and
//! every group at each new spec, dominated scheduling at cluster size.

use super::HashMap;

/// Items filed under `(namespace, key, value)`.
#[derive(Debug)]
pub(super) struct LabelIndex<T> {
    by_namespace: HashMap<String, HashMap<String, HashMap<String, Vec<T>>>>,
}

impl<T> Default for LabelIndex<T> {
    fn default() -> Self {
        LabelIndex {
            by_namespace: HashMap::default(),
        }
    }
}

impl<T> LabelIndex<T> {
    pub(super) fn insert(&mut self, namespace: &str, key: &str, value: &str, item: T) {
        let keys = match self.by_namespace.get_mut(namespace) {
            Some(keys) => keys,
            None => self.by_namespace.entry(namespace.to_owned()).or_default(),
        };
        let values = match keys.get_mut(key) {
            Some(values) => values,
            None => keys.entry(key.to_owned()).or_default(),
        };
        match values.get_mut(value) {
            Some(items) => items.push(item),
            None => {
                values.insert(value.to_owned(), vec![item]);
            }
        }
    }

    /// The items filed under `key=value` in `namespace`.
    pub(super) fn get(&self, namespace: &str, key: &str, value: &str) -> &[T] {
        (self.by_namespace.get(namespace))
            .and_then(|keys| keys.get(key))
            .and_then(|values| values.get(value))
            .map_or(&[], Vec::as_slice)
    }

    /// Keeps the items `keep` says, and the keys and values that still file one.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        for keys in self.by_namespace.values_mut() {
            for values in keys.values_mut() {
                values.retain(|_, items| {
                    items.retain(&mut keep);
                    !items.is_empty()
                });
            }
            keys.retain(|_, values| !values.is_empty());
        }
        self.by_namespace.retain(|_, keys| !keys.is_empty());
    }

    pub(super) fn clear(&mut self) {
        self.by_namespace.clear();
    }
}
