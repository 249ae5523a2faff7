//! Routing end to end: the index compiled into `BUNDLED` answers `Registry::route`, the CLI's
//! `route` and `prompt --query`, and it equals the index `check` builds in process; buckets come
//! from folders or `bucket:`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake::{CatalogFormat, RouteOptions};
use skillbake_cli::BUNDLED;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

fn names(request: &str, top: usize) -> Vec<&'static str> {
    BUNDLED
        .route(request, top)
        .iter()
        .map(|r| r.skill.name())
        .collect()
}

#[test]
fn routes_bundled_requests_to_the_right_pack() {
    let cases = [
        (
            "email the quarterly report to the finance team",
            "send-email",
        ),
        (
            "profile this CSV file and show summary statistics",
            "csv-data-analysis",
        ),
        ("open an xlsx workbook and fix the formulas", "excel"),
        ("read the config file page by page", "read-file"),
        (
            "分析这家公司的财务报表并计算偿债能力",
            "financial-report-analyzer",
        ),
    ];
    for (request, want) in cases {
        assert_eq!(names(request, 3).first(), Some(&want), "{request}");
    }
}

#[test]
fn scores_fields_and_limits() {
    let top = BUNDLED.route("send an email with the report attached", 5);
    assert!(top.len() <= 5);
    assert!(top.windows(2).all(|w| w[0].score >= w[1].score));
    let first = &top[0];
    assert_eq!(first.skill.name(), "send-email");
    let fields: Vec<&str> = first.fields().collect();
    assert!(fields.contains(&"description"), "{fields:?}");
    assert!(BUNDLED.route("send an email", 0).is_empty());
    assert!(BUNDLED.route("", 5).is_empty());
    assert!(BUNDLED.route("zzqx qqzx", 5).is_empty());
    assert_eq!(BUNDLED.route("send an email", 1).len(), 1);
    // Any input, no panic.
    for s in [
        "\u{0}",
        "🦀🦀",
        "a-b-c-d-e-f",
        &"x".repeat(10_000),
        "ＣＳＶ",
    ] {
        let _ = BUNDLED.route(s, 3);
    }
}

#[test]
fn bundled_packs_sit_in_the_root_bucket() {
    assert_eq!(BUNDLED.buckets(), [""]);
    assert_eq!(BUNDLED.get("excel").unwrap().bucket(), "");
    let opts = RouteOptions {
        top: 5,
        bucket: Some("support"),
    };
    assert!(BUNDLED.route_with("send an email", opts).is_empty());
    assert!(BUNDLED.route_index_size() > 0);
}

#[test]
fn the_embedded_index_is_the_one_check_builds() {
    let checked = skillbake_build::check(
        std::path::Path::new("skills"),
        &skillbake_build::CheckOptions::default(),
    );
    let bytes = checked.route_index().expect("index");
    let index = skillbake_route::index::Index::new(bytes).unwrap();
    assert_eq!(bytes.len(), BUNDLED.route_index_size());
    let mut tok = skillbake_route::tokenize::Tokenizer::new();
    let request = "summarise the sales table by region";
    let terms = skillbake_route::index::query_terms(&index, &mut tok, request);
    let hits = skillbake_route::index::search(&index, &terms, 5, |_| true);
    let routed = BUNDLED.route(request, 5);
    assert_eq!(hits.len(), routed.len());
    for (h, r) in hits.iter().zip(&routed) {
        assert_eq!(BUNDLED.names().nth(h.doc as usize), Some(r.skill.name()));
        assert_eq!(h.score, r.score);
    }
}

#[test]
fn buckets_from_folders_and_frontmatter() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let pack = |dir: &str, name: &str, extra: &str, description: &str| {
        let d = root.join(dir).join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nSteps.\n"
            ),
        )
        .unwrap();
    };
    pack(
        "support",
        "refund-status",
        "",
        "Check whether a refund was paid out.",
    );
    pack(
        "support/billing",
        "invoice-copy",
        "",
        "Send a copy of an invoice.",
    );
    pack(
        "data",
        "sql-report",
        "bucket: analytics\n",
        "Run a SQL report on sales.",
    );
    pack("", "root-skill", "", "Anything at the root, a refund note.");
    let checked = skillbake_build::check(root, &skillbake_build::CheckOptions::default());
    assert!(
        !checked.report.has_errors(),
        "{:?}",
        checked.report.diagnostics
    );
    let bytes = checked.route_index().expect("index");
    let index = skillbake_route::index::Index::new(bytes).unwrap();
    // Documents are the packs in name order.
    let buckets: Vec<&str> = (0..index.docs()).map(|d| index.bucket_of(d)).collect();
    assert_eq!(buckets, ["support/billing", "support", "", "analytics"]);
    let mut tok = skillbake_route::tokenize::Tokenizer::new();
    let terms = skillbake_route::index::query_terms(&index, &mut tok, "refund invoice");
    let support = skillbake_route::index::search(&index, &terms, 5, |d| {
        skillbake::in_bucket(index.bucket_of(d), "support")
    });
    let docs: Vec<u32> = support.iter().map(|h| h.doc).collect();
    assert!(
        docs.contains(&0) && docs.contains(&1) && !docs.contains(&2),
        "{docs:?}"
    );
}

#[test]
fn when_not_to_use_counts_against_a_pack() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, extra: &str, description: &str| {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nSteps.\n"
            ),
        )
        .unwrap();
    };
    write(
        "order-status",
        "when_not_to_use: refunds and payouts\n",
        "Look up the status of a customer order.",
    );
    write(
        "refund-status",
        "",
        "Look up the status of a customer refund.",
    );
    let checked = skillbake_build::check(tmp.path(), &skillbake_build::CheckOptions::default());
    let bytes = checked.route_index().expect("index");
    let index = skillbake_route::index::Index::new(bytes).unwrap();
    let mut tok = skillbake_route::tokenize::Tokenizer::new();
    let terms = skillbake_route::index::query_terms(&index, &mut tok, "status of my refund payout");
    let hits = skillbake_route::index::search(&index, &terms, 5, |_| true);
    // order-status (document 0) shares "status" but its when_not_to_use names refunds and payouts.
    assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [1]);
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().unwrap()
}

#[test]
fn cli_route_and_prompt_query() {
    let o = run(&[
        "route",
        "email the quarterly report to the finance team",
        "--top",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with(" 1. send-email "), "{text}");

    let o = run(&[
        "route",
        "email the quarterly report",
        "--format",
        "json",
        "--top",
        "3",
    ]);
    let json = String::from_utf8(o.stdout).unwrap();
    let opts = RouteOptions {
        top: 3,
        bucket: None,
    };
    assert_eq!(
        json.trim_end(),
        BUNDLED.route_json("email the quarterly report", opts)
    );

    let o = run(&["route", "zzqx"]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["route", "x", "--bucket", "support"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("no skill is in bucket `support`"));

    for format in ["xml", "dbgpt", "codex", "markdown"] {
        let o = run(&[
            "prompt",
            "--query",
            "profile a csv file",
            "--top",
            "1",
            "--format",
            format,
        ]);
        assert_eq!(o.status.code(), Some(0));
        let text = String::from_utf8(o.stdout).unwrap();
        let want = BUNDLED.route_catalog(
            "profile a csv file",
            RouteOptions {
                top: 1,
                bucket: None,
            },
            CatalogFormat::from_name(format).unwrap(),
        );
        assert_eq!(text.trim_end(), want);
        assert!(text.contains("csv-data-analysis"), "{format}: {text}");
        assert!(!text.contains("send-email"), "{format}: {text}");
    }
    let o = run(&["prompt", "--query", "send mail", "--budget", "10"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn candidates_catalog_carries_when_and_schema() {
    let xml = BUNDLED.route_catalog(
        "send the report by email",
        RouteOptions {
            top: 1,
            bucket: None,
        },
        CatalogFormat::Xml,
    );
    insta::assert_snapshot!("candidates-xml", xml);
}
