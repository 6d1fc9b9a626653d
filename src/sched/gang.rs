//! Gang scheduling: a PodGroup's pods are placed all together or not at all.
//!
//! Coscheduling is simulated as scheduler-plugins implements it
//! (`pkg/coscheduling/coscheduling.go`, `pkg/coscheduling/core/core.go`):
//! - PreFilter rejects a member while fewer than `minMember` pods of the group exist
//!   (terminated pods excluded: kube-scheduler's pod informer skips Succeeded and Failed pods;
//!   terminating ones count, as `podLister` lists and `CalculateAssignedPods` counts them),
//!   then checks `minResources` (plus `pods: minMember`) against the cluster's free resources,
//!   not counting what the group's own pods hold (`CheckClusterResource`, "resource gap").
//! - A member that passes the filters is assumed on its node and waits at Permit until
//!   `assigned + 1 >= minMember` (assumed members count as assigned); then all are bound.
//! - PostFilter of a member that fits nowhere rejects the waiting members ("optimistic
//!   rejection in PostFilter") unless the quorum is reached or the gap is at most 10%.
//! - Members still waiting when the queue runs dry time out after `scheduleTimeoutSeconds`:
//!   the first is rejected by the timeout, its Unreserve rejects the others.
//!
//! The verdicts are functions the replay shares ([`pre_filter_group`], [`post_filter`],
//! [`quorum`], [`permit_wait_seconds`]): there a member waits at Permit over time
//! (`src/replay/engine/permit.rs`).
//!
//! Members of one gang that are queued together are scheduled back to back, as
//! Coscheduling's QueueSort (priority, then PodGroup creation time) orders them. Volcano gangs
//! get the same all-or-nothing placement on kube-scheduler's filters (Volcano's own
//! predicates and messages are not simulated): [`schedule`] is the gang plugin's `JobReady`
//! over one allocate statement, committed or discarded, and a replay's Volcano sessions call
//! it for each job's turn (`src/replay/engine/volcano.rs`). The label-only coscheduling
//! Determined uses has PreFilter and Permit but no PostFilter or `minResources`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::cycle::{GangNote, PodOutcome, PodPhase, Scheduler};
use super::framework::{Code, Status};
use crate::model::Pod;
use crate::model::pod::GangScheduler;
use crate::model::pod_group::{PodGroup, PodGroups, group_of, key_of};
use crate::model::resources;

pub const COSCHEDULING: &str = "Coscheduling";

pub use super::profile::DEFAULT_PERMIT_WAITING_SECONDS;

/// `core.PodGroupNotFound`, the Permit status of a labelled pod without its PodGroup.
pub const POD_GROUP_NOT_FOUND: &str = "PodGroup not found";
/// The PreFilter reason of the label-only coscheduling (scheduler-plugins v0.18).
pub const LESS_THAN_MIN_AVAILABLE: &str = "less than minAvailable";
/// Coscheduling's PostFilter status for a pod whose PodGroup does not exist.
pub const CAN_NOT_FIND_POD_GROUP: &str = "can not find pod group";
pub const OPTIMISTIC_REJECTION: &str = "optimistic rejection in PostFilter";
pub const REJECTION_IN_UNRESERVE: &str = "rejection in Unreserve";

/// A Coscheduling pod whose PodGroup does not exist: Permit rejects it.
pub fn lacks_pod_group(pod: &Pod, groups: &PodGroups) -> bool {
    pod.pod_group
        .as_ref()
        .is_some_and(|g| g.scheduler == GangScheduler::Coscheduling)
        && group_of(pod, groups).is_none()
}

/// A Coscheduling pod without its PodGroup: Permit rejects it with `PodGroupNotFound` when it
/// fits; when it does not, PostFilter adds "can not find pod group".
pub(crate) fn without_pod_group(outcome: &mut PodOutcome) {
    match outcome.phase {
        PodPhase::Scheduled => *outcome = rejected(POD_GROUP_NOT_FOUND.into()),
        PodPhase::Unschedulable => append_post_filter(outcome, CAN_NOT_FIND_POD_GROUP),
        _ => {}
    }
}

/// The members of a gang as the queue holds them when it is attempted.
pub(crate) struct Attempt<'p> {
    pub group: &'p PodGroup,
    /// Queued members (workload pod ids), in queue order.
    pub queued: Vec<(usize, &'p Pod)>,
    /// Pods of the group that exist and are not terminated (queued ones included).
    pub siblings: usize,
    /// Members already bound.
    pub bound: usize,
    /// Members seen gated before (they exist).
    pub gated: usize,
    /// How long members wait at Permit when the PodGroup sets no timeout
    /// (`CoschedulingArgs.permitWaitingTimeSeconds`).
    pub permit_waiting_seconds: u32,
    /// `CoschedulingArgs.podGroupRejectPercentage`.
    pub reject_percentage: u32,
    /// Stop at the member that makes the quorum, leaving the others untried: Volcano's
    /// allocate action ends a job's turn once the job is ready (`allocateResourcesForTasks`
    /// breaks when `SubJobReady`, `pkg/scheduler/actions/allocate/allocate.go`), so a ready
    /// job places one more member per turn. A replay's Volcano session sets it; `run` tries
    /// every queued member back to back.
    pub stop_when_ready: bool,
}

/// Permit's quorum: `assigned` members (assumed or bound, this one included) reach
/// `minMember` (`PodGroupManager.Permit`).
pub(crate) fn quorum(g: &PodGroup, assigned: usize) -> bool {
    assigned >= g.min_member as usize
}

/// How long a member waits at Permit: the PodGroup's `scheduleTimeoutSeconds`, else the args'
/// `permitWaitingTimeSeconds` (60 when 0; `util.GetWaitTimeDuration`), a zero from the
/// PodGroup giving the args' own value (`Coscheduling.Permit`); at most the framework's
/// `maxTimeout` of 15 minutes (`RunPermitPlugins`).
pub(crate) fn permit_wait_seconds(g: &PodGroup, args_seconds: u32) -> u32 {
    let wait = match g.schedule_timeout_seconds {
        Some(t) => t,
        None if args_seconds != 0 => args_seconds,
        None => DEFAULT_PERMIT_WAITING_SECONDS,
    };
    let wait = if wait != 0 { wait } else { args_seconds };
    wait.min(MAX_PERMIT_WAIT_SECONDS)
}

/// Why a Volcano gang's placed members are not bound: fewer than `minMember` of its pods
/// (`placed`, bound ones included) could be placed, so the gang plugin's `JobReady` is false
/// and the allocate action discards the job's statement (Volcano's own message differs).
pub(crate) fn volcano_binds_none(g: &PodGroup, placed: usize) -> String {
    format!(
        "schedsim: Volcano's gang plugin binds none of PodGroup {}: {} of minMember {} pods could be placed",
        g.full_name(),
        placed,
        g.min_member
    )
}

/// Volcano's default `--schedule-period`: its scheduler opens a session this often
/// (`defaultSchedulerPeriod`, `cmd/scheduler/app/options/options.go`; `wait.Until(pc.runOnce,
/// pc.schedulePeriod, …)` in `pkg/scheduler/scheduler.go`).
pub const VOLCANO_SCHEDULE_PERIOD_MS: u64 = 1000;

/// The framework's `maxTimeout` for a Permit plugin's wait (`framework/runtime/framework.go`).
pub const MAX_PERMIT_WAIT_SECONDS: u32 = 15 * 60;

/// Schedules the queued members of one gang; returns each member's outcome.
pub(crate) fn schedule(s: &mut Scheduler<'_>, a: Attempt<'_>) -> Vec<(usize, PodOutcome)> {
    let g = a.group;
    let min = g.min_member as usize;
    let pre_filter = pre_filter(s, &a);
    let mut outcomes: Vec<(usize, PodOutcome)> = Vec::with_capacity(a.queued.len());
    // Assumed members waiting at Permit: (index into `outcomes`, node).
    let mut waiting: Vec<(usize, usize)> = Vec::new();
    let mut assigned = a.bound;
    let mut placed = a.bound;
    for &(id, pod) in &a.queued {
        let reject = pre_filter.as_ref().map(|r| r.status(&pod.name));
        let mut outcome = s.schedule_one_gang(id, pod, reject);
        match (outcome.phase, outcome.node) {
            (PodPhase::Scheduled, Some(node)) => {
                s.bind(node, id, pod);
                placed += 1;
                assigned += 1;
                // Permit: the quorum allows this member and every waiting one.
                if quorum(g, assigned) {
                    waiting.clear();
                    if a.stop_when_ready {
                        outcomes.push((id, outcome));
                        break;
                    }
                } else {
                    waiting.push((outcomes.len(), node));
                }
            }
            (PodPhase::Unschedulable, _) if g.scheduler == GangScheduler::Coscheduling => {
                let percentage = a.reject_percentage;
                if let Some(reason) = post_filter(g, assigned, &pod.name, percentage) {
                    for (i, node) in waiting.drain(..) {
                        let (member, o) = &mut outcomes[i];
                        s.unbind(node, *member);
                        *o = rejected(OPTIMISTIC_REJECTION.into());
                        assigned -= 1;
                    }
                    append_post_filter(&mut outcome, &reason);
                }
            }
            _ => {}
        }
        outcomes.push((id, outcome));
    }
    // The queue ran dry with members still waiting: they time out together.
    let timeout = permit_wait_seconds(g, a.permit_waiting_seconds);
    for (n, &(i, node)) in waiting.iter().enumerate() {
        let (member, o) = &mut outcomes[i];
        s.unbind(node, *member);
        *o = rejected(match g.scheduler {
            GangScheduler::Volcano => volcano_binds_none(g, placed),
            _ if n == 0 => {
                format!("rejected due to timeout after waiting {timeout}s at plugin {COSCHEDULING}")
            }
            _ => REJECTION_IN_UNRESERVE.into(),
        });
    }
    let note = GangNote {
        pod_group: g.full_name(),
        scheduler: g.scheduler,
        min_member: g.min_member,
        members: a.siblings,
        placed,
        bound: assigned >= min,
    };
    for (_, o) in &mut outcomes {
        o.gang = Some(note.clone());
    }
    outcomes
}

/// Why the gang's PreFilter rejects its members.
#[derive(Debug, Clone)]
pub(crate) enum PreFilterReject {
    /// PostFilter rejected the group less than `podGroupBackoffSeconds` ago (its full name).
    BackedOff(String),
    /// Fewer pods of the group exist than `minMember`.
    Siblings { current: usize, min_member: u32 },
    /// So many of its pods are gated that the quorum is out of reach.
    Gated,
    /// The label-only coscheduling's version of the same.
    LessThanMinAvailable,
    /// `minResources` exceeds what the cluster has free.
    ResourceGap(String),
}

impl PreFilterReject {
    /// The status of one member (the sibling message names the pod).
    pub(crate) fn status(&self, pod: &str) -> Status {
        let uu = Code::UnschedulableAndUnresolvable;
        match self {
            PreFilterReject::Siblings {
                current,
                min_member,
            } => Status::new(
                uu,
                COSCHEDULING,
                format!(
                    "pre-filter pod {pod} cannot find enough sibling pods, current pods number: {current}, minMember of group: {min_member}"
                ),
            ),
            PreFilterReject::BackedOff(group) => Status::new(
                uu,
                COSCHEDULING,
                format!("podGroup {group} failed recently"),
            ),
            PreFilterReject::Gated => Status::new(
                uu,
                COSCHEDULING,
                format!(
                    "pre-filter pod {pod} cannot proceed due to gated pods in the same PodGroup"
                ),
            ),
            PreFilterReject::LessThanMinAvailable => {
                Status::new(Code::Unschedulable, COSCHEDULING, LESS_THAN_MIN_AVAILABLE)
            }
            PreFilterReject::ResourceGap(gap) => {
                Status::new(uu, COSCHEDULING, format!("resource gap: {gap}"))
            }
        }
    }
}

/// Coscheduling's PreFilter for the gang: enough sibling pods, then `minResources`.
fn pre_filter(s: &Scheduler<'_>, a: &Attempt<'_>) -> Option<PreFilterReject> {
    let gated = a.gated + (a.queued.iter()).filter(|(i, p)| s.is_gated(*i, p)).count();
    pre_filter_group(s, a.group, a.siblings, gated, false)
}

/// Coscheduling's PreFilter (`PodGroupManager.PreFilter`) past its backoff check: at least
/// `minMember` of the group's `siblings` exist, of which at most `siblings − minMember` are
/// `gated`, then `minResources` fits the cluster (skipped while a pass is cached in
/// `permittedPG`: `resources_permitted`). The label-only coscheduling checks the count only.
pub(crate) fn pre_filter_group(
    s: &Scheduler<'_>,
    g: &PodGroup,
    siblings: usize,
    gated: usize,
    resources_permitted: bool,
) -> Option<PreFilterReject> {
    let min = g.min_member as usize;
    let too_few = siblings < min;
    match g.scheduler {
        GangScheduler::Volcano => None,
        GangScheduler::LightweightCoscheduling => {
            too_few.then_some(PreFilterReject::LessThanMinAvailable)
        }
        GangScheduler::Coscheduling if too_few => Some(PreFilterReject::Siblings {
            current: siblings,
            min_member: g.min_member,
        }),
        GangScheduler::Coscheduling if siblings - gated.min(siblings) < min => {
            Some(PreFilterReject::Gated)
        }
        GangScheduler::Coscheduling if resources_permitted => None,
        GangScheduler::Coscheduling => resource_gap(s, g).map(PreFilterReject::ResourceGap),
    }
}

/// Coscheduling's PostFilter for a member that fits nowhere: the message it adds when it
/// rejects the gang, or `None` when the quorum is reached or at most `reject_percentage` %
/// of `minMember` is unassigned (`podGroupRejectPercentage`, compared in float64 as upstream).
pub(crate) fn post_filter(
    g: &PodGroup,
    assigned: usize,
    pod: &str,
    reject_percentage: u32,
) -> Option<String> {
    let min = g.min_member as usize;
    if assigned >= min {
        return None;
    }
    let not_assigned = (min - assigned) as f64 / f64::from(g.min_member);
    if not_assigned <= f64::from(reject_percentage) / 100.0 {
        return None;
    }
    Some(format!(
        "PodGroup {} gets rejected due to Pod {pod} is unschedulable even after PostFilter",
        g.full_name()
    ))
}

/// Adds a PostFilter reason after DefaultPreemption's (`RunPostFilterPlugins` joins the
/// reasons of the plugins that returned Unschedulable with ", ").
/// The message is extended in place, as `FitError.Error()` ends with the PostFilter message.
pub(crate) fn append_post_filter(outcome: &mut PodOutcome, reason: &str) {
    if let Some(d) = outcome.diagnosis.as_mut().map(std::sync::Arc::make_mut) {
        let joined = match d.post_filter_msg.take() {
            Some(m) if !m.is_empty() => {
                outcome.message.push_str(&format!(", {reason}"));
                format!("{m}, {reason}")
            }
            _ => {
                outcome.message.push_str(&format!(" {reason}"));
                reason.to_string()
            }
        };
        d.post_filter_msg = Some(joined);
    }
}

/// A member rejected while it waited at Permit: its resources are released.
fn rejected(message: String) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::Unschedulable,
        node: None,
        message,
        diagnosis: None,
        victims: Vec::new(),
        pdb_violations: 0,
        gang: None,
        evaluated: None,
        // Rejected at Permit: `clearNominatedNode`.
        nominating: crate::sched::cycle::Nominating::Clear,
    }
}

/// `CheckClusterResource`: what is left of `minResources` (plus `pods: minMember`) after
/// subtracting every node's free resources, the group's own pods not counted as using any.
/// `None` when the cluster has room. Printed as Go prints the `ResourceList` map (`%v`).
fn resource_gap(s: &Scheduler<'_>, g: &PodGroup) -> Option<String> {
    let min_resources = g.min_resources.as_ref()?;
    let table = &s.cluster.table;
    let mut gap: BTreeMap<String, GoQuantity> = min_resources
        .iter()
        .map(|(name, &v)| (name.clone(), GoQuantity::of_request(name, v)))
        .collect();
    gap.insert(
        resources::PODS.into(),
        GoQuantity::new(i64::from(g.min_member), 0, DECIMAL_SI),
    );
    for node in 0..s.cluster.len() {
        let res = s.cluster.resources(node);
        let mut own: Vec<i64> = vec![0; table.len()];
        let mut own_pods = 0;
        for b in &s.bound[node] {
            if key_of(s.bound_pod(b.pod)).as_ref() == Some(&g.key()) {
                own_pods += 1;
                for (i, o) in own.iter_mut().enumerate() {
                    *o += b.request.get(i);
                }
            }
        }
        let left = |name: &str| -> GoQuantity {
            if name == resources::PODS {
                let pods = s.bound[node].len() as i64 - own_pods;
                return GoQuantity::new(res.allowed_pods - pods, 0, BINARY_SI);
            }
            let (alloc, used) = match table.index(name) {
                Some(i) => (res.allocatable[i], res.requested[i] - own[i]),
                None => (0, 0),
            };
            GoQuantity::of_node(name, alloc - used)
        };
        gap.retain(|name, q| {
            q.sub(left(name));
            q.value > 0
        });
        if gap.is_empty() {
            return None;
        }
    }
    let mut out = String::from("map[");
    for (i, (name, q)) in gap.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(
            out,
            "{name}:{{{{{} {}}} {{<nil>}}  {}}}",
            q.value, q.scale, q.format
        );
    }
    out.push(']');
    Some(out)
}

const DECIMAL_SI: &str = "DecimalSI";
const BINARY_SI: &str = "BinarySI";

/// apimachinery's `resource.Quantity` as an `int64Amount` (value × 10^scale) and format, for
/// printing the resource gap exactly as the plugin's `%v` does.
#[derive(Debug, Clone, Copy)]
struct GoQuantity {
    value: i64,
    scale: i32,
    format: &'static str,
}

impl GoQuantity {
    fn new(value: i64, scale: i32, format: &'static str) -> Self {
        GoQuantity {
            value,
            scale,
            format,
        }
    }

    /// A `minResources` entry as the API server stores it (canonical string, parsed back):
    /// whole CPUs at scale 0, otherwise milli-CPUs at scale -3; byte quantities binary.
    fn of_request(name: &str, v: i64) -> Self {
        match name {
            resources::CPU if v % 1000 == 0 => Self::new(v / 1000, 0, DECIMAL_SI),
            resources::CPU => Self::new(v, -3, DECIMAL_SI),
            _ if is_binary(name) => Self::new(v, 0, BINARY_SI),
            _ => Self::new(v, 0, DECIMAL_SI),
        }
    }

    /// A node's free amount as `util.ResourceList` builds it: `NewMilliQuantity` for CPU,
    /// `NewQuantity` otherwise.
    fn of_node(name: &str, v: i64) -> Self {
        match name {
            resources::CPU => Self::new(v, -3, DECIMAL_SI),
            _ if is_binary(name) => Self::new(v, 0, BINARY_SI),
            _ => Self::new(v, 0, DECIMAL_SI),
        }
    }

    /// `Quantity.Sub` on int64 amounts (`int64Amount.Add` of the negation).
    fn sub(&mut self, y: GoQuantity) {
        if self.value == 0 {
            self.format = y.format;
        }
        let b = -y.value;
        if b == 0 {
            return;
        }
        if self.value == 0 {
            (self.value, self.scale) = (b, y.scale);
        } else if self.scale == y.scale {
            self.value += b;
        } else if self.scale > y.scale {
            self.value = self.value * 10i64.pow((self.scale - y.scale) as u32) + b;
            self.scale = y.scale;
        } else {
            self.value += b * 10i64.pow((y.scale - self.scale) as u32);
        }
    }
}

/// Resources `util.ResourceList` builds with BinarySI.
fn is_binary(name: &str) -> bool {
    name == resources::MEMORY
        || name == resources::EPHEMERAL_STORAGE
        || name.starts_with("hugepages-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantity_subtraction_follows_int64_amount() {
        // 16 CPUs minus 4000m: scales align to -3.
        let mut q = GoQuantity::of_request("cpu", 16_000);
        q.sub(GoQuantity::of_node("cpu", 4_000));
        assert_eq!((q.value, q.scale), (12_000, -3));
        // A zero amount takes the other's value, scale and format.
        let mut z = GoQuantity::new(0, 0, DECIMAL_SI);
        z.sub(GoQuantity::of_node("memory", 5));
        assert_eq!((z.value, z.scale, z.format), (-5, 0, BINARY_SI));
    }

    #[test]
    fn post_filter_spares_a_gang_within_ten_percent() {
        let g = PodGroup {
            scheduler: GangScheduler::Coscheduling,
            namespace: "ml".into(),
            name: "llm".into(),
            min_member: 10,
            min_resources: None,
            schedule_timeout_seconds: None,
        };
        assert_eq!(post_filter(&g, 9, "p", 10), None);
        assert_eq!(post_filter(&g, 10, "p", 10), None);
        // podGroupRejectPercentage 0: any gap rejects; 100: none does.
        assert!(post_filter(&g, 9, "p", 0).is_some());
        assert_eq!(post_filter(&g, 0, "p", 100), None);
        assert_eq!(
            post_filter(&g, 8, "p", 10).as_deref(),
            Some(
                "PodGroup ml/llm gets rejected due to Pod p is unschedulable even after PostFilter"
            )
        );
    }
}
