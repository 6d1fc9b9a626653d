//! `run --charts`: the SVG structure of each chart (its texts and how many cells it draws),
//! the PNGs, and a self-contained index.html.

mod common;

use common::cli::{ok, tempdir};

/// The texts of an SVG, in document order.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split("</text>").next()?.trim().to_string())
        })
        .collect()
}

#[test]
fn charts_have_their_labels_cells_and_pngs() {
    let out = tempdir("charts");
    ok(&[
        "run",
        "scenarios/gangs.yaml",
        "--charts",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let dir = out.join("gangs");
    let svg = |name: &str| std::fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap();
    let map = svg("placement-map");
    insta::assert_yaml_snapshot!("placement-map-texts", texts(&map));
    // 4 nodes x 8 GPUs, one rect per cell, plus the legend's 5 swatches and the background.
    assert_eq!(map.matches("<rect").count(), 32 + 5 + 1);
    insta::assert_yaml_snapshot!("gpu-allocation-texts", texts(&svg("gpu-allocation")));
    insta::assert_yaml_snapshot!("pending-reasons-texts", texts(&svg("pending-reasons")));
    for name in ["placement-map", "gpu-allocation", "pending-reasons"] {
        let png = std::fs::read(dir.join(format!("{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png");
    }
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    // Its nvidia.com/gpu GPUs are devices too: the FGD fragmentation chart is the fourth.
    assert_eq!(index.matches("<svg").count(), 4);
    assert!(index.contains("<pre>Scenario gangs"));
    // Self-contained: no stylesheet, script or image is fetched.
    for external in ["<link", "<script", "src=\"http", "href=\"http"] {
        assert!(!index.contains(external), "{external}");
    }
    // The scenario leaves pods pending: its explain page is linked, and explains each.
    assert!(index.contains("<a href=\"explain-gangs.html\">"), "{index}");
    let page = std::fs::read_to_string(out.join("explain-gangs.html")).unwrap();
    for pending in ["ml/llm-pretrain-node-0-2", "ml/eval-no-gang-node-0-2"] {
        assert!(page.contains(&format!("<h2>{pending}</h2>")), "{pending}");
    }
    assert!(
        !page.contains("<h2>ml/finetune-node-0-0</h2>"),
        "a scheduled pod"
    );
    for external in ["http://", "https://", "<link", "src="] {
        assert!(!page.contains(external), "{external}");
    }
}

/// The FGD paper's fragmentation per pool, named apart from the allocation chart's
/// `fragmented` GPUs: allocated, usable and fragment milli add up to each pool's GPUs.
#[test]
fn the_gpu_share_chart_splits_free_milli_by_what_the_target_workload_can_use() {
    let out = tempdir("gpu-share-chart");
    ok(&[
        "run",
        "scenarios/gpu-sharing-fgd.yaml",
        "--charts",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(out.join("gpu-sharing-packing/gpu-share-fragmentation.svg"))
        .unwrap();
    let t = texts(&svg);
    for label in [
        "GPU milli per pool, FGD fragmentation",
        "t4 (T4)",
        "v100 (V100M16)",
        "allocated",
        "free, usable by the target workload",
        "FGD fragment (free, unusable by the target workload)",
    ] {
        assert!(t.iter().any(|x| x == label), "{label} not in {t:?}");
    }
    let allocation =
        std::fs::read_to_string(out.join("gpu-sharing-packing/gpu-allocation.svg")).unwrap();
    assert!(texts(&allocation).contains(&"fragmented (too few for any pending pod)".to_string()));
    // The JSON behind it: each pool's three parts add up to its GPUs (8 of 1000 milli).
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let s = &report["scenarios"][1];
    assert_eq!(s["name"], "gpu-sharing-packing");
    let f = &s["gpuShareFragmentation"];
    assert_eq!(
        (f["gpuMilli"].as_i64(), f["idleMilli"].as_i64()),
        (Some(16_000), Some(7_660))
    );
    assert_eq!(f["fragmentRatio"].as_f64(), Some(38.64));
}

#[test]
fn the_kueue_quota_chart_splits_usage_into_nominal_and_borrowed() {
    let out = tempdir("kueue-chart");
    ok(&[
        "run",
        "scenarios/kueue-cohort-borrowing.yaml",
        "--charts",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let dir = out.join("kueue-cohort-borrowing");
    let svg = std::fs::read_to_string(dir.join("kueue-quota.svg")).unwrap();
    let t = texts(&svg);
    for label in [
        "Kueue quota per ClusterQueue and flavor",
        "team-a · h100 · nvidia.com/gpu",
        "team-b · h100 · nvidia.com/gpu",
        "borrowed from the cohort",
    ] {
        assert!(t.iter().any(|x| x == label), "{label} not in {t:?}");
    }
    // team-a: 16 within nominal and 8 borrowed; team-b: 16 unused. The bars' widths by
    // colour, in drawing order (blue, orange, grey series; zero-width segments included).
    let widths = |fill: &str| -> Vec<u32> {
        (svg.split("<rect").skip(1))
            .filter(|r| r.contains(&format!("fill=\"{fill}\"")) && r.contains("height=\"39\""))
            .filter_map(|r| r.split("width=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect()
    };
    let (within, borrowed, unused) = (widths("#1F77B4"), widths("#FF7F0E"), widths("#E1E4E8"));
    assert_eq!(within.iter().max(), unused.iter().max(), "16 in both");
    assert_eq!(
        borrowed.iter().max().map(|b| b * 2),
        within.iter().max().copied()
    );
    assert!(dir.join("kueue-quota.png").exists());
}

/// `plan --charts`: the cost frontier marks every simulated point, the per-candidate chart
/// has a line per candidate with points, the removal bars add up to each group's nodes, and
/// plan.html holds them all, self-contained.
#[test]
fn plan_charts_show_the_frontier_and_the_removals() {
    let out = tempdir("plan-charts");
    ok(&[
        "plan",
        "scenarios/plan-gpu-nodes.yaml",
        "scenarios/plan-consolidate.yaml",
        "--charts",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    let plans = report["plans"].as_array().unwrap();
    let add = (plans.iter())
        .find(|p| p["name"] == "plan-gpu-nodes")
        .unwrap();
    let frontier = common::cli::chart_svg(&out.join("plan-gpu-nodes-plan"), "cost-frontier");
    let labels = texts(&frontier);
    assert!(labels.iter().any(|t| t == "simulated points"), "{labels:?}");
    assert!(labels.iter().any(|t| t == "answer"));
    // One mark per simulated point, per frontier point and for the answer.
    let marks =
        add["points"].as_array().unwrap().len() + add["frontier"].as_array().unwrap().len() + 1;
    assert_eq!(frontier.matches("<circle").count(), marks);
    let per = common::cli::chart_svg(&out.join("plan-gpu-nodes-plan"), "per-candidate");
    assert!(texts(&per).iter().any(|t| t == "a100"));
    let removal = common::cli::chart_svg(&out.join("plan-consolidate-plan"), "removal");
    let labels = texts(&removal);
    for group in ["cpu", "gpu"] {
        assert!(labels.iter().any(|t| t == group), "{labels:?}");
    }
    let page = std::fs::read_to_string(out.join("plan.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 3);
    assert!(page.contains("<pre>Plan plan-consolidate") && page.contains("\nPlan plan-gpu-nodes"));
    for external in ["<link", "<script", "src=\"http", "href=\"http"] {
        assert!(!page.contains(external), "{external}");
    }
}
