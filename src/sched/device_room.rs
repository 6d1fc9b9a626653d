//! Which nodes have room for a few devices: per extended resource and per count up to
//! [`MAX_COUNT`], the nodes NodeResourcesFit might pass for a pod asking that many.
//!
//! A Filter pass over a busy GPU pool visits every candidate node, and most have no GPU left
//! for the pod. The pass skips a node NodeResourcesFit is sure to reject: one that lists the
//! resource in its allocatable and has fewer of it free than the pod asks. A node that does not
//! list it is kept, since NodeResourcesFit may leave the resource to DynamicResources there
//! (`node_resources_fit::left_to_dra`). So a pass over these nodes sees the same feasible nodes,
//! in the same order, as one over every candidate: it only skips what `fits` answers `false`.

/// The largest count indexed: a pod asking more of a resource is walked over every candidate.
pub const MAX_COUNT: i64 = 16;

/// The index of one cluster, updated as pods bind and leave. Its bitsets are over the nodes'
/// slots, their places in the Filter pass's walk (the node tree's order), so that a walk reads
/// them in its own order.
#[derive(Debug, Clone, Default)]
pub struct DeviceRoom {
    /// Per node, its slot.
    slot: Vec<u32>,
    /// Per resource of the table (`None` for cpu, memory and ephemeral-storage), per count
    /// `k` in `1..=MAX_COUNT` (at `k − 1`): the slots of the nodes that do not list the
    /// resource or have at least `k` of it free.
    room: Vec<Option<Vec<Vec<u64>>>>,
}

impl DeviceRoom {
    /// The index of nodes at `slot` (a permutation), whose free amount of resource `r` is
    /// `free(node, r)`, `None` where the node does not list it. Resources below `first` (the
    /// native ones) are not indexed.
    pub fn new(
        slot: &[u32],
        resources: usize,
        first: usize,
        free: impl Fn(usize, usize) -> Option<i64>,
    ) -> Self {
        let words = slot.len().div_ceil(64);
        let room = (0..resources)
            .map(|r| {
                (r >= first).then(|| {
                    let mut by_count = vec![vec![0u64; words]; MAX_COUNT as usize];
                    for (node, &at) in slot.iter().enumerate() {
                        let have = free(node, r).unwrap_or(MAX_COUNT).clamp(0, MAX_COUNT);
                        for bits in by_count.iter_mut().take(have as usize) {
                            bits[at as usize / 64] |= 1 << (at % 64);
                        }
                    }
                    by_count
                })
            })
            .collect();
        DeviceRoom {
            slot: slot.to_vec(),
            room,
        }
    }

    /// Node `node`'s free amount of listed resource `r` went from `before` to `after`.
    pub fn changed(&mut self, node: usize, r: usize, before: i64, after: i64) {
        let Some(Some(by_count)) = self.room.get_mut(r) else {
            return;
        };
        let (before, after) = (before.clamp(0, MAX_COUNT), after.clamp(0, MAX_COUNT));
        let at = self.slot[node] as usize;
        let (word, bit) = (at / 64, 1u64 << (at % 64));
        for k in before.min(after)..before.max(after) {
            let bits = &mut by_count[k as usize][word];
            if after > before {
                *bits |= bit;
            } else {
                *bits &= !bit;
            }
        }
    }

    /// The slots of the nodes with room for `amount` of resource `r`, if that is indexed.
    pub fn slots_with_room(&self, r: usize, amount: i64) -> Option<&[u64]> {
        if !(1..=MAX_COUNT).contains(&amount) {
            return None;
        }
        let by_count = self.room.get(r)?.as_ref()?;
        Some(&by_count[amount as usize - 1])
    }
}

/// A set of slots as a bitset, with each member's rank (how many members come before it).
#[derive(Debug, Clone, Default)]
pub struct RankedNodes {
    bits: Vec<u64>,
    /// Per word, the members in the words before it.
    before: Vec<u32>,
}

impl RankedNodes {
    /// The set of `members` among `slots` slots.
    pub fn new(slots: usize, members: impl IntoIterator<Item = usize>) -> Self {
        let mut bits = vec![0u64; slots.div_ceil(64)];
        for m in members {
            bits[m / 64] |= 1 << (m % 64);
        }
        let before = (bits.iter())
            .scan(0u32, |count, w| {
                let at = *count;
                *count += w.count_ones();
                Some(at)
            })
            .collect();
        RankedNodes { bits, before }
    }

    /// The ranks of the members that are also in `others` (a bitset over the same slots), from
    /// slot `from` to slot `to` (excluded), in order.
    pub fn common<'a>(
        &'a self,
        others: &'a [u64],
        from: usize,
        to: usize,
    ) -> impl Iterator<Item = usize> + 'a {
        common_ones(&self.bits, others, from, to).map(|at| {
            let (w, bit) = (at / 64, at % 64);
            let below = self.bits[w] & ((1u64 << bit) - 1);
            self.before[w] as usize + below.count_ones() as usize
        })
    }

    /// The memory it holds, about.
    pub fn bytes(&self) -> usize {
        self.bits.len() * 8 + self.before.len() * 4
    }
}

/// The positions of the bits set in both `a` and `b` within `from..to`, in order.
pub fn common_ones<'a>(
    a: &'a [u64],
    b: &'a [u64],
    from: usize,
    to: usize,
) -> impl Iterator<Item = usize> + 'a {
    let (first, end) = (from / 64, to.div_ceil(64));
    (first..end.max(first)).flat_map(move |w| {
        let mut word = a[w] & b[w];
        if w == first {
            word &= !0u64 << (from % 64);
        }
        if w + 1 == end && !to.is_multiple_of(64) {
            word &= (1u64 << (to % 64)) - 1;
        }
        std::iter::from_fn(move || {
            (word != 0).then(|| {
                let bit = word.trailing_zeros() as usize;
                word &= word - 1;
                w * 64 + bit
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_ones_lists_the_shared_bits_in_the_range() {
        let a = vec![u64::MAX, 0b1011, u64::MAX];
        let b = vec![0b1001_0110, u64::MAX, 1 << 63];
        let all: Vec<usize> = common_ones(&a, &b, 0, 192).collect();
        assert_eq!(all, vec![1, 2, 4, 7, 64, 65, 67, 191]);
        assert_eq!(
            common_ones(&a, &b, 3, 66).collect::<Vec<_>>(),
            vec![4, 7, 64, 65]
        );
        assert_eq!(common_ones(&a, &b, 65, 65).count(), 0);
        assert_eq!(common_ones(&a, &b, 64, 64).count(), 0);
        assert_eq!(common_ones(&a, &b, 128, 192).collect::<Vec<_>>(), vec![191]);
    }

    #[test]
    fn ranked_nodes_give_each_common_member_its_rank() {
        let members = [1, 5, 63, 64, 100, 130];
        let set = RankedNodes::new(140, members);
        let others = vec![u64::MAX, !(1u64 << 36), u64::MAX];
        let all: Vec<usize> = set.common(&others, 0, 140).collect();
        assert_eq!(all, vec![0, 1, 2, 3, 5], "slot 100 is not in the others");
        assert_eq!(set.common(&others, 64, 140).next(), Some(3));
        assert_eq!(set.common(&others, 0, 5).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn a_node_has_room_while_it_has_the_devices_free_or_does_not_list_them() {
        // Node 0 lists 8 GPUs with 3 free; node 1 does not list them; node 2 has 20 free. The
        // walk visits node 2 first, then 0, then 1.
        let free = [Some(3), None, Some(20)];
        let mut room = DeviceRoom::new(&[1, 2, 0], 4, 3, |n, _| free[n]);
        let has = |room: &DeviceRoom, k: i64| -> Vec<usize> {
            let bits = room.slots_with_room(3, k).unwrap();
            let slot = [1, 2, 0];
            (0..3).filter(|&n| bits[0] & (1 << slot[n]) != 0).collect()
        };
        assert_eq!(has(&room, 1), vec![0, 1, 2]);
        assert_eq!(has(&room, 3), vec![0, 1, 2]);
        assert_eq!(has(&room, 4), vec![1, 2]);
        assert_eq!(has(&room, 16), vec![1, 2]);
        assert!(room.slots_with_room(3, 17).is_none());
        assert!(room.slots_with_room(3, 0).is_none());
        assert!(room.slots_with_room(0, 1).is_none(), "cpu is not indexed");
        room.changed(0, 3, 3, 0);
        assert_eq!(has(&room, 1), vec![1, 2]);
        room.changed(0, 3, 0, 5);
        assert_eq!(has(&room, 5), vec![0, 1, 2]);
        assert_eq!(has(&room, 6), vec![1, 2]);
        room.changed(2, 3, 20, 17);
        assert_eq!(has(&room, 16), vec![1, 2], "still 16 or more");
        room.changed(2, 3, 17, -2);
        assert_eq!(has(&room, 1), vec![0, 1]);
    }
}
