//! Statistics and timing: medians of repeated runs, wall time (hyperfine or our own loop),
//! peak RSS and instruction counts.

use super::process::{capture, command, display};
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Instant;

/// Median, min and max of repeated measurements.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stat {
    pub(super) median: f64,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) runs: usize,
}

impl Stat {
    /// A single measurement.
    pub(super) fn one(v: f64) -> Stat {
        Stat {
            median: v,
            min: v,
            max: v,
            runs: 1,
        }
    }

    pub(super) fn of(mut v: Vec<f64>) -> Option<Stat> {
        v.retain(|x| x.is_finite());
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: v[0],
            max: v[n - 1],
            runs: n,
        })
    }
}

/// How processes are timed: hyperfine when installed, else a loop of our own.
pub(super) struct Timer {
    pub(super) hyperfine: Option<String>,
    pub(super) time_v: bool,
    pub(super) valgrind: Option<String>,
    pub(super) scratch: PathBuf,
}

impl Timer {
    pub(super) fn detect(scratch: &Path) -> Timer {
        let version = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|a| (*a).to_string()).collect();
            capture(&argv)
                .ok()
                .and_then(|o| o.lines().next().map(str::to_string))
        };
        let timer = Timer {
            hyperfine: version(&["hyperfine", "--version"]),
            time_v: Path::new("/usr/bin/time").exists(),
            valgrind: version(&["valgrind", "--version"]),
            scratch: scratch.to_path_buf(),
        };
        if timer.hyperfine.is_none() {
            eprintln!("note: hyperfine is not installed (`apt-get install hyperfine`); timing with a loop of our own");
        }
        if !timer.time_v {
            eprintln!(
                "note: /usr/bin/time is missing (`apt-get install time`); peak RSS is not measured"
            );
        }
        timer
    }

    /// Wall time of whole runs of `argv`, in seconds (`warmup` runs first, not counted).
    pub(super) fn wall(&self, argv: &[String], runs: usize, warmup: usize) -> Result<Stat, String> {
        let mut all = self.wall_many(&[argv.to_vec()], runs, warmup, 1)?;
        all.pop()
            .ok_or_else(|| format!("no timing for `{}`", display(argv)))
    }

    /// Wall times of several commands measured side by side: `rounds` rounds, each running
    /// every command in turn (`warmup` uncounted runs, then its share of `runs`), so that a
    /// change in the machine's load during the measurement hits every command alike.
    pub(super) fn wall_many(
        &self,
        argvs: &[Vec<String>],
        runs: usize,
        warmup: usize,
        rounds: usize,
    ) -> Result<Vec<Stat>, String> {
        let rounds = rounds.clamp(1, runs.max(1));
        let per = runs.div_ceil(rounds);
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); argvs.len()];
        for round in 1..=rounds {
            eprintln!(
                "\n==> time, round {round}/{rounds} ({per} runs each): {}",
                argvs
                    .iter()
                    .map(|a| display(a))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
            match &self.hyperfine {
                Some(_) => {
                    let json = self.scratch.join("hyperfine.json");
                    let status = Command::new("hyperfine")
                        .args(["-N", "--style", "basic", "--warmup"])
                        .arg(warmup.to_string())
                        .arg("--runs")
                        .arg(per.to_string())
                        .arg("--export-json")
                        .arg(&json)
                        .args(argvs.iter().map(|a| display(a)))
                        .stdin(Stdio::null())
                        .status()
                        .map_err(|e| format!("cannot run hyperfine: {e}"))?;
                    if !status.success() {
                        return Err("hyperfine failed".into());
                    }
                    let text = std::fs::read_to_string(&json).map_err(|e| e.to_string())?;
                    let v: serde_json::Value = serde_json::from_str(&text)
                        .map_err(|e| format!("hyperfine's JSON: {e}"))?;
                    for (i, t) in times.iter_mut().enumerate() {
                        let got = v["results"][i]["times"]
                            .as_array()
                            .ok_or("hyperfine's JSON has no times")?;
                        t.extend(got.iter().filter_map(serde_json::Value::as_f64));
                    }
                }
                None => {
                    for run in 0..warmup + per {
                        for (argv, t) in argvs.iter().zip(times.iter_mut()) {
                            let start = Instant::now();
                            let status = command(argv)?
                                .stdin(Stdio::null())
                                .stdout(Stdio::null())
                                .stderr(Stdio::null())
                                .status()
                                .map_err(|e| format!("`{}`: cannot start: {e}", display(argv)))?;
                            let dt = start.elapsed().as_secs_f64();
                            if !status.success() {
                                return Err(format!("`{}` failed ({status})", display(argv)));
                            }
                            if run >= warmup {
                                t.push(dt);
                            }
                        }
                    }
                }
            }
        }
        times
            .into_iter()
            .zip(argvs)
            .map(|(t, argv)| {
                Stat::of(t).ok_or_else(|| format!("no timing for `{}`", display(argv)))
            })
            .collect()
    }

    /// Peak resident set size (KiB) and minor page faults of `argv` over `runs` runs (None
    /// without /usr/bin/time).
    pub(super) fn rss(&self, argv: &[String], runs: usize) -> Result<Option<(Stat, Stat)>, String> {
        if !self.time_v {
            return Ok(None);
        }
        let (mut kib, mut faults) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let out = Command::new("/usr/bin/time")
                .arg("-v")
                .args(argv)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .output()
                .map_err(|e| format!("cannot run /usr/bin/time: {e}"))?;
            if !out.status.success() {
                return Err(format!("`{}` failed under /usr/bin/time", display(argv)));
            }
            let err = String::from_utf8_lossy(&out.stderr);
            let field = |name: &str| {
                err.lines()
                    .find_map(|l| l.trim().strip_prefix(name))
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .ok_or(format!("/usr/bin/time -v printed no `{name}`"))
            };
            kib.push(field("Maximum resident set size (kbytes):")?);
            faults.push(field("Minor (reclaiming a frame) page faults:")?);
        }
        Ok(Stat::of(kib).zip(Stat::of(faults)))
    }

    /// Instructions executed by one run of `argv` (callgrind), when valgrind is installed.
    pub(super) fn instructions(&self, argv: &[String]) -> Option<u64> {
        self.valgrind.as_ref()?;
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
            .ok()?;
        let err = String::from_utf8_lossy(&out.stderr);
        err.lines().find_map(|l| {
            let (_, v) = l.split_once("Collected :")?;
            v.trim().parse().ok()
        })
    }
}
