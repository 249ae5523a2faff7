//! The machine the figures were measured on.

use super::peers::Peers;
use super::process::capture;
use super::timing::Timer;

pub(super) fn machine(timer: &Timer, peers: &Peers) -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|x| x.1))
        .map_or("unknown", str::trim)
        .to_string();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or("unknown".into(), |kib| {
            format!("{:.1} GiB", kib / 1024.0 / 1024.0)
        });
    let nproc = std::thread::available_parallelism().map_or(0, usize::from);
    let one = |argv: &[&str]| {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_string()).collect();
        capture(&argv)
            .ok()
            .and_then(|o| o.lines().next().map(str::to_string))
            .unwrap_or_else(|| "not installed".into())
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or("unknown".into(), |k| k.trim().to_string());
    let mut m = vec![
        ("CPU".into(), model),
        ("cores (nproc)".into(), nproc.to_string()),
        ("memory".into(), mem),
        ("kernel".into(), format!("Linux {kernel}")),
        ("rustc".into(), one(&["rustc", "--version"])),
        (
            "timing".into(),
            timer.hyperfine.clone().map_or(
                "own loop (hyperfine not installed), wall clock".into(),
                |v| format!("{v} (`-N`, no shell)"),
            ),
        ),
        (
            "peak RSS".into(),
            if timer.time_v {
                "`/usr/bin/time -v` (GNU time), maximum resident set size".into()
            } else {
                "not measured (/usr/bin/time missing)".into()
            },
        ),
        (
            "instructions".into(),
            timer.valgrind.clone().map_or("not measured".into(), |v| {
                format!("{v} `--tool=callgrind` (whole process)")
            }),
        ),
    ];
    if let Ok(v) = &peers.dbgpt {
        let get = |k: &str| v[k].as_str().unwrap_or("?").to_string();
        m.push((
            "Python peers".into(),
            format!(
                "Python {}, dbgpt {}, dbgpt-app {}, PyYAML {} (libyaml {}), skills-ref {}",
                get("python"),
                get("dbgpt"),
                get("dbgpt-app"),
                get("PyYAML"),
                if v["libyaml"].as_bool() == Some(true) {
                    "present"
                } else {
                    "absent"
                },
                get("skills-ref")
            ),
        ));
    }
    m
}

/// The one-minute load average (`/proc/loadavg`), to show how busy the machine was.
pub(super) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `N cores, load average A at the start and B at the end`, for a section's introduction.
pub(super) fn load_note(start: Option<f64>, end: Option<f64>) -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let shown = |v: Option<f64>| v.map_or("unknown".into(), |v| format!("{v:.1}"));
    format!(
        "{cores} cores, one-minute load average {} at the start and {} at the end",
        shown(start),
        shown(end)
    )
}
