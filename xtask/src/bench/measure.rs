//! Measurements: same answers from every loader, cold start, each loader's own breakdown and
//! `check` throughput.

use super::args::Options;
use super::packs::PackSet;
use super::peers::Peers;
use super::process::{capture, display, s};
use super::timing::{Stat, Timer};
use super::{PROBE, PROBE_PATH};
use std::path::Path;

/// Whether the peers' replies equal skillbake's, byte for byte.
pub(super) struct Agreement {
    pub(super) reply_bytes: usize,
    pub(super) loader: bool,
    pub(super) dbgpt: Option<bool>,
}

pub(super) fn same_answers(
    set: &PackSet,
    bin: &Path,
    loader: &Path,
    peers: &Peers,
) -> Result<Agreement, String> {
    let ours = capture(&[s(bin), "load".into(), PROBE.into(), PROBE_PATH.into()])?;
    let theirs = capture(&[s(loader), s(&set.dir), PROBE.into(), PROBE_PATH.into()])?;
    if ours != theirs {
        return Err(format!(
            "the Rust run-time loader answers differently from skillbake on {} packs",
            set.packs
        ));
    }
    let dbgpt = match peers.dbgpt {
        Ok(_) => Some(peers.py(&["load", &s(&set.dir), PROBE, PROBE_PATH])? == ours),
        Err(_) => None,
    };
    Ok(Agreement {
        reply_bytes: ours.trim_end().len(),
        loader: true,
        dbgpt,
    })
}

/// One system's whole-process figures.
pub(super) struct Proc {
    pub(super) wall: Stat,
    /// Peak RSS in KiB.
    pub(super) rss: Option<Stat>,
    /// Minor page faults.
    pub(super) faults: Option<Stat>,
    /// Instructions of one run (callgrind).
    pub(super) ir: Option<u64>,
}

pub(super) struct Cold {
    pub(super) packs: usize,
    pub(super) floor: Proc,
    pub(super) ours: Proc,
    /// `skillbake cat` of the probe's script.
    pub(super) cat: Proc,
    /// `skillbake load` built from the `--before` revision.
    pub(super) before: Option<Proc>,
    pub(super) loader: Proc,
    pub(super) dbgpt: Option<Proc>,
}

/// The file `cat` writes in the cold-start runs.
pub(super) const CAT_PATH: &str = "scripts/run.py";

#[allow(clippy::too_many_arguments)]
pub(super) fn measure_cold(
    timer: &Timer,
    opts: &Options,
    set: &PackSet,
    bin: &Path,
    before: Option<&Path>,
    floor: &Path,
    loader: &Path,
    peers: &Peers,
) -> Result<Cold, String> {
    let floor_argv = vec![s(floor)];
    let ours_argv = vec![s(bin), "load".into(), PROBE.into(), PROBE_PATH.into()];
    let loader_argv = vec![s(loader), s(&set.dir), PROBE.into(), PROBE_PATH.into()];
    let cat_argv = vec![s(bin), "cat".into(), PROBE.into(), CAT_PATH.into()];
    let mut rust = vec![floor_argv, ours_argv, loader_argv, cat_argv];
    if let Some(b) = before {
        rust.push(vec![s(b), "load".into(), PROBE.into(), PROBE_PATH.into()]);
    }
    let walls = timer.wall_many(&rust, opts.runs, 2, 5)?;
    let mut procs = Vec::new();
    for (argv, wall) in rust.iter().zip(walls) {
        let measured = timer.rss(argv, 5.min(opts.runs))?;
        procs.push(Proc {
            wall,
            rss: measured.map(|m| m.0),
            faults: measured.map(|m| m.1),
            ir: timer.instructions(argv),
        });
    }
    let dbgpt = match peers.dbgpt {
        Ok(_) => {
            let argv = peers.argv(&["load", &s(&set.dir), PROBE, PROBE_PATH]);
            let measured = timer.rss(&argv, 3.min(opts.slow_runs))?;
            Some(Proc {
                wall: timer.wall(&argv, opts.slow_runs, 1)?,
                rss: measured.map(|m| m.0),
                faults: measured.map(|m| m.1),
                ir: None,
            })
        }
        Err(_) => None,
    };
    let mut procs = procs.into_iter();
    let (Some(floor), Some(ours), Some(loader), Some(cat)) =
        (procs.next(), procs.next(), procs.next(), procs.next())
    else {
        return Err("missing cold-start measurements".into());
    };
    Ok(Cold {
        packs: set.packs,
        floor,
        ours,
        cat,
        before: procs.next(),
        loader,
        dbgpt,
    })
}

/// A loader's own account of where its time goes (median of several runs per field).
pub(super) struct Breakdown {
    pub(super) import_s: Option<Stat>,
    pub(super) load_s: Stat,
    pub(super) first_s: Stat,
    pub(super) hit_ns: Stat,
    pub(super) ci_ns: Stat,
    pub(super) miss_ns: Stat,
}

pub(super) fn breakdown(argv: &[String], runs: usize) -> Result<Breakdown, String> {
    eprintln!("\n==> breakdown ({runs} runs): {}", display(argv));
    let mut rows = Vec::new();
    for _ in 0..runs {
        let out = capture(argv)?;
        let v: serde_json::Value = serde_json::from_str(out.trim())
            .map_err(|e| format!("`{}` printed no JSON: {e}", display(argv)))?;
        rows.push(v);
    }
    let field =
        |k: &str| -> Option<Stat> { Stat::of(rows.iter().filter_map(|r| r[k].as_f64()).collect()) };
    let need = |k: &str| field(k).ok_or_else(|| format!("`{}` reported no `{k}`", display(argv)));
    Ok(Breakdown {
        import_s: field("import_s"),
        load_s: need("load_s")?,
        first_s: need("first_answer_s")?,
        hit_ns: need("hit_ns")?,
        ci_ns: need("case_insensitive_ns")?,
        miss_ns: need("miss_ns")?,
    })
}

pub(super) struct Inside {
    pub(super) loader: Breakdown,
    pub(super) dbgpt: Option<Breakdown>,
}

pub(super) fn measure_inside(
    opts: &Options,
    set: &PackSet,
    loader: &Path,
    peers: &Peers,
) -> Result<Inside, String> {
    let argv = vec![
        s(loader),
        "--report".into(),
        s(&set.dir),
        PROBE.into(),
        PROBE_PATH.into(),
    ];
    let loader = breakdown(&argv, opts.slow_runs)?;
    let dbgpt = match peers.dbgpt {
        Ok(_) => Some(breakdown(
            &peers.argv(&["report", &s(&set.dir), PROBE, PROBE_PATH]),
            3.min(opts.slow_runs),
        )?),
        Err(_) => None,
    };
    Ok(Inside { loader, dbgpt })
}

pub(super) struct CheckRow {
    pub(super) packs: usize,
    pub(super) ours: Stat,
    pub(super) skills_ref: Option<Stat>,
    /// skills-ref's validation alone, without the interpreter's start and imports.
    pub(super) skills_ref_inside: Option<Stat>,
}

pub(super) fn measure_check(
    timer: &Timer,
    opts: &Options,
    set: &PackSet,
    bin: &Path,
    peers: &Peers,
) -> Result<CheckRow, String> {
    let ours = timer.wall(
        &[s(bin), "check".into(), s(&set.dir), "--quiet".into()],
        opts.slow_runs.max(5),
        1,
    )?;
    let (skills_ref, inside) = match peers.skills_ref {
        Ok(()) => {
            let whole = timer.wall(
                &peers.argv(&["skills-ref", &s(&set.dir)]),
                opts.slow_runs,
                1,
            )?;
            let mut v = Vec::new();
            for _ in 0..3.min(opts.slow_runs) {
                let out = peers.py(&["skills-ref-report", &s(&set.dir)])?;
                let j: serde_json::Value =
                    serde_json::from_str(out.trim()).map_err(|e| e.to_string())?;
                v.extend(j["validate_s"].as_f64());
            }
            (Some(whole), Stat::of(v))
        }
        Err(_) => (None, None),
    };
    Ok(CheckRow {
        packs: set.packs,
        ours,
        skills_ref,
        skills_ref_inside: inside,
    })
}
