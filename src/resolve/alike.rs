//! TrainJobs that differ only in their name resolve alike: a cluster's thousands of jobs come
//! from a handful of shapes (an SDK call, a pipeline step), and resolving one — strategic
//! merges on JSON, then the API server's conversion and validation of its pods — is most of
//! what loading them costs. [`Alike`] resolves each shape once, under a stand-in name, and
//! gives every job of that shape a copy with the stand-in replaced by its own name.
//!
//! Why a copy is exact: resolution only *embeds* the TrainJob's name in strings (labels, pod
//! names, `PET_MASTER_ADDR`, claim and secret names; see `build.rs`); it never branches on it.
//! Validation reads those strings by length and character class, so the stand-in has the
//! name's length and only lowercase letters, and only DNS-1035 names (what TrainJob names are)
//! take this path. Each shape is resolved under two stand-ins; the shape is shared only if
//! renaming the first result gives exactly the second (a stand-in that also occurs in the
//! input, or a name used in a way renaming misses, fails this check, and such jobs resolve on
//! their own). Shapes that fail to resolve are never shared: their errors name the job.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use super::build::BuildOptions;
use super::{InitializerLifecycle, Runtimes, TrainJobPods, train_job_pods};
use crate::features::FeatureGates;
use crate::model::validate::FieldError;
use crate::resolve::trainjob::TrainJob;

/// The shapes seen so far (`None`: a shape that is not shared). One per scenario: the
/// runtimes, gates and initializer lifecycle it was made with are part of every shape.
#[derive(Default)]
pub struct Alike(RefCell<HashMap<String, Option<TrainJobPods>>>);

impl Alike {
    /// [`train_job_pods`], shared between TrainJobs alike but for their name.
    pub fn train_job_pods(
        &self,
        job: &TrainJob,
        runtimes: &Runtimes,
        opts: BuildOptions,
        gates: &FeatureGates,
        initializers: InitializerLifecycle,
    ) -> Result<TrainJobPods, Vec<FieldError>> {
        let resolve = |job: &TrainJob| train_job_pods(job, runtimes, opts, gates, initializers);
        let name = job.name();
        if opts.track || !is_dns1035_label(name) {
            return resolve(job);
        }
        let mut nameless = job.clone();
        nameless.metadata.name = None;
        let key = serde_json::to_string(&(&nameless, name.len(), opts.overrides, opts.clock))
            .expect("a TrainJob serializes");
        let (first, second) = (stand_in(name.len(), "qz"), stand_in(name.len(), "xk"));
        let mut shapes = self.0.borrow_mut();
        let shape = shapes.entry(key).or_insert_with(|| {
            let named = |stand_in: &str| {
                let mut j = nameless.clone();
                j.metadata.name = Some(stand_in.to_string());
                resolve(&j).ok()
            };
            let (a, b) = (named(&first)?, named(&second)?);
            let renamed = rename(&a, &first, &second);
            (format!("{renamed:?}") == format!("{b:?}")).then_some(a)
        });
        match shape {
            Some(shape) => Ok(rename(shape, &first, name)),
            None => resolve(job),
        }
    }
}

/// `len` letters of `pattern` repeated.
fn stand_in(len: usize, pattern: &str) -> String {
    pattern.chars().cycle().take(len).collect()
}

/// `validation.IsDNS1035Label`: what a TrainJob's name is (Trainer's webhook requires it, as
/// JobSet names its Service after it).
fn is_dns1035_label(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A copy of `pods` with `from` replaced by `to` wherever resolution can embed a name.
fn rename(pods: &TrainJobPods, from: &str, to: &str) -> TrainJobPods {
    let mut out = pods.clone();
    let r = &mut out.resolved;
    for s in [&mut r.name, &mut r.namespace, &mut r.runtime]
        .into_iter()
        .chain(&mut r.warnings)
        .chain(r.stamps.iter_mut().flat_map(|(m, t)| [m, t]))
    {
        replace(s, from, to);
    }
    for job in &mut r.jobs {
        job.pod_template = job.pod_template.renamed(from, to);
    }
    for pod in &mut out.pods {
        replace(&mut pod.name, from, to);
        if let Some(w) = &mut pod.workload {
            replace(w, from, to);
        }
        if let Some(g) = &mut pod.pod_group {
            replace(&mut g.name, from, to);
        }
        for v in pod.labels.values_mut() {
            replace(v, from, to);
        }
        if pod.labels.keys().any(|k| k.contains(from)) {
            pod.labels = std::mem::take(&mut pod.labels)
                .into_iter()
                .map(|(k, v)| (k.replace(from, to), v))
                .collect();
        }
    }
    if let Some(g) = &mut out.pod_group {
        replace(&mut g.name, from, to);
        replace(&mut g.namespace, from, to);
    }
    out
}

fn replace(s: &mut String, from: &str, to: &str) {
    if s.contains(from) {
        *s = s.replace(from, to);
    }
}

pub(super) fn replace_in_value(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) => replace(s, from, to),
        Value::Array(items) => items.iter_mut().for_each(|i| replace_in_value(i, from, to)),
        Value::Object(map) => {
            if map.keys().any(|k| k.contains(from)) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (k.replace(from, to), v))
                    .collect();
            }
            map.values_mut().for_each(|i| replace_in_value(i, from, to));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dns1035_labels_are_shared() {
        for ok in ["a", "job-00001", "llm-7b-finetune"] {
            assert!(is_dns1035_label(ok), "{ok}");
        }
        for bad in ["", "1job", "job-", "Job", "job.v1", &"a".repeat(64)] {
            assert!(!is_dns1035_label(bad), "{bad}");
        }
    }

    #[test]
    fn stand_ins_have_the_name_length() {
        assert_eq!(stand_in(5, "qz"), "qzqzq");
        assert_eq!(stand_in(1, "xk"), "x");
    }
}
