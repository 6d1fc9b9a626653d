//! `schedsim resolve SCENARIO`: the pods each TrainJob becomes — per replicated job the pod
//! count and the final PodTemplateSpec, and with `--explain` where every field came from.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::Value;

use crate::error::exit_code;
use crate::load::LoadOptions;
use crate::report::yaml;
use crate::resolve::build::{DependsOnStatus, ResolvedTrainJob};
use crate::resolve::smp::Schema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Yaml,
    Json,
}

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// Scenario file(s).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Only this TrainJob (`name` or `namespace/name`).
    #[arg(long)]
    pub job: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
    /// Say for every field where it came from: `runtime`, `podTemplateOverrides[i]`, a
    /// TrainJob field, the ML policy, JobSet, or defaulting.
    #[arg(long)]
    pub explain: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Output {
    train_jobs: Vec<TrainJobOut>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TrainJobOut {
    name: String,
    namespace: String,
    runtime: String,
    /// `runtimePatches` / `templateOverrides` entries with their (stamped) time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    managers: Vec<ManagerOut>,
    replicated_jobs: Vec<JobOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct ManagerOut {
    manager: String,
    time: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JobOut {
    name: String,
    replicas: i32,
    parallelism: i32,
    pods: i32,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    depends_on: BTreeMap<String, DependsOnStatus>,
    pod_template: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    provenance: Option<BTreeMap<String, String>>,
}

pub fn run(args: &ResolveArgs) -> i32 {
    let options = LoadOptions {
        provenance: args.explain,
        ..Default::default()
    };
    let loaded = match super::load_scenarios(&args.paths, &options) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let jobs: Vec<&ResolvedTrainJob> = loaded
        .scenarios
        .iter()
        .flat_map(|s| &s.train_jobs)
        .filter(|j| {
            args.job
                .as_deref()
                .is_none_or(|want| want == j.name || want == format!("{}/{}", j.namespace, j.name))
        })
        .collect();
    let mut code = if loaded.errors.is_empty() {
        exit_code::SUCCESS
    } else {
        exit_code::BAD_INPUT
    };
    if let Some(want) = &args.job
        && jobs.is_empty()
    {
        eprintln!(
            "error: no TrainJob named {want:?} in {}",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        code = exit_code::BAD_INPUT;
    }
    let text = match args.format {
        Format::Json => {
            let out = Output {
                train_jobs: jobs.iter().map(|j| to_output(j, args.explain)).collect(),
            };
            let mut s = serde_json::to_string_pretty(&out).expect("serializes");
            s.push('\n');
            s
        }
        Format::Yaml => render_yaml(&jobs),
    };
    print!("{text}");
    code
}

fn to_output(j: &ResolvedTrainJob, explain: bool) -> TrainJobOut {
    TrainJobOut {
        name: j.name.clone(),
        namespace: j.namespace.clone(),
        runtime: j.runtime.clone(),
        managers: j
            .stamps
            .iter()
            .map(|(manager, time)| ManagerOut {
                manager: manager.clone(),
                time: time.clone(),
            })
            .collect(),
        replicated_jobs: j
            .jobs
            .iter()
            .map(|r| JobOut {
                name: r.name.clone(),
                replicas: r.replicas,
                parallelism: r.parallelism,
                pods: r.pod_count(),
                depends_on: r.depends_on.iter().cloned().collect(),
                pod_template: r.pod_template.value().into_owned(),
                provenance: explain.then(|| r.provenance.clone()),
            })
            .collect(),
        warnings: j.warnings.clone(),
    }
}

/// YAML with the provenance as end-of-line comments (empty when not explaining).
fn render_yaml(jobs: &[&ResolvedTrainJob]) -> String {
    let mut out = String::from("trainJobs:\n");
    for j in jobs {
        let _ = writeln!(
            out,
            "- name: {}",
            yaml::scalar(&Value::String(j.name.clone()))
        );
        let _ = writeln!(
            out,
            "  namespace: {}",
            yaml::scalar(&Value::String(j.namespace.clone()))
        );
        let _ = writeln!(
            out,
            "  runtime: {}",
            yaml::scalar(&Value::String(j.runtime.clone()))
        );
        if !j.stamps.is_empty() {
            let _ = writeln!(out, "  managers:");
            for (m, t) in &j.stamps {
                let _ = writeln!(out, "  - {{manager: {m}, time: \"{t}\"}}");
            }
        }
        if !j.warnings.is_empty() {
            let _ = writeln!(out, "  warnings:");
            for w in &j.warnings {
                let _ = writeln!(out, "  - {}", yaml::scalar(&Value::String(w.clone())));
            }
        }
        let _ = writeln!(out, "  replicatedJobs:");
        for r in &j.jobs {
            let _ = writeln!(
                out,
                "  - name: {}",
                yaml::scalar(&Value::String(r.name.clone()))
            );
            let _ = writeln!(out, "    replicas: {}", r.replicas);
            let _ = writeln!(out, "    parallelism: {}", r.parallelism);
            let _ = writeln!(out, "    pods: {}", r.pod_count());
            if !r.depends_on.is_empty() {
                let _ = writeln!(out, "    dependsOn:");
                for (d, status) in &r.depends_on {
                    let _ = writeln!(out, "    - {{name: {d}, status: {status:?}}}");
                }
            }
            let _ = writeln!(out, "    podTemplate:");
            out.push_str(&yaml::render(
                &r.pod_template.value(),
                Some(Schema::PodTemplateSpec),
                &r.provenance,
                6,
            ));
        }
    }
    out
}
