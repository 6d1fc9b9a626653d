//! What arrives when: the scenario's workload pods at the times their annotations (or their
//! timeline step) give, and a trace's rows as it streams, merged in time order. The
//! scenario's arrivals come first among equal times; each source keeps its own order.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::sync::Arc;

use super::trace_pods::TracePods;
use crate::load::Scenario;
use crate::load::replay::Replay;
use crate::model::Pod;
use crate::sched::plan::{Event, Requirement, Step};
use crate::trace::{Outcome, TraceError, TraceReader};

/// A job arriving: its pods, how long they run once bound, and who it belongs to.
#[derive(Debug)]
pub struct Arrival {
    pub at: u64,
    pub pods: Vec<Arc<Pod>>,
    /// Per pod, its index among the scenario's workload pods (trace pods have none).
    pub scenario_pods: Vec<Option<usize>>,
    /// How long each pod runs once bound; `None`: until the replay ends.
    pub duration: Option<u64>,
    /// When the job is withdrawn if it has not started (a trace row that never ran).
    pub withdraw_at: Option<u64>,
    pub queue: String,
    pub priority: i32,
    pub class: String,
    /// The job's name: its workload, or its single pod's key.
    pub name: String,
    /// The job as Kueue queues it (its pods exist once admitted); `None`: not queued.
    pub kueue: Option<KueueArrival>,
    /// Its controllers' completion policy: an index into `spec.replay`'s completions.
    pub completion: Option<usize>,
}

/// A job as Kueue queues it in the replay.
#[derive(Debug)]
pub struct KueueArrival {
    pub workload: crate::kueue::admission::Workload,
    /// The workload keeps the creation time its object wrote; otherwise it is created when
    /// it arrives.
    pub keeps_created: bool,
    /// A TrainJob: admitted, it is resolved again with Kueue's runtime patch.
    pub train_job: Option<Box<crate::resolve::trainjob::TrainJob>>,
}

impl KueueArrival {
    /// A trace row's job: created when it arrives.
    fn created_on_arrival(workload: crate::kueue::admission::Workload) -> Self {
        KueueArrival {
            workload,
            keeps_created: false,
            train_job: None,
        }
    }
}

/// A timeline step at its time.
#[derive(Debug)]
pub struct TimedStep {
    /// Its index in `spec.timeline`.
    pub index: usize,
    pub at: u64,
    pub name: String,
    pub events: Vec<Event>,
}

/// The scenario's arrivals (in memory, as the scenario is) and the trace's (streamed).
pub struct Sources<'s> {
    scenario: VecDeque<Arrival>,
    trace: Option<(TraceReader<BufReader<File>>, TracePods<'s>)>,
    peeked: Option<Arrival>,
    /// The first error the trace gave; the replay stops with it.
    pub error: Option<TraceError>,
}

/// The scenario's plan, split for the replay: arrivals, timeline steps at their times, each
/// pod's `dependsOn` requirements, and the pods that finish once they ran (initializers).
pub struct Plan {
    pub arrivals: Vec<Arrival>,
    pub steps: Vec<TimedStep>,
    pub requires: Vec<Vec<Requirement>>,
    pub complete_after_run: Vec<bool>,
}

/// Splits the scenario's steps into timed arrivals and timeline steps.
pub fn plan(scenario: &Scenario, replay: &Replay) -> Plan {
    let n = scenario.workloads.len();
    let mut requires = vec![Vec::new(); n];
    let mut complete_after_run = vec![false; n];
    let mut arrivals: Vec<Arrival> = Vec::new();
    let mut steps: Vec<TimedStep> = Vec::new();
    let mut step: Option<usize> = None;
    let mut events = Vec::new();
    // The Kueue job each of the scenario's Kueue pods belongs to.
    let kueue_job_of: std::collections::HashMap<&str, usize> = (replay.kueue_jobs.iter())
        .enumerate()
        .flat_map(|(j, job)| job.pods.iter().map(move |k| (k.as_str(), j)))
        .collect();
    // The completion policy of the workload a pod belongs to.
    let completion_of = |p: usize| -> Option<usize> {
        let all = &replay.completions;
        let k = all
            .partition_point(|(first, _)| *first <= p)
            .checked_sub(1)?;
        let (first, c) = &all[k];
        (p < first + c.jobs.iter().map(|j| j.pods).sum::<usize>()).then_some(k)
    };
    for s in &scenario.steps {
        match s {
            Step::Schedule { pod, requires: r } => {
                requires[*pod].clone_from(r);
                let p = &scenario.workloads[*pod];
                let timing = replay.timing.get(&p.key()).copied().unwrap_or_default();
                let step_at = step.map_or(0, |k| replay.step_times[k]);
                let at = timing.at.max(step_at);
                let key = p.key();
                let name = p.workload.clone().unwrap_or_else(|| key.clone());
                let kueue_job = kueue_job_of.get(key.as_str()).copied();
                match arrivals.last_mut() {
                    Some(a) if a.at == at && p.workload.is_some() && a.name == name => {
                        a.pods.push(Arc::new(p.clone()));
                        a.scenario_pods.push(Some(*pod));
                    }
                    _ => arrivals.push(Arrival {
                        at,
                        pods: vec![Arc::new(p.clone())],
                        scenario_pods: vec![Some(*pod)],
                        duration: timing.duration,
                        withdraw_at: None,
                        queue: p.namespace.clone(),
                        priority: p.priority,
                        class: p
                            .controller_kind()
                            .map_or_else(|| "Pod".to_string(), str::to_string),
                        name,
                        kueue: kueue_job.map(|j| {
                            let job = &replay.kueue_jobs[j];
                            KueueArrival {
                                workload: job.workload.clone(),
                                keeps_created: job.created_written,
                                train_job: job.train_job.clone(),
                            }
                        }),
                        completion: completion_of(*pod),
                    }),
                }
            }
            Step::Complete { pods } => {
                for &p in pods {
                    complete_after_run[p] = true;
                }
            }
            Step::StepStart => {
                step = Some(step.map_or(0, |k| k + 1));
            }
            Step::Event(e) => events.push(e.clone()),
            Step::Checkpoint { name } => {
                let k = step.unwrap_or(0);
                steps.push(TimedStep {
                    index: k,
                    at: replay.step_times.get(k).copied().unwrap_or(0),
                    name: name.clone(),
                    events: std::mem::take(&mut events),
                });
            }
        }
    }
    // Stable: equal times keep the scenario's order.
    arrivals.sort_by_key(|a| a.at);
    Plan {
        arrivals,
        steps,
        requires,
        complete_after_run,
    }
}

impl<'s> Sources<'s> {
    pub fn new(
        arrivals: Vec<Arrival>,
        trace: Option<(TraceReader<BufReader<File>>, TracePods<'s>)>,
    ) -> Self {
        Sources {
            scenario: arrivals.into(),
            trace,
            peeked: None,
            error: None,
        }
    }

    /// The time of the next arrival.
    pub fn next_time(&mut self) -> Option<u64> {
        if self.peeked.is_none() {
            self.peeked = self.read_trace();
        }
        let scenario = self.scenario.front().map(|a| a.at);
        let trace = self.peeked.as_ref().map(|a| a.at);
        match (scenario, trace) {
            (Some(s), Some(t)) => Some(s.min(t)),
            (s, t) => s.or(t),
        }
    }

    /// The next arrival if it is due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Arrival> {
        let next = self.next_time()?;
        if next > now {
            return None;
        }
        match self.scenario.front() {
            Some(a) if a.at == next => self.scenario.pop_front(),
            _ => self.peeked.take(),
        }
    }

    fn read_trace(&mut self) -> Option<Arrival> {
        let (reader, pods) = self.trace.as_mut()?;
        let record = match reader.next()? {
            Ok(r) => r,
            Err(e) => {
                self.error.get_or_insert(e);
                self.trace = None;
                return None;
            }
        };
        let (made, queue, priority) = pods.pods(&record, reader.symbols());
        let kueue = pods
            .kueue_workload(&made)
            .map(KueueArrival::created_on_arrival);
        let (duration, withdraw_at) = match record.outcome {
            Outcome::Finished => (record.duration(), None),
            // Still running when the trace ends: it runs to the replay's end.
            Outcome::Censored => (None, None),
            Outcome::Withdrawn => (None, record.end),
        };
        let class = reader.symbols().name(record.class).to_string();
        Some(Arrival {
            at: record.arrival,
            scenario_pods: vec![None; made.len()],
            pods: made,
            duration,
            withdraw_at,
            queue,
            priority,
            class: match class.is_empty() {
                true => "trace".into(),
                false => class,
            },
            name: record.id.to_string(),
            kueue,
            completion: None,
        })
    }

    /// The trace's warnings (rows interpreted), once it has been read.
    pub fn trace_warnings(&self) -> Vec<String> {
        self.trace
            .as_ref()
            .map(|(r, p)| {
                let mut w = r.warnings();
                w.extend(p.warnings(&p.file()));
                w
            })
            .unwrap_or_default()
    }
}
