//! Reports for CI: JUnit XML (one test case per expectation), a Markdown summary for
//! `$GITHUB_STEP_SUMMARY`, and a CSV of pod placements.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::ScenarioReport;

/// The verdict on one expectation: empty `failures` means met.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub title: String,
    pub path: String,
    pub at: String,
    pub failures: Vec<String>,
}

impl Verdict {
    pub fn met(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The verdicts of each scenario, by scenario name and file.
pub type Checked<'a> = [(&'a ScenarioReport, Vec<Verdict>)];

pub fn junit(checked: &Checked<'_>) -> String {
    let mut report = Report::new("schedsim check");
    for (scenario, verdicts) in checked {
        let mut suite = TestSuite::new(format!("{} ({})", scenario.name, scenario.file));
        for v in verdicts {
            let status = if v.met() {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(v.failures.join("; "));
                s.set_description(v.failures.join("\n"));
                s
            };
            let mut case = TestCase::new(v.title.clone(), status);
            case.set_classname(format!("{} {}", v.at, v.path));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- JUnit serialization failed: {e} -->\n"))
}

/// `| ✅ | scenario | expectation | details |` rows, failures first in each scenario.
pub fn markdown(checked: &Checked<'_>) -> String {
    let total: usize = checked.iter().map(|(_, v)| v.len()).sum();
    let failed: usize = checked
        .iter()
        .map(|(_, v)| v.iter().filter(|v| !v.met()).count())
        .sum();
    let mut out = format!(
        "## schedsim check: {} of {total} expectation(s) met\n\n",
        total - failed
    );
    if total == 0 {
        out.push_str("No scenario has expectations (`spec.expect`).\n");
        return out;
    }
    out.push_str("| | Scenario | Expectation | Details |\n|---|---|---|---|\n");
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', "<br>");
    for (scenario, verdicts) in checked {
        let mut sorted: Vec<&Verdict> = verdicts.iter().collect();
        sorted.sort_by_key(|v| v.met());
        for v in sorted {
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                if v.met() { "✅" } else { "❌" },
                cell(&scenario.name),
                cell(&format!("{} ({})", v.title, v.at)),
                cell(&v.failures.join("\n"))
            ));
        }
    }
    out
}

/// One row per pod: scenario, namespace, pod, workload, status, node, pool, GPU product,
/// message.
pub fn placements_csv(reports: &[&ScenarioReport]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "scenario",
        "namespace",
        "pod",
        "workload",
        "status",
        "node",
        "pool",
        "gpu_product",
        "message",
    ]);
    for r in reports {
        for p in &r.pods {
            let node = p
                .node
                .as_ref()
                .and_then(|n| r.nodes.iter().find(|x| &x.name == n));
            let _ = w.write_record([
                r.name.as_str(),
                &p.namespace,
                &p.name,
                p.workload.as_deref().unwrap_or(""),
                &format!("{:?}", p.status),
                p.node.as_deref().unwrap_or(""),
                node.map_or("", |n| n.pool.as_str()),
                node.and_then(|n| n.gpu_product.as_deref()).unwrap_or(""),
                &p.message,
            ]);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
