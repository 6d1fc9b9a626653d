//! Names and UIDs the API server generates, made stable: `generateName`'s random suffix
//! (`staging/src/k8s.io/apiserver/pkg/storage/names/generate.go`, `utilrand.String`) and a
//! pod's UID, drawn from a hash of what names the object instead of a random source, so a
//! scenario gets the same names in every run. Shared by the loaders, the controllers schedsim
//! runs (resourceclaim, apps) and `generate`.

/// `names.MaxGeneratedNameLength`: 63 minus the random suffix.
const MAX_GENERATED_NAME_LENGTH: usize = 58;
/// `utilrand.String`'s alphabet (no vowels, no look-alikes).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The name the API server gives an object with `generateName` `base`: at most 58 bytes of
/// it, then 5 characters drawn from `hash`.
pub fn generated_name(base: &str, mut hash: u64) -> String {
    let mut name: String = base.get(..MAX_GENERATED_NAME_LENGTH).unwrap_or(base).into();
    for _ in 0..5 {
        name.push(ALPHANUMS[(hash % ALPHANUMS.len() as u64) as usize] as char);
        hash /= ALPHANUMS.len() as u64;
    }
    name
}

/// A stable 64-bit hash of `parts` (FNV-1a, then splitmix64's finalizer to spread it).
pub fn stable_hash(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The UID the API server would give pod `namespace/name`, made stable: RFC 4122 form.
pub fn pod_uid(namespace: &str, name: &str) -> String {
    let (a, b) = (
        stable_hash(&["pod-uid", namespace, name]),
        stable_hash(&["pod-uid-2", namespace, name]),
    );
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_take_five_characters_of_the_alphabet() {
        let name = generated_name("pod-gpu-", 12345);
        assert_eq!(name.len(), "pod-gpu-".len() + 5);
        assert!(name[8..].bytes().all(|b| ALPHANUMS.contains(&b)));
        assert_eq!(generated_name(&"x".repeat(70), 1).len(), 63);
    }

    #[test]
    fn pod_uids_are_stable_and_well_formed() {
        let uid = pod_uid("default", "p");
        assert_eq!(uid, pod_uid("default", "p"));
        assert_ne!(uid, pod_uid("default", "q"));
        assert_eq!(uid.len(), 36);
        assert_eq!(uid.as_bytes()[14], b'4');
        assert!(uid.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit()));
    }
}
