//! The report's build-cost parts: binary size against the packs' bytes, peak memory of rustc and
//! of the build script, the build script's time full / unchanged / after one edit — for this tree
//! and, with `--before`, the earlier revision.

use super::build_cost::{ScriptCost, EDITED};
use super::builds::Built;
use super::report::{mib, size, t, thousands, ts, verdict, x, Report};
use super::timing::Stat;
use std::fmt::Write as _;

const GIB: f64 = 1024.0 * 1024.0;

/// Growth of each binary over the smallest set's, against the growth of the packs' bytes.
fn growth(builds: &[Built], raw: &[u64], i: usize) -> Option<(f64, f64)> {
    if i == 0 || builds.len() <= i {
        return None;
    }
    let g = builds[i].bytes as f64 - builds[0].bytes as f64;
    let r = raw[i] as f64 - raw[0] as f64;
    Some((g, r))
}

/// The largest single process of a build: rustc (library or binary) or the build script.
fn peak(b: &Built, script: &ScriptCost) -> (f64, &'static str) {
    let lib = b.library_kib().unwrap_or(0) as f64;
    let bin = b.rustc_kib("skillbake:bin").unwrap_or(0) as f64;
    let scr = script.full_kib.median;
    if lib >= bin && lib >= scr {
        (lib, "rustc, library")
    } else if bin >= scr {
        (bin, "rustc, binary")
    } else {
        (scr, "build script")
    }
}

fn gib(kib: f64) -> String {
    format!("{:.2} GiB", kib / GIB)
}

fn kib_cell(kib: Option<u64>) -> String {
    kib.map_or("–".into(), |k| mib(Some(&Stat::one(k as f64))))
}

impl Report<'_> {
    fn raw(&self) -> Vec<u64> {
        self.sets.iter().map(|s| s.bytes).collect()
    }

    pub(super) fn size_targets(&self, m: &mut String) {
        let raw = self.raw();
        for (i, set) in self.sets.iter().enumerate() {
            if set.packs < 1000 {
                continue;
            }
            let Some((g, r)) = growth(self.builds, &raw, i) else {
                continue;
            };
            let before = growth(self.before_builds, &raw, i).map_or(String::new(), |(bg, br)| {
                format!("; before: {} ({})", size(bg), x(bg / br))
            });
            let _ = writeln!(
                m,
                "| binary growth ≤ 1.1× the packs' bytes, {} packs (over the {}-pack binary) | {} for {} of packs ({}){before} | {} |",
                thousands(set.packs),
                thousands(self.sets[0].packs),
                size(g),
                size(r),
                x(g / r),
                verdict(g / r <= 1.1)
            );
        }
    }

    pub(super) fn build_targets(&self, m: &mut String) {
        let Some(i) = self.sets.len().checked_sub(1) else {
            return;
        };
        let (Some(b), Some((script, old))) = (self.builds.get(i), self.scripts.get(i)) else {
            return;
        };
        let packs = thousands(self.sets[i].packs);
        let (kib, what) = peak(b, script);
        let before = match (self.before_builds.get(i), old) {
            (Some(ob), Some(os)) => {
                let (k, w) = peak(ob, os);
                format!("; before: {} ({w})", gib(k))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            m,
            "| build peak memory ≤ 1.5 GiB (build script and rustc), {packs} packs | {} ({what}): rustc library {}, binary {}, build script {}{before} | {} |",
            gib(kib),
            kib_cell(b.library_kib()),
            kib_cell(b.rustc_kib("skillbake:bin")),
            mib(Some(&script.full_kib)),
            verdict(kib <= 1.5 * GIB)
        );
        let r = script.edit_s.median / script.full_s.median;
        let before = old.as_ref().map_or(String::new(), |o| {
            format!(
                "; before: {} after an edit, {} full",
                t(o.edit_s.median),
                t(o.full_s.median)
            )
        });
        let _ = writeln!(
            m,
            "| incremental: build script after editing one pack ≤ 10% of a full run, {packs} packs; output identical to a full build | {} vs {} ({:.1}%); output {}{before} | {} |",
            t(script.edit_s.median),
            t(script.full_s.median),
            r * 100.0,
            if script.identical { "identical" } else { "**differs**" },
            verdict(r <= 0.10 && script.identical)
        );
        if let Some(floor) = &script.walk_floor_s {
            let _ = writeln!(
                m,
                "| (the floor under it: walking the {packs} packs and stamping every file, nothing built) | {} ({:.1}% of a full run, {:.0}% of the edited run) | |",
                t(floor.median),
                floor.median / script.full_s.median * 100.0,
                floor.median / script.edit_s.median * 100.0,
            );
        }
    }

    pub(super) fn build_tables(&self, m: &mut String) {
        if self.builds.is_empty() {
            return;
        }
        let (after, before) = self.trees;
        let revs = match before {
            Some(b) => format!(
                "**after** is this tree ({}), **before** is {} (`--before`), built and measured \
                 in the same run",
                after.rev, b.rev
            ),
            None => format!(
                "this tree ({}); run with `--before REV` to compare",
                after.rev
            ),
        };
        let _ = writeln!(
            m,
            "## Build cost\n\n\
             `skillbake` in release mode (the workspace's profile: `lto = \"thin\"`, \
             `codegen-units = 1`) with each pack set compiled in, its dependencies built already, \
             rebuilt from its build script on; {revs}. Peak memory of each rustc run through a \
             `RUSTC_WRAPPER` that runs rustc under `/usr/bin/time`; the build script run alone \
             (the binary cargo compiled, with cargo's environment) under `/usr/bin/time`.\n"
        );
        let raw = self.raw();
        let _ = writeln!(m, "### Binary size\n");
        let _ = writeln!(
            m,
            "Growth is over the {}-pack binary, against the growth of the packs' bytes on disk.\n",
            thousands(self.sets[0].packs)
        );
        let _ = writeln!(
            m,
            "| packs | packs' bytes | before: binary | growth / packs' growth | after: binary | growth / packs' growth |\n|---:|---:|---:|---:|---:|---:|"
        );
        for (i, set) in self.sets.iter().enumerate() {
            let cell = |builds: &[Built]| -> (String, String) {
                let Some(b) = builds.get(i) else {
                    return ("–".into(), "–".into());
                };
                let g = growth(builds, &raw, i)
                    .map_or("–".into(), |(g, r)| format!("{} ({})", size(g), x(g / r)));
                (size(b.bytes as f64), g)
            };
            let (bb, bg) = cell(self.before_builds);
            let (ab, ag) = cell(self.builds);
            let _ = writeln!(
                m,
                "| {} | {} | {bb} | {bg} | {ab} | {ag} |",
                thousands(set.packs),
                size(set.bytes as f64)
            );
        }
        let _ = writeln!(m);

        let _ = writeln!(m, "### Build memory\n");
        let _ = writeln!(
            m,
            "Peak resident memory of each process: rustc compiling the library that embeds the \
             registry (`skillbake-cli`'s, whose build script generates it) and the `skillbake` \
             binary, and the build script on a full run.\n"
        );
        let _ = writeln!(
            m,
            "| packs | before: rustc library | rustc binary | build script | after: rustc library | rustc binary | build script | after: generated text + data | after: whole `cargo build` (largest process) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for (i, set) in self.sets.iter().enumerate() {
            let cells = |b: Option<&Built>, s: Option<&ScriptCost>| {
                (
                    kib_cell(b.and_then(Built::library_kib)),
                    kib_cell(b.and_then(|b| b.rustc_kib("skillbake:bin"))),
                    s.map_or("–".into(), |s| mib(Some(&s.full_kib))),
                )
            };
            let (bl, bb, bs) = cells(
                self.before_builds.get(i),
                self.scripts.get(i).and_then(|s| s.1.as_ref()),
            );
            let (al, ab, as_) = cells(self.builds.get(i), self.scripts.get(i).map(|s| &s.0));
            let blobs = self
                .builds
                .get(i)
                .and_then(|b| b.stats.as_ref())
                .and_then(|s| Some(s["text_bytes"].as_f64()? + s["data_bytes"].as_f64()?))
                .map_or("–".into(), size);
            let whole = self.builds.get(i).map_or("–".into(), |b| {
                format!("{} ({})", t(b.cargo_s), kib_cell(b.peak_kib))
            });
            let _ = writeln!(
                m,
                "| {} | {bl} | {bb} | {bs} | {al} | {ab} | {as_} | {blobs} | {whole} |",
                thousands(set.packs)
            );
        }
        let _ = writeln!(m);

        let _ = writeln!(m, "### Build script time\n");
        let _ = writeln!(
            m,
            "The build script alone: a full run into an empty output folder, a run with nothing \
             changed, and a run after appending a paragraph to `{EDITED}/SKILL.md` (the \
             incremental build); its output is then compared byte for byte with a full run on the \
             edited tree. Medians of 3 runs (5 below 1,000 packs).\n"
        );
        let _ = writeln!(
            m,
            "| packs | before: full | nothing changed | one pack edited | after: full | nothing changed | one pack edited | edited / full | peak memory, edited | output |\n|---:|---|---|---|---|---|---|---:|---:|---|"
        );
        for (set, (a, b)) in self.sets.iter().zip(self.scripts) {
            let (bf, bn, be) = b
                .as_ref()
                .map_or(("–".into(), "–".into(), "–".into()), |b| {
                    (ts(&b.full_s), ts(&b.nochange_s), ts(&b.edit_s))
                });
            let _ = writeln!(
                m,
                "| {} | {bf} | {bn} | {be} | {} | {} | {} | {:.1}% | {} | {} |",
                thousands(set.packs),
                ts(&a.full_s),
                ts(&a.nochange_s),
                ts(&a.edit_s),
                a.edit_s.median / a.full_s.median * 100.0,
                mib(Some(&a.edit_kib)),
                if a.identical {
                    "identical"
                } else {
                    "**differs**"
                }
            );
        }
        let _ = writeln!(m);
        let phase = |v: &Option<serde_json::Value>, k: &str| {
            v.as_ref().and_then(|v| v[k].as_f64()).map_or("–".into(), t)
        };
        let _ = writeln!(
            m,
            "Where the build script's time goes (its own account, `SKILLBAKE_BUILD_STATS`): \
             the configuration, then the walk and the cache's read (on two threads); stamping, \
             reading, checking and generating the packs; the cross-pack rules, the routing \
             index and the default versions (while the cache is written); assembling the \
             blobs; writing the outputs.\n"
        );
        let _ = writeln!(
            m,
            "| packs | run | walk | packs | cross-pack | assemble | write | packs reused (stamp / hash) | generated |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|"
        );
        for (set, (a, _)) in self.sets.iter().zip(self.scripts) {
            for (label, st) in [("full", &a.full_stats), ("one pack edited", &a.edit_stats)] {
                let n = |k: &str| {
                    st.as_ref()
                        .and_then(|v| v[k].as_u64())
                        .map_or("–".into(), |v| thousands(v as usize))
                };
                let _ = writeln!(
                    m,
                    "| {} | {label} | {} | {} | {} | {} | {} | {} / {} | {} |",
                    thousands(set.packs),
                    phase(st, "walk_s"),
                    phase(st, "packs_s"),
                    phase(st, "cross_s"),
                    phase(st, "assemble_s"),
                    phase(st, "write_s"),
                    n("reused_by_stamp"),
                    n("reused_by_hash"),
                    n("generated")
                );
            }
        }
        let _ = writeln!(m);
    }
}
