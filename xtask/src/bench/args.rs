//! The arguments of `cargo xtask bench`.

pub(super) const USAGE: &str = "usage: cargo xtask bench [--sizes 10,1000,10000] [--runs N] [--slow-runs N] [--no-peers] [--no-inproc] [--fixture] [--before REV]";

pub(super) struct Options {
    pub(super) sizes: Vec<usize>,
    pub(super) runs: usize,
    pub(super) slow_runs: usize,
    pub(super) peers: bool,
    pub(super) inproc: bool,
    pub(super) fixture_only: bool,
    /// A revision to measure against (size, build cost, cold start), exported with `git archive`.
    pub(super) before: Option<String>,
}

pub(super) fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        sizes: vec![10, 1000, 10000],
        runs: 30,
        slow_runs: 5,
        peers: true,
        inproc: true,
        fixture_only: false,
        before: None,
    };
    let number = |v: Option<&String>, what: &str| -> Result<usize, String> {
        v.and_then(|s| s.parse().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{what} needs a positive number ({USAGE})"))
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                let list = it
                    .next()
                    .ok_or(format!("--sizes needs a value ({USAGE})"))?;
                o.sizes = list
                    .split(',')
                    .map(|s| s.trim().parse::<usize>().ok().filter(|&n| n > 5))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("--sizes takes numbers above 5, comma-separated")?;
                o.sizes.sort_unstable();
                o.sizes.dedup();
            }
            "--runs" => o.runs = number(it.next(), "--runs")?,
            "--slow-runs" => o.slow_runs = number(it.next(), "--slow-runs")?,
            "--no-peers" => o.peers = false,
            "--no-inproc" => o.inproc = false,
            "--fixture" => o.fixture_only = true,
            "--before" => {
                o.before = Some(
                    it.next()
                        .ok_or(format!("--before needs a revision ({USAGE})"))?
                        .clone(),
                )
            }
            s => return Err(format!("unexpected argument `{s}` ({USAGE})")),
        }
    }
    Ok(o)
}
