//! What admission reads and decides: the Kueue objects of a scenario, the workloads it
//! queues, the timeline as Kueue sees it, and every decision, eviction and quota usage it
//! reports.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::kueue::api::{ClusterQueue, Cohort, FlavorResource, QueueingStrategy};
use crate::kueue::api::{LocalQueue, ResourceFlavor, ResourceQuota, StopPolicy};
use crate::kueue::assigner::{Assignment, PodSet};
use crate::kueue::preemption::Reason;

/// The Kueue objects of a scenario.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    pub flavors: BTreeMap<String, ResourceFlavor>,
    pub cluster_queues: Vec<ClusterQueue>,
    pub cohorts: Vec<Cohort>,
    /// (namespace, LocalQueue name) → ClusterQueue name.
    pub local_queues: BTreeMap<(String, String), String>,
    /// The LocalQueues whose `stopPolicy` is not `None`.
    pub stopped_local_queues: BTreeMap<(String, String), StopPolicy>,
    /// WorkloadPriorityClass name → value.
    pub priority_classes: BTreeMap<String, i32>,
    /// Workloads that hold quota from the start (in Kueue's cache, not in any queue).
    pub admitted: Vec<Admitted>,
    /// The simulation's start, in seconds since the epoch: after every timestamp of the
    /// admitted workloads (0 without any). Queued workloads are created then, and the cycles
    /// reserve quota one second apart after it.
    pub now: i64,
    /// What reading the objects noticed (Workload objects that hold no quota, …).
    pub warnings: Vec<String>,
    /// ClusterQueues and Cohorts that timeline steps replace (quota changes), in step order.
    pub updates: Vec<QueueUpdate>,
    /// The manager Configuration's `waitForPodsReady` (`None`: off), which a replay's Kueue
    /// runs over time (`live`).
    pub pods_ready: Option<crate::kueue::config::WaitForPodsReady>,
}

/// A timeline step's Kueue objects: each ClusterQueue and Cohort replaces the one of its
/// name or is new; ResourceFlavors and LocalQueues are new (the loader refuses what Kueue's
/// API refuses, and names what is not simulated). What they change takes effect for the next
/// nominations; workloads already admitted keep their quota, as in Kueue, even above a
/// lowered quota. Workloads waiting for a LocalQueue or ClusterQueue that a step creates join
/// it then.
#[derive(Debug, Clone, Default)]
pub struct QueueUpdate {
    /// The timeline step (its index in `spec.timeline`).
    pub step: usize,
    pub cluster_queues: Vec<ClusterQueue>,
    pub cohorts: Vec<Cohort>,
    pub flavors: Vec<ResourceFlavor>,
    pub local_queues: Vec<LocalQueue>,
}

impl Objects {
    /// Whether Kueue is part of the scenario at all (else the queue-name label is inert).
    pub fn is_empty(&self) -> bool {
        self.cluster_queues.is_empty() && self.local_queues.is_empty() && self.updates.is_empty()
    }

    /// A ResourceFlavor of the scenario or of a timeline step (the loader lets no step
    /// change one: what a name means never changes).
    pub fn flavor(&self, name: &str) -> Option<&ResourceFlavor> {
        (self.flavors.get(name)).or_else(|| {
            (self.updates.iter()).find_map(|u| u.flavors.iter().find(|f| f.name == name))
        })
    }
}

/// A workload admitted before the simulation starts: it holds quota and may be preempted.
#[derive(Debug, Clone, Default)]
pub struct Admitted {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
    /// Its LocalQueue (`spec.queueName`), in its namespace.
    pub queue_name: String,
    pub priority: i32,
    /// Creation (the queue-order timestamp) and quota reservation times, in seconds.
    pub created: i64,
    pub reserved: i64,
    /// Already being evicted (an `Evicted` condition).
    pub evicted: bool,
    pub usage: BTreeMap<FlavorResource, i64>,
    /// The job that owns it (kind, name), whose pods go when it is preempted.
    pub owner: Option<(String, String)>,
}

/// A workload as Kueue queues it.
#[derive(Debug, Clone)]
pub struct Workload {
    pub namespace: String,
    pub name: String,
    /// The `kueue.x-k8s.io/queue-name` label: a LocalQueue of the namespace.
    pub queue_name: String,
    pub priority: i32,
    /// The queue-order timestamp (creation), in seconds; ties keep the list's order.
    pub created: i64,
    /// A plain pod's workload: evicted, it ends with its pod instead of being requeued.
    pub owned_by_pod: bool,
    pub pod_sets: Vec<PodSet>,
    /// Why no Workload object exists (the job's integration could not create it): the
    /// event's message. Such a workload is never queued.
    pub blocked: Option<String>,
}

/// A workload that lost its quota to a preemption.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Victim {
    /// One of the queued workloads (an index of `decisions`).
    Queued(usize),
    /// One of `Objects::admitted`.
    Admitted(usize),
}

/// An eviction by preemption: the Evicted and Preempted conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    pub victim: Victim,
    /// The timeline step after which it happened (`None`: at the start).
    pub step: Option<usize>,
    /// The preempting workload (an index of `decisions`).
    pub by: usize,
    pub cycle: usize,
    pub reason: Reason,
    /// `Preempted to accommodate a workload … due to …; preemptor path: …; preemptee path: …`.
    pub message: String,
}

/// An admitted workload a stopped queue (`HoldAndDrain`) evicts (`workload_controller.go`
/// `reconcileOnLocalQueueActiveState`, then `reconcileOnClusterQueueActiveState`): one
/// admitted before the simulation, at the start, or any, when a timeline step sets the
/// policy. Its Evicted condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drain {
    pub victim: Victim,
    /// The timeline step whose ClusterQueue change drained it (`None`: the start).
    pub step: Option<usize>,
    /// `LocalQueueStopped` or `ClusterQueueStopped`.
    pub reason: &'static str,
    /// `The LocalQueue is stopped` or `The ClusterQueue is stopped`.
    pub message: String,
}

/// What Kueue decided for one workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The ClusterQueue its LocalQueue points at, if it has one.
    pub cluster_queue: Option<String>,
    /// The QuotaReserved condition's reason: `QuotaReserved`, `Pending`, `Inadmissible`,
    /// `Preempted` for a pod's workload that ended with its eviction (or the event reason
    /// when no Workload exists).
    pub reason: &'static str,
    /// The condition's message, verbatim.
    pub message: Message,
    /// When admitted: the cycle (from 1) and the flavors per pod set.
    pub admitted: Option<(usize, Assignment)>,
    /// Its latest admission, kept when it is evicted or finishes.
    pub last_admitted: Option<(usize, Assignment)>,
    /// Where a workload not admitted waits when the cycles stop.
    pub waiting: Waiting,
    /// The workloads it preempted (indices of `Admission::evictions`).
    pub preempted: Vec<usize>,
    /// Its last eviction, if it was preempted (an index of `Admission::evictions`).
    pub evicted: Option<usize>,
    /// The timeline step in which it finished (its quota released), if it did.
    pub finished: Option<usize>,
    /// Set aside unevaluated, as equivalent to a workload that did not fit
    /// (SchedulingEquivalenceHashing): nothing wrote its condition since; cleared when it is
    /// evaluated again.
    pub bypassed: bool,
}

/// A condition message: text, or a nomination's flavor assignment, worded
/// (`Assignment.Message`) only when read: most nominations are superseded by the next one
/// before anyone reads their message.
#[derive(Clone)]
pub struct Message(Words);

#[derive(Clone)]
enum Words {
    Text(String),
    Assignment(Arc<Assignment>),
}

impl Message {
    /// The message of a nomination's flavor assignment.
    pub fn of(assignment: &Arc<Assignment>) -> Message {
        Message(Words::Assignment(Arc::clone(assignment)))
    }

    /// The flavor assignment it words, when it words one.
    pub fn assignment(&self) -> Option<&Assignment> {
        match &self.0 {
            Words::Assignment(a) => Some(a),
            Words::Text(_) => None,
        }
    }

    pub fn text(&self) -> Cow<'_, str> {
        match &self.0 {
            Words::Text(t) => Cow::Borrowed(t),
            Words::Assignment(a) => Cow::Owned(a.message()),
        }
    }

    /// The message with `more` after it.
    pub fn push_str(&mut self, more: &str) {
        let mut text = self.text().into_owned();
        text.push_str(more);
        self.0 = Words::Text(text);
    }
}

impl Default for Message {
    fn default() -> Self {
        Message(Words::Text(String::new()))
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message(Words::Text(text))
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message(Words::Text(text.to_string()))
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// As the text it reads.
impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text(), f)
    }
}

/// Messages are equal when they read the same.
impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl Eq for Message {}

impl Decision {
    /// Preempted and not requeued: a pod's workload, whose pod Kueue deleted.
    pub fn ended(&self) -> bool {
        self.admitted.is_none() && self.evicted.is_some() && self.waiting == Waiting::Nowhere
    }
}

/// Where a workload waits (`cluster_queue.go`: the heap, or the inadmissible workloads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Admitted, or never queued (no LocalQueue, no ClusterQueue, no Workload object), or
    /// ended by its eviction.
    Nowhere,
    /// In its ClusterQueue's heap: it is tried again next cycle.
    Heap,
    /// Parked among the inadmissible workloads until quota is freed.
    Inadmissible,
}

/// One flavor-resource of a ClusterQueue after admission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaUsage {
    pub flavor: String,
    pub resource: String,
    pub quota: ResourceQuota,
    pub usage: i64,
}

/// A ClusterQueue after admission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueUsage {
    pub name: String,
    pub cohort: Option<String>,
    pub strategy: QueueingStrategy,
    pub stop_policy: StopPolicy,
    pub resources: Vec<QuotaUsage>,
}

/// Every decision (indexed as the workloads), the admission order, the evictions and the
/// quota used.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    pub decisions: Vec<Decision>,
    /// Admitted workloads, in the order Kueue admitted them (a workload preempted later is
    /// left out unless it was admitted again).
    pub order: Vec<usize>,
    /// Evictions by preemption, in the order Kueue issued them.
    pub evictions: Vec<Eviction>,
    /// Admitted workloads a stopped queue evicted at the start.
    pub drained: Vec<Drain>,
    /// Which workloads hold quota once admission settles: at the start, then after each
    /// timeline step.
    pub holding: Vec<Vec<bool>>,
    pub queues: Vec<QueueUsage>,
    pub warnings: Vec<String>,
}

/// When workloads arrive and finish: the scenario's timeline as Kueue sees it.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Per workload, the timeline step it arrives at (`None`: present at the start).
    pub arrive: Vec<Option<usize>>,
    /// Per timeline step, the workloads that finish in it (their quota is released).
    pub finish: Vec<Vec<usize>>,
}
