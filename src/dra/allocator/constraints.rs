//! A claim's constraints as the search applies them: `matchAttribute`
//! (`matchAttributeConstraint`) and `distinctAttribute` (`dra::capacity`).

use std::collections::BTreeSet;

use k8s_openapi::api::resource::v1::DeviceAttribute;

use super::pools::Candidate;
use crate::dra::capacity::DistinctAttribute;

/// A claim's constraint: `matchAttribute` or `distinctAttribute`.
#[derive(Clone)]
pub(super) enum Constraint {
    Match(MatchAttribute),
    Distinct(DistinctAttribute),
}

impl Constraint {
    pub(super) fn add(&mut self, request: &str, sub: Option<&str>, c: &Candidate) -> bool {
        match self {
            Constraint::Match(m) => m.add(request, sub, c),
            Constraint::Distinct(d) => d.add(request, sub, lookup_attribute(c, &d.attribute)),
        }
    }

    pub(super) fn remove(&mut self, request: &str, sub: Option<&str>) {
        match self {
            Constraint::Match(m) => m.remove(request, sub),
            Constraint::Distinct(d) => d.remove(request, sub),
        }
    }
}

/// `matchAttributeConstraint`.
#[derive(Clone)]
pub(super) struct MatchAttribute {
    pub(super) requests: BTreeSet<String>,
    pub(super) attribute: String,
    pub(super) first: Option<DeviceAttribute>,
    pub(super) devices: usize,
}

impl MatchAttribute {
    pub(super) fn applies(&self, request: &str, sub: Option<&str>) -> bool {
        self.requests.is_empty()
            || self.requests.contains(request)
            || sub.is_some_and(|s| self.requests.contains(&format!("{request}/{s}")))
    }

    pub(super) fn add(&mut self, request: &str, sub: Option<&str>, c: &Candidate) -> bool {
        if !self.applies(request, sub) {
            return true;
        }
        let Some(attribute) = lookup_attribute(c, &self.attribute) else {
            return false;
        };
        let Some(first) = &self.first else {
            self.first = Some(attribute.clone());
            self.devices = 1;
            return true;
        };
        let same = if attribute.string.is_some() {
            first.string.is_some() && attribute.string == first.string
        } else if attribute.int.is_some() {
            first.int.is_some() && attribute.int == first.int
        } else if attribute.bool.is_some() {
            first.bool.is_some() && attribute.bool == first.bool
        } else if attribute.version.is_some() {
            first.version.is_some() && attribute.version == first.version
        } else {
            false
        };
        if same {
            self.devices += 1;
        }
        same
    }

    pub(super) fn remove(&mut self, request: &str, sub: Option<&str>) {
        if !self.applies(request, sub) {
            return;
        }
        self.devices -= 1;
        if self.devices == 0 {
            self.first = None;
        }
    }
}

/// `lookupAttribute`: the fully qualified name, or the bare id for the driver's own domain.
pub(super) fn lookup_attribute<'d>(c: &Candidate<'d>, name: &str) -> Option<&'d DeviceAttribute> {
    let attributes = c.device.attributes.as_ref()?;
    if let Some(a) = attributes.get(name) {
        return Some(a);
    }
    let (domain, id) = name.split_once('/')?;
    (domain == c.slice.spec.driver)
        .then(|| attributes.get(id))
        .flatten()
}
