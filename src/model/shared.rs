//! [`Shared`]: a pod field that the pod's copies share until one of them writes to it.
//!
//! A replay copies each pod a few times in its life (Kueue's admission writes into a copy of
//! the job's template, binding sets `spec.nodeName` on a copy, the Job controller makes new
//! pods from a template), and a million-pod trace did it with every map and affinity of
//! every pod. A shared field makes a copy cheap: it is read through `Deref` as the plain value
//! it holds, and writing to it (`DerefMut`) first copies it if another pod shares it.
//!
//! `Shared` is deliberately not `Clone`: `pod.labels.clone()` still gives the plain map, as
//! it did before the field was shared, and only [`Pod`](super::Pod)'s own `clone` shares it
//! ([`Shared::share`]).

use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A value shared by the copies of a pod (copy-on-write). An empty one holds nothing.
pub struct Shared<T: Empty>(Option<Arc<T>>);

/// A type with an empty value that lives forever (what an empty [`Shared`] reads as).
pub trait Empty: Clone + Default + 'static {
    const EMPTY: &'static Self;
}

impl<K: 'static + Clone + Ord, V: 'static + Clone> Empty for std::collections::BTreeMap<K, V> {
    const EMPTY: &'static Self = &std::collections::BTreeMap::new();
}

impl<T: 'static + Clone> Empty for Option<T> {
    const EMPTY: &'static Self = &None;
}

impl<T: Empty> Shared<T> {
    /// Another handle on the same value (no copy).
    pub fn share(&self) -> Self {
        Shared(self.0.clone())
    }

    /// Whether both hold the very same value (not merely equal ones).
    pub fn shares_with(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl<T: Empty> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.0.as_deref().unwrap_or(T::EMPTY)
    }
}

impl<T: Empty> DerefMut for Shared<T> {
    /// The value to write to: copied first when another pod shares it.
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(self.0.get_or_insert_with(Arc::default))
    }
}

impl<T: Empty> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared(Some(Arc::new(value)))
    }
}

impl<T: Empty> Default for Shared<T> {
    fn default() -> Self {
        Shared(None)
    }
}

impl<T: Empty + PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        self.shares_with(other) || **self == **other
    }
}

impl<T: Empty + Eq> Eq for Shared<T> {}

impl<T: Empty + Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl<T: Empty + std::fmt::Debug> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: Empty + serde::Serialize> serde::Serialize for Shared<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<A, T: Empty + FromIterator<A>> FromIterator<A> for Shared<T> {
    fn from_iter<I: IntoIterator<Item = A>>(iter: I) -> Self {
        T::from_iter(iter).into()
    }
}

impl<'a, T: Empty> IntoIterator for &'a Shared<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        (**self).into_iter()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::Shared;

    #[test]
    fn a_write_copies_only_what_is_shared() {
        let mut a: Shared<BTreeMap<String, i64>> = BTreeMap::from([("cpu".into(), 1)]).into();
        let b = a.share();
        assert!(a.shares_with(&b));
        a.insert("memory".into(), 2);
        assert!(!a.shares_with(&b), "the write copied the value");
        assert_eq!(a.len(), 2);
        assert_eq!(b.len(), 1, "the other copy keeps its value");
        let mut empty: Shared<BTreeMap<String, i64>> = Shared::default();
        assert!(empty.is_empty());
        empty.insert("cpu".into(), 3);
        assert_eq!(empty.get("cpu"), Some(&3));
        assert_eq!(
            Shared::from(BTreeMap::<String, i64>::new()),
            Shared::default()
        );
    }
}
