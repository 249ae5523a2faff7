//! `cargo xtask route-eval --data DIR [--out DIR] [--set NAME]... [--no-peers] [--no-write]`:
//! routing quality on
//! public labelled tool-retrieval data nobody here wrote, skillbake against standard BM25
//! libraries and DB-GPT's own matcher on the same packs, written to `BENCHMARKS.md` (between its
//! `route-eval:start`/`route-eval:end` markers).
//!
//! Steps:
//!
//! 1. `benches/route-eval/convert.py DATA OUT` turns the public data under `--data` (Gorilla's
//!    APIBench, ACEBench in English and Chinese; see that script and BENCHMARKS.md for the exact
//!    files and commits) into one skill pack per tool and a file of labelled requests per set,
//!    under `--out` (default `target/route-eval`); nothing of it is committed;
//! 2. skillbake: `skillbake_build::check` compiles each set's routing index exactly as a build
//!    does, and every request is routed in process through `skillbake_route::index::search`
//!    (the function `Registry::route` calls), timed one by one; an ablation rebuilds the index
//!    with every field weighted alike and without `when_not_to_use`;
//! 3. the peers (`benches/route-eval/peers.py`, installed into `target/route-eval-venv` from
//!    `benches/route-eval/requirements.txt`): bm25s with its defaults and with its README's
//!    stemming recipe, rank_bm25's `BM25Okapi`, DB-GPT's `SkillRegistry.match_skill`; a peer
//!    that does not install or run is reported as such, never replaced;
//! 4. Recall@1/5/10, MRR@10 and NDCG@10 of every system on every set, route latency, index size
//!    against the registry's text, and what the catalog costs in the prompt: all of it, or the
//!    top 5 candidates;
//! 5. speed at 100, 1,000 and 10,000 packs: synthetic packs with Zipf-distributed words
//!    ([`scale`]), the same steps (their recall only checks that the request's source pack is
//!    found).

mod metrics;
mod scale;

use crate::{root, run as run_step};
use metrics::{Metrics, Query};
use skillbake_build::__internal::{
    self as internal, build_fields_with, FieldTexts, GenOptions, Weights,
};
use skillbake_route::index::{query_terms, search, search_exhaustive, Index};
use skillbake_route::tokenize::Tokenizer;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const USAGE: &str =
    "usage: cargo xtask route-eval --data DIR [--out DIR] [--set NAME]... [--no-peers] [--no-write]";
const START: &str = "<!-- route-eval:start -->\n";
const END: &str = "<!-- route-eval:end -->";
/// How many results every system returns per request.
const TOP: usize = 10;
/// Runs per request when `search` and the exhaustive search are timed against each other.
const REPEATS: usize = 9;
/// The candidates the fine layer gets.
const CANDIDATES: usize = 5;

struct Options {
    data: PathBuf,
    out: PathBuf,
    peers: bool,
    write: bool,
    /// Only these sets (all when empty); a run of some sets never writes BENCHMARKS.md.
    sets: Vec<String>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut data = None;
    let mut out = root().join("target/route-eval");
    let (mut peers, mut write) = (true, true);
    let mut sets = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data" => data = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            "--out" => out = PathBuf::from(it.next().ok_or(USAGE)?),
            "--no-peers" => peers = false,
            "--no-write" => write = false,
            "--set" => sets.push(it.next().ok_or(USAGE)?.clone()),
            s => return Err(format!("unexpected argument `{s}` ({USAGE})")),
        }
    }
    let data = data.ok_or(format!(
        "--data is required: a folder with the public data (see benches/route-eval/convert.py) ({USAGE})"
    ))?;
    Ok(Options {
        data,
        out,
        peers,
        write: write && sets.is_empty(),
        sets,
    })
}

/// One system's answers on one set.
struct Run {
    ranked: BTreeMap<String, Vec<String>>,
    latency_ns: Vec<f64>,
    index_s: f64,
    version: String,
}

/// The search alone, as `search` runs it and exhaustive, in µs (see `SetResult::search_us`).
type SearchUs = (f64, f64);

/// A system's metrics, latency, index build seconds and version on one set.
type Scored = (Metrics, Latency, f64, String);

struct SetResult {
    name: String,
    packs: usize,
    queries: usize,
    systems: Vec<(String, Result<Scored, String>)>,
    index_bytes: usize,
    /// Median over the requests of each one's best of [`REPEATS`] runs, in µs: `search` (pruned
    /// where that is cheaper) and the exhaustive one (the search alone, the request's terms
    /// looked up beforehand).
    search_us: SearchUs,
    text_bytes: usize,
    catalog_tokens: usize,
    candidates_tokens: f64,
    misses: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct Latency {
    p50_us: f64,
    p99_us: f64,
}

fn latency(ns: &[f64]) -> Latency {
    let mut v = ns.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        if v.is_empty() {
            return 0.0;
        }
        let i = ((v.len() as f64 - 1.0) * q).round() as usize;
        v[i.min(v.len() - 1)] / 1000.0
    };
    Latency {
        p50_us: at(0.5),
        p99_us: at(0.99),
    }
}

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let opts = options(args)?;
    let root = root();
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| format!("cannot create `{}`: {e}", opts.out.display()))?;
    let python = if opts.peers {
        Some(ensure_venv(&root)?)
    } else {
        None
    };
    let convert = root.join("benches/route-eval/convert.py");
    let py = python.clone().unwrap_or_else(|| PathBuf::from("python3"));
    run_step(
        "benches/route-eval/convert.py (public data → packs and labelled requests)",
        Command::new(&py)
            .arg(&convert)
            .arg(&opts.data)
            .arg(&opts.out),
    )?;
    let mut results = Vec::new();
    let wanted = |set: &str| opts.sets.is_empty() || opts.sets.iter().any(|s| s == set);
    for n in [100usize, 1_000, 10_000] {
        let set = format!("scale-{n}");
        if wanted(&set) {
            scale::generate(&opts.out.join(&set), n)?;
        }
    }
    let sets = [
        "apibench-torchhub",
        "apibench-tensorflowhub",
        "apibench-huggingface",
        "acebench-en",
        "acebench-zh",
        "scale-100",
        "scale-1000",
        "scale-10000",
    ];
    for set in sets.into_iter().filter(|s| wanted(s)) {
        let dir = opts.out.join(set);
        if !dir.join("queries.jsonl").exists() {
            eprintln!("route-eval: {set}: no data, skipped");
            continue;
        }
        eprintln!("\n==> {set}");
        results.push(eval_set(set, &dir, python.as_deref(), &root)?);
    }
    let md = markdown(&results, &opts);
    println!("{md}");
    for r in &results {
        let path = opts.out.join(&r.name).join("misses.md");
        let _ = std::fs::write(&path, r.misses.join("\n"));
        eprintln!(
            "route-eval: misses of skillbake on {}: {}",
            r.name,
            path.display()
        );
    }
    if opts.write {
        let path = root.join("BENCHMARKS.md");
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let new = match (old.find(START), old.find(END)) {
            (Some(s), Some(e)) if s < e => format!("{}{START}{md}{}", &old[..s], &old[e..]),
            _ => format!("{old}\n## Routing quality\n\n{START}{md}{END}\n"),
        };
        std::fs::write(&path, new).map_err(|e| format!("cannot write BENCHMARKS.md: {e}"))?;
        eprintln!("route-eval: BENCHMARKS.md updated");
    }
    Ok(())
}

fn ensure_venv(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join("target/route-eval-venv");
    let python = venv.join("bin/python");
    let req = root.join("benches/route-eval/requirements.txt");
    let peers = root.join("benches/peers/requirements.txt");
    let wanted = format!(
        "{}\n{}",
        std::fs::read_to_string(&req).map_err(|e| format!("`{}`: {e}", req.display()))?,
        std::fs::read_to_string(&peers).map_err(|e| format!("`{}`: {e}", peers.display()))?
    );
    let marker = venv.join("skillbake-route-eval-requirements.txt");
    if python.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) {
        return Ok(python);
    }
    run_step(
        "python3 -m venv target/route-eval-venv",
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
    )?;
    run_step(
        "pip install -r benches/route-eval/requirements.txt",
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&req),
    )?;
    std::fs::write(&marker, wanted).map_err(|e| format!("cannot write the venv marker: {e}"))?;
    Ok(python)
}

fn read_queries(dir: &Path) -> Result<Vec<Query>, String> {
    let text = std::fs::read_to_string(dir.join("queries.jsonl"))
        .map_err(|e| format!("`{}`: {e}", dir.display()))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("queries.jsonl: {e}"))?;
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        let relevant = v["relevant"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        out.push(Query {
            id: s("id"),
            query: s("query"),
            relevant,
        });
    }
    Ok(out)
}

/// The ablations of skillbake's ranking: name and weights.
fn variants() -> Vec<(&'static str, Weights)> {
    let mut flat = Weights::DEFAULT;
    for f in &mut flat.fields {
        *f = (1.0, 0.75);
    }
    flat.negative = false;
    vec![
        ("skillbake", Weights::DEFAULT),
        ("skillbake, fields unweighted", flat),
    ]
}

fn ours(
    names: &[String],
    fields: &[FieldTexts],
    buckets: &[&str],
    queries: &[Query],
    weights: &Weights,
) -> Result<(Run, Vec<u8>, SearchUs), String> {
    let t = Instant::now();
    let built = build_fields_with(fields, buckets, weights).map_err(|e| e.to_string())?;
    let index_s = t.elapsed().as_secs_f64();
    let index = Index::new(&built.bytes).ok_or("the built index does not parse")?;
    let mut tok = Tokenizer::new();
    let mut ranked = BTreeMap::new();
    let mut lat = Vec::new();
    for q in queries {
        let t = Instant::now();
        let terms = query_terms(&index, &mut tok, &q.query);
        let hits = search(&index, &terms, TOP, |_| true);
        lat.push(t.elapsed().as_nanos() as f64);
        // The search (pruned where that is cheaper) must answer exactly what scoring every
        // posting answers.
        if hits != search_exhaustive(&index, &terms, TOP, |_| true) {
            return Err(format!(
                "request `{}`: the search differs from the exhaustive one",
                q.id
            ));
        }
        ranked.insert(
            q.id.clone(),
            hits.iter()
                .filter_map(|h| names.get(h.doc as usize).cloned())
                .collect(),
        );
    }
    // The search alone, pruned against exhaustive, each request's best of REPEATS runs (which
    // filters out what other jobs on the machine cost).
    let terms: Vec<_> = queries
        .iter()
        .map(|q| query_terms(&index, &mut tok, &q.query))
        .collect();
    let median_best = |pruned: bool| {
        let mut v: Vec<f64> = terms
            .iter()
            .map(|t| {
                (0..REPEATS)
                    .map(|_| {
                        let start = Instant::now();
                        let hits = if pruned {
                            search(&index, t, TOP, |_| true)
                        } else {
                            search_exhaustive(&index, t, TOP, |_| true)
                        };
                        std::hint::black_box(hits);
                        start.elapsed().as_nanos() as f64 / 1000.0
                    })
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let search_us = (median_best(true), median_best(false));
    Ok((
        Run {
            ranked,
            latency_ns: lat,
            index_s,
            version: String::new(),
        },
        built.bytes,
        search_us,
    ))
}

fn eval_set(
    set: &str,
    dir: &Path,
    python: Option<&Path>,
    root: &Path,
) -> Result<SetResult, String> {
    let packs_dir = dir.join("packs");
    let checked = skillbake_build::check(&packs_dir, &skillbake_build::CheckOptions::default());
    let errors = checked.report.errors();
    if errors > 0 {
        eprintln!("route-eval: {set}: {errors} pack errors (the packs are still indexed)");
    }
    let mut skills: Vec<&internal::Skill> = internal::skills(&checked).iter().collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<String> = skills.iter().map(|s| s.name.clone()).collect();
    let fields: Vec<FieldTexts> = skills.iter().map(|s| FieldTexts::of(s)).collect();
    let buckets: Vec<&str> = skills.iter().map(|s| s.route.bucket.as_str()).collect();
    let queries = read_queries(dir)?;
    let mut runs: Vec<(String, Result<Run, String>)> = Vec::new();
    let mut index_bytes = 0;
    let mut search_us = (0.0, 0.0);
    for (name, w) in variants() {
        let (run, bytes, us) = ours(&names, &fields, &buckets, &queries, &w)?;
        if name == "skillbake" {
            index_bytes = bytes.len();
            search_us = us;
        }
        runs.push((name.to_string(), Ok(run)));
    }
    // The registry's text for the same packs, to set the index's size against.
    let generated = internal::generate(
        internal::skills(&checked),
        &GenOptions {
            runtime_path: "::skillbake".into(),
            location_prefix: "skills".into(),
            signature: None,
        },
    )
    .map_err(|e| e.to_string())?;
    if let Some(python) = python {
        let out = dir.join("peers.json");
        let status = Command::new(python)
            .arg(root.join("benches/route-eval/peers.py"))
            .arg(dir)
            .arg(&out)
            .status()
            .map_err(|e| format!("peers.py: {e}"))?;
        if status.success() {
            let text = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            for (name, sys) in v["systems"].as_object().into_iter().flatten() {
                if let Some(err) = sys["error"].as_str() {
                    runs.push((name.clone(), Err(err.to_string())));
                    continue;
                }
                let ranked = sys["ranked"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| {
                                let list = v
                                    .as_array()
                                    .map(|a| {
                                        a.iter()
                                            .filter_map(|x| x.as_str().map(str::to_string))
                                            .collect()
                                    })
                                    .unwrap_or_default();
                                (k.clone(), list)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let latency_ns = sys["latency_ns"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
                    .unwrap_or_default();
                runs.push((
                    name.clone(),
                    Ok(Run {
                        ranked,
                        latency_ns,
                        index_s: sys["index_s"].as_f64().unwrap_or(0.0),
                        version: sys["version"].as_str().unwrap_or("?").to_string(),
                    }),
                ));
            }
        } else {
            runs.push(("peers".into(), Err(format!("peers.py failed ({status})"))));
        }
    }
    let mut systems = Vec::new();
    let mut misses = Vec::new();
    for (name, run) in runs {
        let r = run.map(|run| {
            let m = metrics::evaluate(&queries, &run.ranked);
            if name == "skillbake" {
                misses = metrics::misses(&queries, &run.ranked, CANDIDATES);
            }
            (m, latency(&run.latency_ns), run.index_s, run.version)
        });
        systems.push((name, r));
    }
    // The prompt: every description, or only the top candidates'.
    let descr: BTreeMap<&str, &str> = skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    let all: Vec<&str> = names.iter().map(String::as_str).collect();
    let catalog_tokens = catalog_cost(&all, &descr);
    let candidates_tokens = candidates_cost(&names, &fields, &buckets, &queries, &descr)?;
    Ok(SetResult {
        name: set.to_string(),
        packs: skills.len(),
        queries: queries.len(),
        systems,
        index_bytes,
        search_us,
        text_bytes: generated.text.len(),
        catalog_tokens,
        candidates_tokens,
        misses,
    })
}

/// Estimated tokens of the `xml` catalog of `names`.
fn catalog_cost(names: &[&str], descr: &BTreeMap<&str, &str>) -> usize {
    let locs: Vec<String> = names
        .iter()
        .map(|n| format!("skills/{n}/SKILL.md"))
        .collect();
    let entries: Vec<skillbake_format::catalog::Entry<'_>> = names
        .iter()
        .zip(&locs)
        .map(|(n, loc)| skillbake_format::catalog::Entry {
            name: n,
            description: descr.get(n).copied().unwrap_or(""),
            location: loc,
            tags: &[],
        })
        .collect();
    let text =
        skillbake_format::catalog::render(skillbake_format::catalog::Format::Xml, &entries, None)
            .text;
    skillbake_format::tokens::estimate(&text)
}

/// Average estimated tokens of the `xml` catalog of the top candidates of each request.
fn candidates_cost(
    names: &[String],
    fields: &[FieldTexts],
    buckets: &[&str],
    queries: &[Query],
    descr: &BTreeMap<&str, &str>,
) -> Result<f64, String> {
    let built = build_fields_with(fields, buckets, &Weights::DEFAULT).map_err(|e| e.to_string())?;
    let index = Index::new(&built.bytes).ok_or("the built index does not parse")?;
    let mut tok = Tokenizer::new();
    let mut total = 0usize;
    for q in queries {
        let terms = query_terms(&index, &mut tok, &q.query);
        let hits = search(&index, &terms, CANDIDATES, |_| true);
        let top: Vec<&str> = hits
            .iter()
            .filter_map(|h| names.get(h.doc as usize).map(String::as_str))
            .collect();
        total += catalog_cost(&top, descr);
    }
    Ok(total as f64 / queries.len().max(1) as f64)
}

fn pct(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

fn markdown(results: &[SetResult], opts: &Options) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Generated by `cargo xtask route-eval --data DIR` ({}); every system answers the same \
         requests over the same packs. Recall@k: share of requests with a right tool among the \
         first k; MRR@10 and NDCG@10 over the first 10. Latency per request, in process, one \
         request at a time (skillbake: tokenizing, term lookup and the top-10 search, pruned \
         where that is cheaper than scoring every posting, whose answer to every request is checked equal to the exhaustive search's).\n",
        if opts.peers {
            "peers included"
        } else {
            "without the Python peers"
        }
    );
    for r in results {
        let _ = writeln!(
            md,
            "### {} ({} packs, {} requests)\n",
            r.name, r.packs, r.queries
        );
        let _ = writeln!(
            md,
            "| system | R@1 | R@5 | R@10 | MRR@10 | NDCG@10 | p50 µs | p99 µs | index s |"
        );
        let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (name, res) in &r.systems {
            match res {
                Ok((m, l, idx, v)) => {
                    let _ = writeln!(
                        md,
                        "| {name} {v} | {} | {} | {} | {:.3} | {:.3} | {:.1} | {:.1} | {:.2} |",
                        pct(m.recall[0]),
                        pct(m.recall[1]),
                        pct(m.recall[2]),
                        m.mrr,
                        m.ndcg,
                        l.p50_us,
                        l.p99_us,
                        idx
                    );
                }
                Err(e) => {
                    let _ = writeln!(md, "| {name} | did not run: {e} | | | | | | | |");
                }
            }
        }
        let _ = writeln!(
            md,
            "\nIndex: {} bytes, {:.1}% of the registry's text ({} bytes). Prompt cost (estimated \
             tokens): every description {}, the top {CANDIDATES} candidates {:.0} on average \
             ({:.1}%). The search alone (median over the requests of each one's best of \
             {REPEATS} runs): `search` {:.1} µs (pruned where that is cheaper), every posting scored \
             {:.1} µs ({:.2}×).\n",
            r.index_bytes,
            100.0 * r.index_bytes as f64 / r.text_bytes.max(1) as f64,
            r.text_bytes,
            r.catalog_tokens,
            r.candidates_tokens,
            100.0 * r.candidates_tokens / r.catalog_tokens.max(1) as f64,
            r.search_us.0,
            r.search_us.1,
            r.search_us.0 / r.search_us.1.max(f64::MIN_POSITIVE)
        );
    }
    md
}
