//! When a workload's controllers call it done, for a replay. Pods in a replay only succeed (a
//! deleted one is replaced), so what decides is success:
//!
//! - A `batch/v1` Job (kubernetes `pkg/controller/job/job_controller.go`): `manageJob` keeps
//!   `min(parallelism, completions − succeeded)` pods active (with no `completions`,
//!   `parallelism` until one succeeds, then no new ones), an Indexed Job's new pods taking the
//!   lowest indexes neither succeeded nor active (`firstPendingIndexes`); `syncJob` completes
//!   it when `succeeded ≥ completions` (without `completions`: one succeeded) and no pod is
//!   active; an Indexed Job's `successPolicy` (`success_policy.go` `matchSuccessPolicy`) meets
//!   its criteria earlier, and the Job's active pods are deleted.
//! - A JobSet (kubernetes-sigs/jobset `pkg/controllers/success_policy.go`,
//!   `jobset_controller.go` `executeSuccessPolicy`): complete once as many of its Jobs succeeded
//!   as its `successPolicy` expects among the `targetReplicatedJobs` (all of them when empty):
//!   one for `Any`, every replica for `All` (the webhook's default); its active Jobs are then
//!   deleted. A TrainJob completes with the JobSet its runtime makes (Kubeflow Trainer
//!   `pkg/runtime/framework/plugins/jobset`), with the runtime's `successPolicy`.
//!
//! The Completions of JobSets and TrainJobs are made next to them (`jobset::completion`,
//! `build::completion`); this module imports none of its siblings.
//!
//! Also the API server's checks of a Job's `successPolicy` (`pkg/apis/batch/validation`,
//! `validateSuccessPolicy`), with its messages.

use std::collections::BTreeSet;

use k8s_openapi::api::batch::v1::{Job, JobSpec, SuccessPolicy};

use crate::model::validate::FieldError;

/// A workload's Jobs and the success policy over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// In the order the workload lists their pods.
    pub jobs: Vec<ChildJob>,
    /// The JobSet's `successPolicy` (a plain Job's is its one Job).
    pub policy: SetPolicy,
}

/// One Job of a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildJob {
    /// The Job's name: its pods are `<name>-<index>`.
    pub name: String,
    /// The JobSet's replicated job it belongs to.
    pub replicated_job: Option<String>,
    pub completions: Option<u32>,
    pub parallelism: u32,
    pub indexed: bool,
    /// `successPolicy.rules` (Indexed Jobs).
    pub success_rules: Vec<SuccessRule>,
    /// The pods the workload lists for it (its first wave).
    pub pods: usize,
}

/// One `successPolicy` rule of a Job: the indexes (inclusive intervals) and count it asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuccessRule {
    pub indexes: Option<Vec<(u32, u32)>>,
    pub count: Option<u32>,
}

/// A JobSet's `successPolicy`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetPolicy {
    /// Operator `Any` (else `All`).
    pub any: bool,
    /// `targetReplicatedJobs`; empty: every replicated job.
    pub targets: Vec<String>,
}

impl SetPolicy {
    /// `jobMatchesSuccessPolicy`.
    pub fn targets(&self, job: &ChildJob) -> bool {
        self.targets.is_empty()
            || (job.replicated_job.as_ref()).is_some_and(|r| self.targets.contains(r))
    }

    /// `numJobsExpectedToSucceed`: one for `Any`, the targeted Jobs for `All`.
    pub fn expected(&self, jobs: &[ChildJob]) -> usize {
        match self.any {
            true => 1,
            false => jobs.iter().filter(|j| self.targets(j)).count(),
        }
    }
}

impl ChildJob {
    /// `manageJob`'s `wantActive`.
    pub fn want_active(&self, succeeded: u32, active: u32) -> u32 {
        match self.completions {
            None if succeeded > 0 => active,
            None => self.parallelism,
            Some(c) => c.saturating_sub(succeeded).min(self.parallelism),
        }
    }

    /// `syncJob`'s `complete`.
    pub fn complete(&self, succeeded: u32, active: u32) -> bool {
        match self.completions {
            None => succeeded > 0 && active == 0,
            Some(c) => succeeded >= c && active == 0,
        }
    }

    /// `matchSuccessPolicy` over the succeeded indexes.
    pub fn success_criteria_met(&self, succeeded: &BTreeSet<u32>) -> bool {
        if succeeded.is_empty() {
            return false;
        }
        self.success_rules.iter().any(|rule| match &rule.indexes {
            Some(required) => {
                let contains = (required.iter())
                    .map(|&(a, b)| succeeded.range(a..=b).count())
                    .sum::<usize>();
                let total: usize = required.iter().map(|&(a, b)| (b - a + 1) as usize).sum();
                contains == total || rule.count.is_some_and(|c| contains >= c as usize)
            }
            None => rule.count.is_some_and(|c| succeeded.len() >= c as usize),
        })
    }
}

/// A `batch/v1` Job (defaulted as `job_pods` makes its pods).
pub fn of_job(job: &Job) -> Completion {
    let name = job.metadata.name.clone().unwrap_or_default();
    let spec = job.spec.clone().unwrap_or_default();
    Completion {
        jobs: vec![child(name, None, &spec)],
        policy: SetPolicy::default(),
    }
}

/// `spec.successPolicy` of a JobSet: `operator` `All` (the webhook's default) or `Any` over
/// the Jobs of `targetReplicatedJobs` (all of them when empty).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSetSuccessPolicy {
    #[serde(default)]
    pub operator: Option<String>,
    #[serde(default)]
    pub target_replicated_jobs: Vec<String>,
}

/// The policy as the controller reads it.
pub fn set_policy(p: Option<&JobSetSuccessPolicy>) -> SetPolicy {
    SetPolicy {
        any: p.is_some_and(|p| p.operator.as_deref() == Some("Any")),
        targets: p
            .map(|p| p.target_replicated_jobs.clone())
            .unwrap_or_default(),
    }
}

/// One Job as its controller runs it (`SetDefaults_Job`: with neither set, `completions` and
/// `parallelism` are 1; `parallelism` defaults to 1).
pub fn child(name: String, replicated_job: Option<String>, spec: &JobSpec) -> ChildJob {
    let completions = match (spec.completions, spec.parallelism) {
        (None, None) => Some(1),
        (c, _) => c.map(|c| c.max(0) as u32),
    };
    let parallelism = spec.parallelism.unwrap_or(1).max(0) as u32;
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    let success_rules = match (&spec.success_policy, completions) {
        (Some(p), Some(c)) if indexed => rules(p, c),
        _ => Vec::new(),
    };
    ChildJob {
        pods: parallelism.min(completions.unwrap_or(u32::MAX)) as usize,
        name,
        replicated_job,
        completions,
        parallelism,
        indexed,
        success_rules,
    }
}

/// The rules as the controller reads them: a rule whose `succeededIndexes` does not parse
/// asks for nothing (`parseIndexesFromString` gives no interval; `matchSuccessPolicy` skips it).
pub fn rules(p: &SuccessPolicy, completions: u32) -> Vec<SuccessRule> {
    (p.rules.iter())
        .map(|r| SuccessRule {
            indexes: (r.succeeded_indexes.as_deref()).map(|s| {
                parse_indexes(s, completions)
                    .map(|(i, _)| i)
                    .unwrap_or_default()
            }),
            count: r.succeeded_count.map(|c| c.max(0) as u32),
        })
        .filter(|r| r.indexes.as_ref().is_none_or(|i| !i.is_empty()))
        .collect()
}

/// `validateIndexesFormat`: the intervals of `1,3-5` and how many indexes they hold.
fn parse_indexes(s: &str, completions: u32) -> Result<(Vec<(u32, u32)>, u32), String> {
    if s.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut total = 0u32;
    for interval in s.split(',') {
        let (x, y) = parse_interval(interval, completions)?;
        if let Some(&(_, last)) = out.last()
            && last >= x
        {
            return Err(format!(
                "non-increasing order, previous: {last}, current: {x}"
            ));
        }
        total += y - x + 1;
        out.push((x, y));
    }
    Ok((out, total))
}

/// `parseIndexInterval`.
fn parse_interval(s: &str, completions: u32) -> Result<(u32, u32), String> {
    let limits: Vec<&str> = s.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {s:?} violates the requirement that an index interval can have at most two parts separated by '-'"
        ));
    }
    let index = |t: &str| -> Result<u32, String> {
        let v: i64 = (t.parse::<i64>().ok())
            .filter(|_| !t.starts_with('+'))
            .ok_or_else(|| format!("cannot convert string to integer for index: {t:?}"))?;
        if v >= i64::from(completions) {
            return Err(format!("too large index: {t:?}"));
        }
        Ok(v.max(0) as u32)
    };
    let x = index(limits[0])?;
    match limits.get(1) {
        None => Ok((x, x)),
        Some(t) => {
            let y = index(t)?;
            if x >= y {
                return Err(format!("non-increasing order, previous: {x}, current: {y}"));
            }
            Ok((x, y))
        }
    }
}

/// `maxSuccessPolicyRule` and `maxJobSuccessPolicySucceededIndexesLimit`.
const MAX_RULES: usize = 20;
const MAX_SUCCEEDED_INDEXES: usize = 64 * 1024;

/// The API server's checks of `spec.successPolicy` (`validateJobSpec`, `validateSuccessPolicy`,
/// `validateSuccessPolicyRule`); `at` makes a field's path.
pub fn validate(spec: &JobSpec, at: &dyn Fn(&str) -> String) -> Vec<FieldError> {
    let Some(policy) = &spec.success_policy else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    let path = at("spec.successPolicy");
    if spec.completion_mode.as_deref() != Some("Indexed") {
        errs.push(FieldError::new(
            &path,
            format!(
                "Invalid value: {}: requires indexed completion mode",
                go_policy(policy)
            ),
        ));
        return errs;
    }
    let rules_path = format!("{path}.rules");
    if policy.rules.is_empty() {
        errs.push(FieldError::new(
            &rules_path,
            "Required value: at least one rules must be specified when the successPolicy is specified"
                .into(),
        ));
    }
    if policy.rules.len() > MAX_RULES {
        errs.push(FieldError::new(
            &rules_path,
            format!(
                "Too many: {}: must have at most {MAX_RULES} items",
                policy.rules.len()
            ),
        ));
    }
    let completions = spec.completions.unwrap_or(0);
    for (i, rule) in policy.rules.iter().enumerate() {
        let rule_path = format!("{rules_path}[{i}]");
        if rule.succeeded_count.is_none() && rule.succeeded_indexes.is_none() {
            errs.push(FieldError::new(
                &rule_path,
                "Required value: at least one of succeededCount or succeededIndexes must be specified"
                    .into(),
            ));
        }
        let mut total = 0i64;
        if let Some(s) = &rule.succeeded_indexes {
            let field = format!("{rule_path}.succeededIndexes");
            if s.len() > MAX_SUCCEEDED_INDEXES {
                errs.push(FieldError::new(
                    &field,
                    format!("Too long: may not be more than {MAX_SUCCEEDED_INDEXES} bytes"),
                ));
            }
            match parse_indexes(s, completions.max(0) as u32) {
                Ok((_, t)) => total = i64::from(t),
                Err(e) => errs.push(FieldError::new(
                    &field,
                    format!("Invalid value: {s:?}: error parsing succeededIndexes: {e}"),
                )),
            }
        }
        if let Some(c) = rule.succeeded_count {
            let field = format!("{rule_path}.succeededCount");
            if c < 0 {
                errs.push(FieldError::new(
                    &field,
                    format!("Invalid value: {c}: must be greater than or equal to 0"),
                ));
            }
            if c > completions {
                errs.push(FieldError::new(
                    &field,
                    format!("Invalid value: {c}: must be less than or equal to {completions} (the number of specified completions)"),
                ));
            }
            if rule.succeeded_indexes.is_some() && i64::from(c) > total {
                errs.push(FieldError::new(
                    &field,
                    format!("Invalid value: {c}: must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"),
                ));
            }
        }
    }
    errs
}

/// The policy as Go's `%#v` prints the internal `batch.SuccessPolicy` in `field.Invalid`; the
/// addresses of its set pointers, which no input determines, are printed as `…`.
fn go_policy(p: &SuccessPolicy) -> String {
    let rules: Vec<String> = (p.rules.iter())
        .map(|r| {
            let ptr = |ty: &str, set: bool| match set {
                true => format!("(*{ty})(…)"),
                false => format!("(*{ty})(nil)"),
            };
            format!(
                "batch.SuccessPolicyRule{{SucceededIndexes:{}, SucceededCount:{}}}",
                ptr("string", r.succeeded_indexes.is_some()),
                ptr("int32", r.succeeded_count.is_some())
            )
        })
        .collect();
    let rules = match rules.is_empty() {
        true => "[]batch.SuccessPolicyRule(nil)".to_string(),
        false => format!("[]batch.SuccessPolicyRule{{{}}}", rules.join(", ")),
    };
    format!("batch.SuccessPolicy{{Rules:{rules}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(completions: Option<u32>, parallelism: u32, rules: Vec<SuccessRule>) -> ChildJob {
        ChildJob {
            name: "j".into(),
            replicated_job: None,
            completions,
            parallelism,
            indexed: true,
            success_rules: rules,
            pods: 0,
        }
    }

    #[test]
    fn manage_job_keeps_at_most_the_completions_left_active() {
        let j = job(Some(4), 2, Vec::new());
        assert_eq!(j.want_active(0, 2), 2);
        assert_eq!(j.want_active(3, 1), 1);
        assert_eq!(j.want_active(4, 0), 0);
        assert!(!j.complete(3, 1));
        assert!(j.complete(4, 0));
        // A work queue: parallelism until one succeeds, then what runs.
        let q = job(None, 3, Vec::new());
        assert_eq!((q.want_active(0, 1), q.want_active(1, 2)), (3, 2));
        assert!(!q.complete(1, 2));
        assert!(q.complete(1, 0));
    }

    /// `TestMatchSuccessPolicy` (success_policy_test.go), its cases as intervals.
    #[test]
    fn success_policy_rules_match_as_upstream() {
        let rule = |indexes: Option<&str>, count: Option<u32>| SuccessRule {
            indexes: indexes.map(|s| parse_indexes(s, 10).unwrap().0),
            count,
        };
        let set = |v: &[u32]| v.iter().copied().collect::<BTreeSet<u32>>();
        // succeededIndexes only: all of them.
        let j = job(Some(10), 10, vec![rule(Some("0-2,4"), None)]);
        assert!(!j.success_criteria_met(&set(&[0, 1, 2])));
        assert!(j.success_criteria_met(&set(&[0, 1, 2, 4, 7])));
        // succeededIndexes with succeededCount: that many of them.
        let j = job(Some(10), 10, vec![rule(Some("3-6"), Some(2))]);
        assert!(!j.success_criteria_met(&set(&[0, 1, 3])));
        assert!(j.success_criteria_met(&set(&[3, 5])));
        // succeededCount only: that many of any.
        let j = job(Some(10), 10, vec![rule(None, Some(3))]);
        assert!(j.success_criteria_met(&set(&[0, 8, 9])));
        // The second rule matches.
        let j = job(
            Some(10),
            10,
            vec![rule(Some("9"), None), rule(None, Some(1))],
        );
        assert!(j.success_criteria_met(&set(&[2])));
        // Nothing succeeded: nothing matches.
        assert!(!j.success_criteria_met(&set(&[])));
    }

    #[test]
    fn index_intervals_parse_as_validate_indexes_format() {
        assert_eq!(
            parse_indexes("1,3-5,7", 10),
            Ok((vec![(1, 1), (3, 5), (7, 7)], 5))
        );
        for (text, error) in [
            ("3-1", "non-increasing order, previous: 3, current: 1"),
            ("10", "too large index: \"10\""),
            ("a", "cannot convert string to integer for index: \"a\""),
            (
                "1-2-3",
                "the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts separated by '-'",
            ),
            ("2,1", "non-increasing order, previous: 2, current: 1"),
        ] {
            assert_eq!(parse_indexes(text, 10).unwrap_err(), error, "{text}");
        }
    }

    #[test]
    fn jobset_success_policy_counts_the_targets() {
        let c = |rjob: &str| ChildJob {
            replicated_job: Some(rjob.into()),
            ..job(Some(1), 1, Vec::new())
        };
        let jobs = [c("leader"), c("workers"), c("workers")];
        let all = SetPolicy::default();
        assert_eq!(all.expected(&jobs), 3);
        let leader = SetPolicy {
            any: false,
            targets: vec!["leader".into()],
        };
        assert_eq!(leader.expected(&jobs), 1);
        assert!(leader.targets(&jobs[0]) && !leader.targets(&jobs[1]));
        let any = SetPolicy {
            any: true,
            targets: Vec::new(),
        };
        assert_eq!(any.expected(&jobs), 1);
    }
}
