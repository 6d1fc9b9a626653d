//! Tables for people: pods grouped by identical outcome, pending reasons, and GPU allocation
//! per node pool.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use tabled::settings::Style;
use tabled::{Table, Tabled};

use super::kueue::KueueReport;
use super::model::{NodeReport, PodReport, RunReport, ScenarioReport};
use crate::sched::PodPhase;

/// The node's GPUs as (used, total).
fn node_gpus(n: &NodeReport) -> (i64, i64) {
    n.gpus().map_or((0, 0), |(_, total, used)| (used, total))
}

fn is_mig_resource(name: &str) -> bool {
    name.starts_with("nvidia.com/mig-")
}

#[derive(Tabled)]
struct PodGroupRow {
    #[tabled(rename = "Pods")]
    pods: String,
    #[tabled(rename = "Namespace")]
    namespace: String,
    #[tabled(rename = "Status")]
    status: String,
    #[tabled(rename = "Placement")]
    placement: String,
}

#[derive(Tabled)]
struct StuckRow {
    #[tabled(rename = "Stuck workload")]
    workload: String,
    #[tabled(rename = "Scheduled")]
    scheduled: String,
    #[tabled(rename = "Pending")]
    pending: usize,
    #[tabled(rename = "Holding")]
    holding: String,
}

#[derive(Tabled)]
struct TimelineRow {
    #[tabled(rename = "Timeline step")]
    step: String,
    #[tabled(rename = "Pods after")]
    pods: String,
    #[tabled(rename = "Changes")]
    changes: String,
}

#[derive(Tabled)]
struct GangRow {
    #[tabled(rename = "Gang")]
    gang: String,
    #[tabled(rename = "Scheduler")]
    scheduler: String,
    #[tabled(rename = "minMember")]
    min_member: u32,
    #[tabled(rename = "Members")]
    members: usize,
    #[tabled(rename = "Could be placed")]
    placed: usize,
    #[tabled(rename = "Outcome")]
    outcome: &'static str,
}

#[derive(Tabled)]
struct ReasonRow {
    #[tabled(rename = "Pending pods")]
    count: usize,
    #[tabled(rename = "Message")]
    message: String,
}

#[derive(Tabled)]
struct PoolRow {
    #[tabled(rename = "Pool")]
    pool: String,
    #[tabled(rename = "GPU product")]
    product: String,
    #[tabled(rename = "Nodes")]
    nodes: usize,
    #[tabled(rename = "GPUs used/total")]
    gpus: String,
    #[tabled(rename = "MIG slices used/total")]
    mig: String,
    #[tabled(rename = "CPU used")]
    cpu: String,
    #[tabled(rename = "Memory used")]
    memory: String,
    #[tabled(rename = "Pods")]
    pods: i64,
}

/// Every table of every scenario (what `run.txt` holds).
pub fn render(report: &RunReport) -> String {
    let mut out = String::new();
    for s in &report.scenarios {
        render_scenario(s, None, &mut out);
    }
    out
}

/// Rows of one table a terminal gets before the rest is left to the file.
pub const TERMINAL_ROWS: usize = 20;

/// The tables for a terminal: a scenario's pod groups and pending messages stop after
/// [`TERMINAL_ROWS`] rows each, with a line saying how many more `full` holds. A 10,000-pod
/// run is a file to open, not a screen to scroll.
pub fn render_summary(report: &RunReport, full: &str) -> String {
    let mut out = String::new();
    for s in &report.scenarios {
        render_scenario(s, Some((TERMINAL_ROWS, full)), &mut out);
    }
    out
}

/// A table of at most `limit.0` rows, then a line naming how many more are in `limit.1`.
fn table_of<R: Tabled>(rows: Vec<R>, limit: Option<(usize, &str)>, what: &str) -> String {
    let total = rows.len();
    let shown: Vec<R> = match limit {
        Some((max, _)) => rows.into_iter().take(max).collect(),
        None => rows,
    };
    let mut text = Table::new(shown).with(Style::rounded()).to_string();
    if let Some((max, full)) = limit.filter(|(max, _)| total > *max) {
        let _ = write!(
            text,
            "\n… {} more {what} (of {total}): the full table is in {full}",
            total - max
        );
    }
    text
}

fn render_scenario(s: &ScenarioReport, limit: Option<(usize, &str)>, out: &mut String) {
    let _ = writeln!(out, "Scenario {} ({})", s.name, s.file);
    let _ = writeln!(
        out,
        "{} pods: {}, {} nodes",
        s.pods.len(),
        phase_counts(s),
        s.nodes.len()
    );
    if let Some(line) = sampling_line(s) {
        let _ = writeln!(out, "{line}");
    }
    for w in &s.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if !s.preempted_existing_pods.is_empty() {
        let _ = writeln!(
            out,
            "preempted existing pods: {}",
            s.preempted_existing_pods.join(", ")
        );
    }
    if !s.pods.is_empty() {
        let _ = writeln!(out, "{}", table_of(pod_groups(s), limit, "pod groups"));
    }
    if let Some(k) = &s.kueue {
        let rows = workload_rows(k);
        let _ = writeln!(out, "{}", table_of(rows, limit, "Kueue workloads"));
        if !k.evictions.is_empty() {
            let rows = eviction_rows(k);
            let _ = writeln!(out, "{}", table_of(rows, limit, "Kueue preemptions"));
        }
        let rows = quota_rows(k);
        let _ = writeln!(out, "{}", table_of(rows, limit, "quota rows"));
    }
    if !s.override_effects.is_empty() {
        let _ = writeln!(out, "{}", Table::new(effect_rows(s)).with(Style::rounded()));
    }
    if !s.timeline.is_empty() {
        let rows = s.timeline.iter().map(|t| TimelineRow {
            step: wrap(&t.step, 40),
            pods: t
                .pods
                .iter()
                .map(|(phase, n)| format!("{n} {phase}"))
                .collect::<Vec<_>>()
                .join("\n"),
            changes: if t.changes.is_empty() && t.blocked_evictions.is_empty() {
                "-".into()
            } else {
                t.changes
                    .iter()
                    .map(|c| {
                        let mut line = format!("{}: {} → {}", c.pod, c.before, c.after);
                        if !c.message.is_empty() {
                            line.push_str(&format!(" ({})", c.message));
                        }
                        wrap(&line, 110)
                    })
                    .chain(t.blocked_evictions.iter().map(|b| {
                        wrap(
                            &format!("{}: stays on {} ({})", b.pod, b.node, b.message),
                            110,
                        )
                    }))
                    .collect::<Vec<_>>()
                    .join("\n")
            },
        });
        let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
    }
    if !s.gangs.is_empty() {
        let rows = s.gangs.iter().map(|g| GangRow {
            gang: g.pod_group.clone(),
            scheduler: format!("{:?}", g.scheduler),
            min_member: g.min_member,
            members: g.members,
            placed: g.placed,
            outcome: if g.bound { "bound" } else { "none bound" },
        });
        let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
    }
    if !s.stuck_workloads.is_empty() {
        let rows = s.stuck_workloads.iter().map(|w| StuckRow {
            workload: format!("{}/{}", w.namespace, w.workload),
            scheduled: match w.succeeded {
                0 => format!("{}/{}", w.scheduled, w.pods),
                n => format!("{}/{} ({n} succeeded)", w.scheduled, w.pods),
            },
            pending: w.pending,
            holding: if w.holding.is_empty() {
                "-".to_string()
            } else {
                w.holding
                    .iter()
                    .map(|(r, q)| format!("{q} {r}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        });
        let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
    }
    let reasons = pending_reasons(s);
    if !reasons.is_empty() {
        let _ = writeln!(out, "{}", table_of(reasons, limit, "pending messages"));
    }
    if !s.nodes.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            Table::new(pool_rows(&s.nodes)).with(Style::rounded())
        );
    }
    if let Some(f) = &s.gpu_share_fragmentation {
        let _ = writeln!(out, "{}", gpu_share_table(&s.nodes, f));
    }
    let dra: Vec<DraRow> = (s.nodes.iter())
        .flat_map(|n| {
            n.dra.iter().map(|u| DraRow {
                node: n.name.clone(),
                device_class: u.device_class.clone(),
                devices: match u.shared_capacity.is_empty() {
                    true => format!("{}/{}", u.allocated, u.allocated + u.free),
                    false => format!(
                        "{}/{} (shared: {})",
                        u.allocated,
                        u.allocated + u.free,
                        (u.shared_capacity.iter())
                            .map(|(cap, used)| format!("{cap} {used}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
            })
        })
        .collect();
    if !dra.is_empty() {
        let _ = writeln!(out, "{}", table_of(dra, limit, "DRA device rows"));
    }
    out.push('\n');
}

/// GPU sharing per pool, with the FGD paper's fragmentation: the free GPU milli the target
/// workload cannot use (not the whole free GPUs the pool table calls fragmented).
#[derive(Tabled)]
struct GpuShareRow {
    #[tabled(rename = "Pool")]
    pool: String,
    #[tabled(rename = "GPU model")]
    model: String,
    #[tabled(rename = "GPUs")]
    gpus: i64,
    #[tabled(rename = "GPU allocated")]
    allocated: String,
    #[tabled(rename = "GPU free")]
    free: String,
    #[tabled(rename = "FGD fragment")]
    fragment: String,
    #[tabled(rename = "FGD fragment %")]
    ratio: String,
}

fn gpu_share_table(nodes: &[NodeReport], f: &super::gpu_share::GpuShareFragmentation) -> String {
    #[derive(Default)]
    struct Acc {
        gpus: i64,
        free: i64,
        fragment: f64,
    }
    let mut pools: BTreeMap<(String, String), Acc> = BTreeMap::new();
    for n in nodes {
        let Some(g) = &n.gpu_share else { continue };
        let acc = pools.entry((n.pool.clone(), g.model.clone())).or_default();
        acc.gpus += g.free_milli.len() as i64;
        acc.free += g.free_milli.iter().sum::<i64>();
        acc.fragment += g.fragment_milli;
    }
    let gpus = |milli: f64| format!("{:.2}", milli / 1000.0);
    let ratio = |fragment: f64, free: i64| match free {
        0 => "-".to_string(),
        _ => format!("{:.2}%", 100.0 * fragment / free as f64),
    };
    let mut rows: Vec<GpuShareRow> = (pools.into_iter())
        .map(|((pool, model), a)| GpuShareRow {
            pool,
            model: if model.is_empty() { "-".into() } else { model },
            gpus: a.gpus,
            allocated: gpus((a.gpus * 1000 - a.free) as f64),
            free: gpus(a.free as f64),
            fragment: gpus(a.fragment),
            ratio: ratio(a.fragment, a.free),
        })
        .collect();
    rows.push(GpuShareRow {
        pool: "cluster".into(),
        model: String::new(),
        gpus: f.gpu_milli / 1000,
        allocated: gpus((f.gpu_milli - f.idle_milli) as f64),
        free: gpus(f.idle_milli as f64),
        fragment: gpus(f.fragment_milli),
        ratio: ratio(f.fragment_milli, f.idle_milli),
    });
    Table::new(rows).with(Style::rounded()).to_string()
}

/// A node's DRA devices of one DeviceClass.
#[derive(Tabled)]
struct DraRow {
    #[tabled(rename = "Node")]
    node: String,
    #[tabled(rename = "DeviceClass")]
    device_class: String,
    #[tabled(rename = "DRA devices allocated/total")]
    devices: String,
}

/// How many nodes the placements examined, when kube-scheduler's sampling may have left some
/// out (from 100 nodes; below, every node a cycle may walk is examined). The JSON's
/// `pods[].evaluatedNodes` has each pod's count.
fn sampling_line(s: &ScenarioReport) -> Option<String> {
    if s.nodes.len() < crate::sched::sampling::MIN_FEASIBLE_NODES_TO_FIND {
        return None;
    }
    let mut examined: Vec<usize> = (s.pods.iter())
        .filter(|p| p.status == PodPhase::Scheduled)
        .filter_map(|p| p.evaluated_nodes)
        .collect();
    examined.sort_unstable();
    let (&least, &most) = (examined.first()?, examined.last()?);
    if least >= s.nodes.len() {
        return None;
    }
    let range = match least == most {
        true => format!("{least}"),
        false => format!(
            "{least} to {most} (median {})",
            examined[examined.len() / 2]
        ),
    };
    Some(format!(
        "node sampling: each placement examined {range} of {} nodes (percentageOfNodesToScore; --node-sampling all examines every node)",
        s.nodes.len()
    ))
}

/// `3 scheduled, 1 unschedulable, …` in a fixed order, zero counts left out.
fn phase_counts(s: &ScenarioReport) -> String {
    let phases = [
        (PodPhase::Scheduled, "scheduled"),
        (PodPhase::Succeeded, "succeeded"),
        (PodPhase::Unschedulable, "unschedulable"),
        (PodPhase::SchedulingGated, "scheduling-gated"),
        (PodPhase::Waiting, "not created (dependsOn)"),
        (PodPhase::Preempted, "preempted"),
        (PodPhase::SchedulerError, "scheduler error"),
    ];
    let mut parts: Vec<String> = Vec::new();
    for (phase, word) in phases {
        let n = s.pods.iter().filter(|p| p.status == phase).count();
        if phase == PodPhase::Waiting {
            // JobSet's dependsOn and a StatefulSet's OrderedReady hold pods back alike.
            let reason =
                |p: &&super::model::PodReport| super::model::pending_reason(p.status, &p.message);
            let mut reasons: Vec<String> = (s.pods.iter())
                .filter(|p| p.status == phase)
                .map(|p| reason(&p))
                .collect();
            reasons.sort();
            reasons.dedup();
            for r in reasons {
                let n = (s.pods.iter())
                    .filter(|p| p.status == phase && reason(p) == r)
                    .count();
                parts.push(format!("{n} {r}"));
            }
        } else if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

#[derive(Tabled)]
struct EffectRow {
    #[tabled(rename = "TrainJob")]
    job: String,
    #[tabled(rename = "With overrides")]
    with: String,
    #[tabled(rename = "Runtime only")]
    without: String,
    #[tabled(rename = "What the overrides changed")]
    summary: String,
}

fn effect_rows(s: &ScenarioReport) -> Vec<EffectRow> {
    let describe = |p: &super::model::Placement| {
        let pools: Vec<String> = p.pools.iter().map(|(k, v)| format!("{v} on {k}")).collect();
        let mut text = format!("{}/{} scheduled", p.scheduled, p.pods);
        if !pools.is_empty() {
            text.push_str(&format!(": {}", pools.join(", ")));
        }
        text
    };
    s.override_effects
        .iter()
        .map(|e| EffectRow {
            job: format!("{}/{}", e.namespace, e.train_job),
            with: wrap(&describe(&e.with_overrides), 50),
            without: wrap(&describe(&e.without_overrides), 50),
            summary: wrap(&e.summary, 60),
        })
        .collect()
}

/// Pods with the same namespace, status and placement (pool, or pending message) in one row.
fn pod_groups(s: &ScenarioReport) -> Vec<PodGroupRow> {
    let pool_of: BTreeMap<&str, &NodeReport> =
        s.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    type Key = (String, PodPhase, String);
    let mut groups: Vec<(Key, Vec<&str>)> = Vec::new();
    for p in &s.pods {
        let placement = match &p.node {
            Some(n) => {
                let node = pool_of[n.as_str()];
                match &node.gpu_product {
                    Some(g) => format!("pool {} ({g})", node.pool),
                    None => format!("pool {}", node.pool),
                }
            }
            None => pending_message(p),
        };
        let key = (p.namespace.clone(), p.status, placement);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(&p.name),
            None => groups.push((key, vec![&p.name])),
        }
    }
    groups
        .into_iter()
        .map(|((namespace, status, placement), names)| PodGroupRow {
            pods: summarize_names(&names),
            namespace,
            status: format!("{status:?}"),
            placement: wrap(&placement, 100),
        })
        .collect()
}

/// `a, b, c` or `a, b, … z (12 pods)`.
fn summarize_names(names: &[&str]) -> String {
    if names.len() <= 3 {
        names.join(", ")
    } else {
        format!(
            "{}, {}, … {} ({} pods)",
            names[0],
            names[1],
            names[names.len() - 1],
            names.len()
        )
    }
}

/// A pending pod's message; a gang member's names how far its gang got.
fn pending_message(p: &PodReport) -> String {
    match p.gang.as_ref().filter(|g| !g.bound) {
        Some(g) => format!("{}\n({})", p.message, g.summary()),
        None => p.message.clone(),
    }
}

fn pending_reasons(s: &ScenarioReport) -> Vec<ReasonRow> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for p in s
        .pods
        .iter()
        .filter(|p| !matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded))
    {
        let message = pending_message(p);
        match counts.iter_mut().find(|(m, _)| *m == message) {
            Some((_, c)) => *c += 1,
            None => counts.push((message, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts
        .into_iter()
        .map(|(m, count)| ReasonRow {
            count,
            message: wrap(&m, 120),
        })
        .collect()
}

/// The DeviceClass of MIG slices NVIDIA's DRA driver installs.
const DRA_MIG_CLASS: &str = "mig.nvidia.com";

fn pool_rows(nodes: &[NodeReport]) -> Vec<PoolRow> {
    #[derive(Default)]
    struct Acc {
        nodes: usize,
        gpus: (i64, i64),
        totals: BTreeMap<String, (i64, i64)>,
    }
    let mut pools: BTreeMap<(String, String), Acc> = BTreeMap::new();
    for n in nodes {
        let acc = pools
            .entry((
                n.pool.clone(),
                n.gpu_product.clone().unwrap_or_else(|| "-".into()),
            ))
            .or_default();
        acc.nodes += 1;
        let (used, total) = node_gpus(n);
        acc.gpus.0 += used;
        acc.gpus.1 += total;
        for (r, v) in &n.allocatable {
            acc.totals.entry(r.clone()).or_default().1 += v;
        }
        for (r, v) in &n.allocated {
            acc.totals.entry(r.clone()).or_default().0 += v;
        }
        // MIG slices published through DRA count as MIG slices.
        for u in n.dra.iter().filter(|u| u.device_class == DRA_MIG_CLASS) {
            let total = acc.totals.entry(DRA_MIG_CLASS.to_string()).or_default();
            total.0 += u.allocated;
            total.1 += u.allocated + u.free;
        }
    }
    pools
        .into_iter()
        .map(|((pool, product), acc)| {
            let mig = acc
                .totals
                .iter()
                .filter(|(r, _)| is_mig_resource(r) || *r == DRA_MIG_CLASS)
                .fold((0, 0), |(u, t), (_, (a, b))| (u + a, t + b));
            let ratio = |(used, total): (i64, i64)| {
                if total == 0 {
                    "-".to_string()
                } else {
                    format!("{used}/{total}")
                }
            };
            let pct = |r: &str| match acc.totals.get(r) {
                Some((u, t)) if *t > 0 => format!("{:.0}%", 100.0 * *u as f64 / *t as f64),
                _ => "-".into(),
            };
            PoolRow {
                pool,
                product,
                nodes: acc.nodes,
                gpus: ratio(acc.gpus),
                mig: ratio(mig),
                cpu: pct("cpu"),
                memory: pct("memory"),
                pods: acc.totals.get("pods").map_or(0, |p| p.0),
            }
        })
        .collect()
}

// ---- Kueue ----

#[derive(Tabled)]
struct WorkloadRow {
    #[tabled(rename = "Kueue workload")]
    workload: String,
    #[tabled(rename = "ClusterQueue")]
    queue: String,
    #[tabled(rename = "Kueue")]
    kueue: String,
    #[tabled(rename = "Flavors")]
    flavors: String,
    #[tabled(rename = "kube-scheduler")]
    scheduler: String,
}

#[derive(Tabled)]
struct QuotaRow {
    #[tabled(rename = "ClusterQueue")]
    queue: String,
    #[tabled(rename = "Flavor")]
    flavor: String,
    #[tabled(rename = "Resource")]
    resource: String,
    #[tabled(rename = "Usage / nominal")]
    usage: String,
    #[tabled(rename = "Borrowed")]
    borrowed: String,
}

fn workload_rows(k: &KueueReport) -> Vec<WorkloadRow> {
    (k.workloads.iter())
        .map(|w| WorkloadRow {
            workload: format!("{} {}/{}", w.kind, w.namespace, w.name),
            queue: w.cluster_queue.clone().unwrap_or_else(|| "-".into()),
            kueue: match (w.admitted, w.message.as_str()) {
                (false, _) if let Some(step) = w.finished_in_step => {
                    format!("finished in timeline step {step}")
                }
                (true, _) if !w.preempted.is_empty() => wrap(
                    &format!("admitted after preempting {}", w.preempted.join(", ")),
                    60,
                ),
                (true, _) => "admitted".to_string(),
                // A pod's workload that ended with its eviction.
                (false, m) if w.reason == "Preempted" => {
                    wrap(&format!("preempted, pod deleted: {m}"), 60)
                }
                // SchedulingEquivalenceHashing: not evaluated since an equivalent one failed.
                (false, "") if w.bypassed => {
                    "pending: set aside unevaluated, as an equivalent workload did not fit"
                        .to_string()
                }
                (false, m) if w.bypassed => wrap(
                    &format!(
                        "pending: set aside unevaluated, as an equivalent workload did not fit; earlier: {m}"
                    ),
                    60,
                ),
                // Never nominated: a StrictFIFO head that cannot be admitted blocks the rest.
                (false, "") => "pending: never reached the head of its ClusterQueue".to_string(),
                (false, m) => wrap(&format!("pending: {m}"), 60),
            },
            flavors: (w.pod_sets.iter())
                .filter(|ps| !ps.flavors.is_empty())
                .map(|ps| {
                    let mut flavors: Vec<&String> = ps.flavors.values().collect();
                    flavors.dedup();
                    let names: Vec<&str> = flavors.iter().map(|s| s.as_str()).collect();
                    format!("{}: {}", ps.name, names.join(", "))
                })
                .collect::<Vec<_>>()
                .join("\n"),
            scheduler: match &w.scheduler {
                None => "-".into(),
                Some(s) if !s.admitted_but_unschedulable => {
                    format!("{}/{} scheduled", s.scheduled, s.pods)
                }
                Some(s) => wrap(
                    &format!(
                        "ADMITTED BUT UNSCHEDULABLE: {}/{} scheduled; {}",
                        s.scheduled, s.pods, s.message
                    ),
                    60,
                ),
            },
        })
        .collect()
}

#[derive(Tabled)]
struct EvictionRow {
    #[tabled(rename = "Evicted by Kueue")]
    victim: String,
    #[tabled(rename = "For")]
    preemptor: String,
    #[tabled(rename = "When")]
    when: String,
    #[tabled(rename = "Reason")]
    reason: String,
    #[tabled(rename = "Pods deleted")]
    pods: String,
}

fn eviction_rows(k: &KueueReport) -> Vec<EvictionRow> {
    (k.evictions.iter())
        .map(|e| EvictionRow {
            victim: format!(
                "{} {} ({})",
                e.victim_kind, e.victim, e.victim_cluster_queue
            ),
            preemptor: e.preemptor.clone().unwrap_or_else(|| "-".into()),
            when: match (e.step, e.cycle) {
                (Some(step), Some(cycle)) => format!("step {step}, cycle {cycle}"),
                (None, Some(cycle)) => format!("start, cycle {cycle}"),
                (_, None) => "start".into(),
            },
            reason: e.reason.clone(),
            pods: if e.pods.is_empty() {
                "-".into()
            } else {
                wrap(&e.pods.join(", "), 40)
            },
        })
        .collect()
}

fn quota_rows(k: &KueueReport) -> Vec<QuotaRow> {
    (k.cluster_queues.iter())
        .flat_map(|q| {
            q.resources.iter().map(move |r| QuotaRow {
                queue: q.name.clone(),
                flavor: r.flavor.clone(),
                resource: r.resource.clone(),
                usage: format!("{} / {}", r.usage, r.nominal),
                borrowed: r.borrowed.clone(),
            })
        })
        .collect()
}

/// Wraps long messages after ", " and ". " so tables stay readable.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let cut = [", ", ". "]
            .iter()
            .filter_map(|sep| rest.find(sep).map(|i| i + sep.len()))
            .min()
            .unwrap_or(rest.len());
        let (part, tail) = rest.split_at(cut);
        if line_len > 0 && line_len + part.len() > width {
            out.truncate(out.trim_end().len());
            out.push('\n');
            line_len = 0;
        }
        out.push_str(part);
        line_len += part.len();
        rest = tail;
    }
    out
}
