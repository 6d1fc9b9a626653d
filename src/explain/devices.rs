//! DynamicResources' part of an explanation: per claim and request, the devices the
//! allocation picked on the chosen node and why each other device there was not
//! (`crate::dra::allocator::explain`).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::dra::allocator::ClaimDevices;

/// The devices' lines in the text report: the picks, then the others grouped by reason.
pub fn render(out: &mut String, claims: &[ClaimDevices]) {
    for c in claims {
        let _ = writeln!(out, "  DynamicResources: claim {}", c.claim);
        for r in &c.requests {
            let state = match (r.used, r.picked.is_empty()) {
                (true, false) => format!("picked {}", r.picked.join(", ")),
                (true, true) => "picked nothing".to_string(),
                (false, _) => "not used".to_string(),
            };
            let _ = writeln!(
                out,
                "    request {} ({}, {} {}): {state}",
                r.request, r.device_class, r.mode, r.count
            );
            let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for d in &r.others {
                by_reason.entry(&d.reason).or_default().push(&d.device);
            }
            for (reason, devices) in by_reason {
                let _ = writeln!(
                    out,
                    "      {} device(s) {reason}: {}",
                    devices.len(),
                    devices.join(", ")
                );
            }
        }
    }
}
