//! The allocator's cache of compiled CEL selectors and their verdicts.

use std::collections::HashMap;

use k8s_openapi::api::resource::v1::Device;

use crate::dra::cel::{self, Selector};

/// Compiled CEL selectors, by expression; the verdicts of those that read only named parts
/// of a device (`cel::Read`), by expression and the values of those parts; and every verdict
/// by selector and device. A `Selectors` serves one set of slices for its whole life (a
/// scheduling run, a test case), so a device is known by its address.
#[derive(Default)]
pub struct Selectors(
    std::cell::RefCell<HashMap<String, std::rc::Rc<Result<Selector, String>>>>,
    std::cell::RefCell<HashMap<Projected, Result<bool, String>>>,
    std::cell::RefCell<DeviceVerdicts>,
);

/// Verdicts by (selector, device) address.
type DeviceVerdicts =
    std::collections::HashMap<(usize, usize), Result<bool, String>, foldhash::fast::FixedState>;

/// An expression and the values of the parts of a device it reads.
type Projected = (String, Vec<Option<String>>);

impl Selectors {
    /// `selector.matches(device)`, remembered per projection when the selector allows it.
    pub fn matches(
        &self,
        expression: &str,
        selector: &Selector,
        device: &cel::Device,
    ) -> Result<bool, String> {
        let Some(key) = selector.reads().and_then(|r| cel::projection(device, r)) else {
            return selector.matches(device);
        };
        let key = (expression.to_string(), key);
        if let Some(known) = self.1.borrow().get(&key) {
            return known.clone();
        }
        let verdict = selector.matches(device);
        self.1.borrow_mut().insert(key, verdict.clone());
        verdict
    }

    /// [`Self::matches`] for a device of the slices this `Selectors` serves, remembered by
    /// the selector's and the device's address (the allocator asks again for every pod).
    pub fn matches_device(
        &self,
        expression: &str,
        selector: &Selector,
        device: &cel::Device,
        at: &Device,
    ) -> Result<bool, String> {
        let key = (
            selector as *const Selector as usize,
            at as *const Device as usize,
        );
        if let Some(known) = self.2.borrow().get(&key) {
            return known.clone();
        }
        let verdict = self.matches(expression, selector, device);
        self.2.borrow_mut().insert(key, verdict.clone());
        verdict
    }

    /// The compiled selector of `expression` (compiled on first use).
    pub fn get(&self, expression: &str) -> std::rc::Rc<Result<Selector, String>> {
        let mut cache = self.0.borrow_mut();
        if let Some(compiled) = cache.get(expression) {
            return std::rc::Rc::clone(compiled);
        }
        let compiled = std::rc::Rc::new(Selector::compile(expression));
        cache.insert(expression.to_owned(), std::rc::Rc::clone(&compiled));
        compiled
    }
}
