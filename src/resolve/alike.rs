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
use std::rc::Rc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::build::BuildOptions;
use super::rename::replace;
use super::{InitializerLifecycle, Runtimes, TrainJobPods, train_job_pods};
use crate::features::FeatureGates;
use crate::model::Pod;
use crate::model::validate::FieldError;
use crate::resolve::trainjob::TrainJob;

/// The shapes seen so far (`None`: a shape that is not shared). One per scenario: the
/// runtimes, gates and initializer lifecycle it was made with are part of every shape.
#[derive(Default)]
pub struct Alike(RefCell<HashMap<String, Option<Rc<TrainJobPods>>>>);

/// A TrainJob's pods before they are made (a job waiting for Kueue): its shape's pods, the
/// job's own in everything but their names, and what names them.
pub struct Unmade {
    shape: Rc<TrainJobPods>,
    stand_in: String,
    name: String,
}

impl Unmade {
    /// Pods like the job's in everything but their names (pod sets, priorities).
    pub fn alike(&self) -> &[Pod] {
        &self.shape.pods
    }

    /// The workload each of the job's pods names.
    pub fn workloads(&self) -> Vec<String> {
        (self.shape.pods.iter())
            .filter_map(|p| p.workload.as_ref())
            .map(|w| w.replace(&self.stand_in, &self.name))
            .collect()
    }

    /// `namespace/name` of each of the job's pods.
    pub fn keys(&self) -> Vec<String> {
        (self.shape.pods.iter())
            .map(|p| {
                let name = p.name.replace(&self.stand_in, &self.name);
                format!("{}/{name}", p.namespace)
            })
            .collect()
    }
}

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
        match self.shape(job, runtimes, opts, gates, initializers) {
            Some((shape, stand_in)) => Ok(rename(&shape, &stand_in, job.name())),
            None => train_job_pods(job, runtimes, opts, gates, initializers),
        }
    }

    /// The job's pods unmade, when its shape is shared (`None`: resolve it on its own).
    pub fn unmade(
        &self,
        job: &TrainJob,
        runtimes: &Runtimes,
        opts: BuildOptions,
        gates: &FeatureGates,
        initializers: InitializerLifecycle,
    ) -> Option<Unmade> {
        let (shape, stand_in) = self.shape(job, runtimes, opts, gates, initializers)?;
        Some(Unmade {
            shape,
            stand_in,
            name: job.name().to_string(),
        })
    }

    /// The job's shape resolved under a stand-in name, and the stand-in, if shared.
    fn shape(
        &self,
        job: &TrainJob,
        runtimes: &Runtimes,
        opts: BuildOptions,
        gates: &FeatureGates,
        initializers: InitializerLifecycle,
    ) -> Option<(Rc<TrainJobPods>, String)> {
        let name = job.name();
        if opts.track || !is_dns1035_label(name) {
            return None;
        }
        let nameless = ObjectMeta {
            name: None,
            ..job.metadata.clone()
        };
        let key =
            serde_json::to_string(&(&nameless, &job.spec, name.len(), opts.overrides, opts.clock))
                .expect("a TrainJob serializes");
        let (first, second) = (stand_in(name.len(), "qz"), stand_in(name.len(), "xk"));
        let mut shapes = self.0.borrow_mut();
        let shape = shapes.entry(key).or_insert_with(|| {
            let named = |stand_in: &str| {
                let j = TrainJob {
                    metadata: ObjectMeta {
                        name: Some(stand_in.to_string()),
                        ..nameless.clone()
                    },
                    spec: job.spec.clone(),
                };
                train_job_pods(&j, runtimes, opts, gates, initializers).ok()
            };
            let (a, b) = (named(&first)?, named(&second)?);
            (rename(&a, &first, &second) == b).then(|| Rc::new(a))
        });
        Some((Rc::clone(shape.as_ref()?), first))
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
            pod.labels = std::mem::take(&mut *pod.labels)
                .into_iter()
                .map(|(k, v)| (k.replace(from, to), v))
                .collect();
        }
    }
    if let Some(g) = &mut out.pod_group {
        replace(&mut g.name, from, to);
        replace(&mut g.namespace, from, to);
    }
    if let Some(m) = &mut out.jobset_refused {
        replace(m, from, to);
    }
    out
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
