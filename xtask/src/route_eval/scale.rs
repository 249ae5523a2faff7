//! Route latency, index build time and size at 100, 1,000 and 10,000 packs: synthetic packs
//! whose words follow a Zipf distribution over a vocabulary of pseudo-words (as words of real
//! text do), so that posting lists have realistic lengths; requests take words of one pack's
//! description and `when_to_use` plus common words. Deterministic; written under
//! `OUT/scale-N/` (packs and requests in the layout `convert.py` writes) so that the Python peers
//! answer the same requests over the same packs.

use std::fmt::Write as _;
use std::path::Path;

/// Vocabulary size.
const VOCABULARY: usize = 30_000;

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = splitmix(self.0);
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() as usize) % (hi - lo + 1)
    }
}

/// A pronounceable pseudo-word for rank `i`.
fn word(i: usize) -> String {
    const C: &[u8] = b"bcdfghjklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut n = i + 1;
    let mut s = String::new();
    while n > 0 {
        s.push(char::from(C[n % C.len()]));
        n /= C.len();
        s.push(char::from(V[n % V.len()]));
        n /= V.len();
    }
    s
}

/// Zipf sampler (s = 1.07) by inverse CDF over a precomputed table.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Zipf {
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for r in 1..=n {
            acc += 1.0 / (r as f64).powf(1.07);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Zipf { cdf }
    }
    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

fn words(z: &Zipf, rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n).map(|_| word(z.sample(rng))).collect()
}

/// Writes `n` packs and 300 requests under `dir` (skipped when already there).
pub(super) fn generate(dir: &Path, n: usize) -> Result<(), String> {
    let marker = dir.join("complete");
    if marker.exists() {
        return Ok(());
    }
    let z = Zipf::new(VOCABULARY);
    let mut rng = Rng(0x5EED_0000 + n as u64);
    let packs = dir.join("packs");
    let mut descriptions = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("skill-{i:05}");
        let desc = {
            let k = rng.range(12, 30);
            words(&z, &mut rng, k)
        };
        let when = {
            let k = rng.range(8, 15);
            words(&z, &mut rng, k)
        };
        let tags = words(&z, &mut rng, 3);
        let mut body = String::new();
        for section in 0..3 {
            let head = words(&z, &mut rng, 3).join(" ");
            let para = {
                let k = rng.range(50, 200);
                words(&z, &mut rng, k)
            }
            .join(" ");
            let _ = write!(body, "## {head}\n\n{para}\n\n");
            if section == 0 {
                body.push_str("1. Follow the steps.\n\n");
            }
        }
        let md = format!(
            "---\nname: {name}\ndescription: \"{}\"\nwhen_to_use: \"{}\"\ntags: [{}]\n---\n\n# {name}\n\n{body}",
            desc.join(" "),
            when.join(" "),
            tags.join(", ")
        );
        let d = packs.join(&name);
        std::fs::create_dir_all(&d).map_err(|e| format!("`{}`: {e}", d.display()))?;
        std::fs::write(d.join("SKILL.md"), md).map_err(|e| format!("`{}`: {e}", d.display()))?;
        descriptions.push((name, desc, when));
    }
    let mut q = String::new();
    for i in 0..300 {
        let (name, desc, when) = &descriptions[rng.range(0, n - 1)];
        let mut w: Vec<String> = Vec::new();
        for _ in 0..4 {
            w.push(desc[rng.range(0, desc.len() - 1)].clone());
        }
        w.push(when[rng.range(0, when.len() - 1)].clone());
        w.extend(words(&z, &mut rng, 3));
        let _ = writeln!(
            q,
            "{{\"id\": \"scale-{n}-{i}\", \"query\": \"{}\", \"relevant\": [\"{name}\"]}}",
            w.join(" ")
        );
    }
    std::fs::write(dir.join("queries.jsonl"), q).map_err(|e| e.to_string())?;
    std::fs::write(&marker, b"").map_err(|e| e.to_string())?;
    Ok(())
}
