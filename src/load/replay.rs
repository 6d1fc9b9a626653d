//! `spec.replay`: the replay's knobs, its trace, the timeline steps' times, and the times the
//! workloads carry in their annotations (`schedsim.io/arrival`, `schedsim.io/duration`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::origin::Origin;
use super::{Errors, paths, scenario};
use crate::model::Pod;
use crate::trace::TraceColumns;
use crate::trace::clock::{clock_origin, parse_at, parse_duration};
use crate::yaml::Document;

/// A workload's arrival, after the replay's start (ms).
pub const ARRIVAL_ANNOTATION: &str = "schedsim.io/arrival";
/// How long a workload's pods run once bound (ms); without it they run to the end.
pub const DURATION_ANNOTATION: &str = "schedsim.io/duration";

/// `spec.replay`, read.
#[derive(Debug, Clone)]
pub struct Replay {
    pub trace: Option<ReplayTrace>,
    /// Simulated time of one scheduling attempt (ms).
    pub cycle_ms: u64,
    /// The time series' step (ms); `None`: chosen from the span.
    pub sample_ms: Option<u64>,
    /// Where the replay stops (ms after the start); `None`: when nothing is left to happen.
    pub until_ms: Option<u64>,
    /// `podMaxInUnschedulablePodsDuration` (ms).
    pub max_in_unschedulable_ms: u64,
    /// Volcano's `--schedule-period` (ms, more than 0): its sessions' period.
    pub volcano_period_ms: u64,
    /// Per timeline step, when it happens (ms); a step without `at` happens when the one
    /// before it does (the first at the start).
    pub step_times: Vec<u64>,
    /// Per workload pod key (`namespace/name`): the arrival and run time its workload's
    /// annotations give.
    pub timing: BTreeMap<String, Timing>,
    /// The scenario's Kueue objects, when it has any: the replay admits over time.
    pub kueue: Option<std::sync::Arc<crate::kueue::admission::Objects>>,
    /// The workloads whose controllers decide when they are done: the index of their first
    /// pod among the scenario's workload pods, and how.
    pub completions: Vec<(usize, crate::resolve::completion::Completion)>,
    /// The scenario's Kueue workloads, admitted over time (`LoadOptions::kueue_over_time`;
    /// otherwise a snapshot admission at load decided them).
    pub kueue_jobs: Vec<super::kueue::KueueJob>,
    /// Whether the scenario's Kueue workloads were loaded for admission over time (else a
    /// snapshot admission decided them at load).
    pub kueue_over_time: bool,
    /// The scenario clock and initializer lifecycle: a TrainJob Kueue admits is resolved again
    /// with them.
    pub clock: String,
    pub initializers: crate::resolve::InitializerLifecycle,
}

/// A workload's times (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    pub at: u64,
    pub duration: Option<u64>,
}

/// `spec.replay.trace`, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayTrace {
    pub path: PathBuf,
    pub columns: TraceColumns,
    /// The preset's name, or `columns`.
    pub format: String,
    pub namespace: String,
    pub gpu_model_label: String,
    pub gpu_resource: String,
    pub priorities: BTreeMap<String, i32>,
    pub scheduler_name: String,
    /// The LocalQueue the rows' jobs are queued in (Kueue), if any.
    pub local_queue: Option<String>,
    /// The profile serving the rows' pods runs `Open-Gpu-Share`: a row's GPUs are a share
    /// (`gpu_milli` of each) through its annotations instead of a device plugin's resource.
    pub gpu_share: bool,
}

/// GPU feature discovery's product label.
const GFD_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
/// The openb nodes' model label (the FGD simulator's `alibabacloud.com/gpu-card-model`).
const OPENB_MODEL_LABEL: &str = "alibabacloud.com/gpu-card-model";

/// Reads `spec.replay`; `clock` is `spec.clock`.
pub(super) fn read(
    file: &Path,
    doc: &Rc<Document>,
    spec: &scenario::ReplaySpec,
    timeline: &[scenario::TimelineStep],
    clock: &str,
    errors: &mut Errors,
) -> Option<Replay> {
    let before = errors.len();
    let mut duration = |field: &str, text: &Option<String>, default: u64| match text {
        None => default,
        Some(t) => parse_duration(t).unwrap_or_else(|e| {
            errors.push(doc.error(file, &format!("spec.replay.{field}"), e));
            default
        }),
    };
    let cycle_ms = duration("cycle", &spec.cycle, 0);
    let sample_ms = spec
        .sample
        .as_ref()
        .map(|_| duration("sample", &spec.sample, 1));
    let until_ms = spec
        .until
        .as_ref()
        .map(|_| duration("until", &spec.until, 0));
    let max_in_unschedulable_ms = duration(
        "podMaxInUnschedulablePodsDuration",
        &spec.pod_max_in_unschedulable_pods_duration,
        crate::sched::queue::QueueConfig::default().max_in_unschedulable_ms,
    );
    let volcano_period_ms = duration(
        "volcanoSchedulePeriod",
        &spec.volcano_schedule_period,
        crate::sched::gang::VOLCANO_SCHEDULE_PERIOD_MS,
    );
    if volcano_period_ms == 0 {
        errors.push(doc.error(
            file,
            "spec.replay.volcanoSchedulePeriod",
            "Volcano's schedule period must be longer than 0",
        ));
    }
    if sample_ms == Some(0) {
        errors.push(doc.error(
            file,
            "spec.replay.sample",
            "the sample step must be longer than 0",
        ));
    }
    // A fixed step over a known span: its points are counted before anything runs.
    if let (Some(step), Some(until)) = (sample_ms.filter(|s| *s > 0), until_ms) {
        let points = until.div_ceil(step) + 1;
        let limit = crate::limits::SERIES_POINTS;
        if limit.exceeded_by(points) {
            let message = limit.message(format!("{points} samples from 0 to until"));
            errors.push(doc.error(file, "spec.replay.sample", message));
        }
    }
    let origin = clock_origin(clock).unwrap_or(0);
    let mut step_times = Vec::with_capacity(timeline.len());
    let mut last = 0;
    for (k, step) in timeline.iter().enumerate() {
        if let Some(at) = &step.at {
            match parse_at(at, origin) {
                Ok(t) if t < last => errors.push(doc.error(
                    file,
                    &format!("spec.timeline[{k}].at"),
                    format!("{at:?} is before the step above it: timeline steps happen in the order they are listed"),
                )),
                Ok(t) => last = t,
                Err(e) => errors.push(doc.error(file, &format!("spec.timeline[{k}].at"), e)),
            }
        }
        step_times.push(last);
    }
    let trace = spec
        .trace
        .as_ref()
        .and_then(|t| trace(file, doc, t, errors));
    (errors.len() == before).then(|| Replay {
        trace,
        cycle_ms,
        sample_ms,
        until_ms,
        max_in_unschedulable_ms,
        volcano_period_ms,
        step_times,
        timing: BTreeMap::new(),
        kueue: None,
        completions: Vec::new(),
        kueue_jobs: Vec::new(),
        kueue_over_time: false,
        clock: String::new(),
        initializers: Default::default(),
    })
}

fn trace(
    file: &Path,
    doc: &Rc<Document>,
    spec: &scenario::TraceSpec,
    errors: &mut Errors,
) -> Option<ReplayTrace> {
    let at = |field: &str, message: String| {
        doc.error(file, &format!("spec.replay.trace.{field}"), message)
    };
    let (columns, format) = match (&spec.format, &spec.columns) {
        (Some(name), None) => match TraceColumns::preset(name) {
            Some(c) => (c, name.clone()),
            None => {
                let known: Vec<&str> = crate::trace::PRESETS.to_vec();
                errors.push(at(
                    "format",
                    format!("unknown trace format {name:?}; known: {}", known.join(", ")),
                ));
                return None;
            }
        },
        (None, Some(columns)) => {
            if let Err((field, message)) = columns.check() {
                errors.push(at(&format!("columns.{field}"), message));
                return None;
            }
            (columns.clone(), "columns".to_string())
        }
        _ => {
            errors.push(at(
                "",
                "give exactly one of format (openb, helios, acme) and columns".into(),
            ));
            return None;
        }
    };
    let path = file.parent().unwrap_or(Path::new(".")).join(&spec.file);
    if let Err(e) = paths::check_reference(file, &path) {
        errors.push(at("file", format!("cannot read {:?}: {e}", spec.file)));
        return None;
    }
    let openb = format == "openb";
    // The queue name is the value of the pods' `kueue.x-k8s.io/queue-name` label: the API
    // server refuses what is no label value (an empty one names no queue, as in Kueue).
    let local_queue = spec.local_queue.clone().filter(|q| !q.is_empty());
    if let Some(q) = &local_queue {
        let problems = crate::model::labels::label_value_errors(q);
        if !problems.is_empty() {
            let message = format!("Invalid value: {q:?}: {}", problems.join("; "));
            errors.push(at("localQueue", message));
            return None;
        }
    }
    Some(ReplayTrace {
        path,
        columns,
        format,
        namespace: spec.namespace.clone().unwrap_or_else(|| "default".into()),
        gpu_model_label: (spec.gpu_model_label.clone()).unwrap_or_else(|| {
            match openb {
                true => OPENB_MODEL_LABEL,
                false => GFD_PRODUCT_LABEL,
            }
            .to_string()
        }),
        gpu_resource: (spec.gpu_resource.clone()).unwrap_or_else(|| "nvidia.com/gpu".into()),
        gpu_share: false,
        priorities: spec.priorities.clone(),
        scheduler_name: (spec.scheduler_name.clone())
            .unwrap_or_else(|| super::DEFAULT_SCHEDULER.to_string()),
        local_queue,
    })
}

/// The times each workload pod's workload object carries in its annotations.
pub(super) fn timing(
    pods: &[(Pod, Origin)],
    origin_ms: i64,
    errors: &mut Errors,
) -> BTreeMap<String, Timing> {
    let mut out = BTreeMap::new();
    for (pod, origin) in pods {
        let annotations = &origin.value()["metadata"]["annotations"];
        let read = |key: &str, parse: &dyn Fn(&str) -> Result<u64, String>| {
            let value = annotations.get(key)?;
            let field = format!("metadata.annotations.{key}");
            Some(match value.as_str() {
                Some(text) => parse(text).map_err(|e| origin.error_at(&field, e)),
                None => Err(origin.error_at(&field, "expected a string".into())),
            })
        };
        let at = read(ARRIVAL_ANNOTATION, &|t| parse_at(t, origin_ms));
        let duration = read(DURATION_ANNOTATION, &|t| parse_duration(t));
        if at.is_none() && duration.is_none() {
            continue;
        }
        let mut timing = Timing::default();
        match at {
            Some(Ok(t)) => timing.at = t,
            Some(Err(e)) => errors.push(e),
            None => {}
        }
        match duration {
            Some(Ok(d)) => timing.duration = Some(d),
            Some(Err(e)) => errors.push(e),
            None => {}
        }
        out.insert(pod.key(), timing);
    }
    out
}
