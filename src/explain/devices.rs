//! DynamicResources' part of an explanation: per claim and request, the devices the
//! allocation picked on the chosen node and why each other device there was not
//! (`crate::dra::allocator::explain`).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::dra::allocator::ClaimDevices;

/// Devices named per reason in the text (the JSON names them all).
const DEVICES_SHOWN: usize = 8;

/// The devices' lines in the text report, indented by `indent`: the picks, then the others
/// grouped by reason. On a node other than the chosen one (`elsewhere`), the picks are those
/// the allocator would make there.
pub fn render(out: &mut String, claims: &[ClaimDevices], indent: &str, elsewhere: bool) {
    let picked = match elsewhere {
        true => "would pick",
        false => "picked",
    };
    // Nothing used anywhere: no allocation of all the claims was found on the node.
    let allocated = (claims.iter()).any(|c| c.requests.iter().any(|r| r.used));
    for c in claims {
        let _ = writeln!(out, "{indent}DynamicResources: claim {}", c.claim);
        for r in &c.requests {
            let state = match (allocated, r.used, r.picked.is_empty()) {
                (false, ..) => "no allocation of all the pod's claims here".to_string(),
                (true, true, false) => format!("{picked} {}", r.picked.join(", ")),
                (true, true, true) => format!("{picked} nothing"),
                (true, false, _) => "not used (another subrequest was)".to_string(),
            };
            let _ = writeln!(
                out,
                "{indent}  request {} ({}, {} {}): {state}",
                r.request, r.device_class, r.mode, r.count
            );
            let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for d in &r.others {
                by_reason.entry(&d.reason).or_default().push(&d.device);
            }
            for (reason, devices) in by_reason {
                let mut names = devices[..devices.len().min(DEVICES_SHOWN)].join(", ");
                if devices.len() > DEVICES_SHOWN {
                    let _ = write!(names, ", +{} more", devices.len() - DEVICES_SHOWN);
                }
                let _ = writeln!(
                    out,
                    "{indent}    {} device(s) {reason}: {names}",
                    devices.len(),
                );
            }
        }
    }
}
