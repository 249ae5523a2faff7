//! The plot `benches/cold-start.svg`: cold start against number of packs, log–log, one line per
//! system.

use super::report::{t, thousands, ts, Report, Series};
use super::timing::Stat;
use std::fmt::Write as _;

impl Report<'_> {
    /// Cold start against number of packs, log–log, one line per system.
    pub(super) fn svg(&self) -> String {
        let (w, h) = (760.0, 440.0);
        let (left, right, top, bottom) = (80.0, 230.0, 50.0, 60.0);
        let pw = w - left - right;
        let ph = h - top - bottom;
        let mut series: Vec<Series> = vec![
            (
                "skillbake load",
                "#d9480f",
                false,
                self.cold.iter().map(|c| (c.packs, c.ours.wall)).collect(),
            ),
            (
                "Rust run-time loader",
                "#1c7ed6",
                false,
                self.cold.iter().map(|c| (c.packs, c.loader.wall)).collect(),
            ),
        ];
        let dbgpt: Vec<(usize, Stat)> = self
            .cold
            .iter()
            .filter_map(|c| Some((c.packs, c.dbgpt.as_ref()?.wall)))
            .collect();
        if !dbgpt.is_empty() {
            series.push(("DB-GPT, whole process", "#2b8a3e", false, dbgpt));
            let inside: Vec<(usize, Stat)> = self
                .cold
                .iter()
                .zip(&self.inside)
                .filter_map(|(c, i)| {
                    let b = i.dbgpt.as_ref()?;
                    let v = b.load_s.median + b.first_s.median;
                    Some((
                        c.packs,
                        Stat {
                            median: v,
                            min: b.load_s.min + b.first_s.min,
                            max: b.load_s.max + b.first_s.max,
                            runs: b.load_s.runs,
                        },
                    ))
                })
                .collect();
            series.push(("DB-GPT, load + first answer", "#2b8a3e", true, inside));
        }
        series.push((
            "floor: trivial binary",
            "#868e96",
            true,
            self.cold.iter().map(|c| (c.packs, c.floor.wall)).collect(),
        ));

        let values: Vec<f64> = series
            .iter()
            .flat_map(|s| s.3.iter().flat_map(|(_, st)| [st.min, st.max]))
            .filter(|v| *v > 0.0)
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(0.0, f64::max);
        let (ylo, yhi) = if lo.is_finite() && hi > 0.0 {
            (
                lo.log10().floor(),
                hi.log10().ceil().max(lo.log10().floor() + 1.0),
            )
        } else {
            (-4.0, 1.0)
        };
        let xs: Vec<usize> = self.opts.sizes.clone();
        let (xlo, xhi) = (
            (*xs.first().unwrap_or(&10) as f64).log10().floor(),
            (*xs.last().unwrap_or(&10000) as f64).log10().ceil(),
        );
        let xhi = if xhi <= xlo { xlo + 1.0 } else { xhi };
        let px = |n: usize| left + ((n as f64).log10() - xlo) / (xhi - xlo) * pw;
        let py = |v: f64| top + (yhi - v.max(1e-12).log10()) / (yhi - ylo) * ph;

        let mut o = String::new();
        let _ = writeln!(
            o,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(o, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = writeln!(
            o,
            r#"<text x="{}" y="24" font-size="15" font-weight="bold">Cold start: a fresh process answers one load_skill</text>"#,
            left
        );
        // Grid and axes.
        let mut d = ylo as i32;
        while d <= yhi as i32 {
            let y = py(10f64.powi(d));
            let _ = writeln!(
                o,
                r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e9ecef"/>"##,
                left + pw
            );
            let _ = writeln!(
                o,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                y + 4.0,
                t(10f64.powi(d)).replace(".00", "").replace(".0 ", " ")
            );
            d += 1;
        }
        let mut e = xlo as i32;
        while e <= xhi as i32 {
            let n = 10usize.pow(e.max(0) as u32);
            let xv = px(n);
            let _ = writeln!(
                o,
                r##"<line x1="{xv:.1}" y1="{top}" x2="{xv:.1}" y2="{:.1}" stroke="#e9ecef"/>"##,
                top + ph
            );
            let _ = writeln!(
                o,
                r#"<text x="{xv:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                top + ph + 18.0,
                thousands(n)
            );
            e += 1;
        }
        let _ = writeln!(
            o,
            r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#495057"/>"##
        );
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">skill packs (log scale)</text>"#,
            left + pw / 2.0,
            h - 18.0
        );
        let _ = writeln!(
            o,
            r#"<text transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">wall time, median; bars: min–max (log scale)</text>"#,
            top + ph / 2.0
        );
        // Series.
        for (i, (label, color, dashed, points)) in series.iter().enumerate() {
            let dash = if *dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let pts: Vec<String> = points
                .iter()
                .map(|(n, st)| format!("{:.1},{:.1}", px(*n), py(st.median)))
                .collect();
            let _ = writeln!(
                o,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
                pts.join(" ")
            );
            for (n, st) in points {
                let xv = px(*n);
                let _ = writeln!(
                    o,
                    r#"<line x1="{xv:.1}" y1="{:.1}" x2="{xv:.1}" y2="{:.1}" stroke="{color}"/>"#,
                    py(st.min),
                    py(st.max)
                );
                let _ = writeln!(
                    o,
                    r#"<circle cx="{xv:.1}" cy="{:.1}" r="3.5" fill="{color}"><title>{label}, {} packs: {}</title></circle>"#,
                    py(st.median),
                    thousands(*n),
                    ts(st)
                );
            }
            let ly = top + 10.0 + 22.0 * i as f64;
            let lx = left + pw + 16.0;
            let _ = writeln!(
                o,
                r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"{dash}/>"#,
                lx + 24.0
            );
            let _ = writeln!(
                o,
                r#"<text x="{:.1}" y="{:.1}">{label}</text>"#,
                lx + 30.0,
                ly + 4.0
            );
        }
        let _ = writeln!(o, "</svg>");
        o
    }
}
