//! A Rust run-time skill loader written the usual way, the peer of `cargo xtask bench`: at start it
//! walks the skills folder, reads every `SKILL.md`, parses its frontmatter with `yaml_serde` into a
//! struct and keeps the skills in a `HashMap`; then it answers `load_skill` in DB-GPT's chunk
//! format (exact name, then ASCII case-insensitive: DB-GPT folds Unicode, the benchmark's names
//! are ASCII).
//!
//! ```text
//! runtime-loader DIR SKILL_NAME FILE_PATH           # prints the reply; exit 1 when not found
//! runtime-loader --report DIR SKILL_NAME FILE_PATH  # prints JSON: load, first answer, lookups
//! ```

use serde::Deserialize;
use std::collections::HashMap;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The frontmatter fields a loader keeps (DB-GPT's and the Agent Skills spec's).
#[derive(Debug, Deserialize)]
#[allow(dead_code)] // kept as a loader keeps them; only some are served here
struct Frontmatter {
    name: String,
    description: String,
    #[serde(default)]
    version: Option<yaml_serde::Value>,
    #[serde(default)]
    tags: Option<yaml_serde::Value>,
    #[serde(default)]
    required_tools: Option<yaml_serde::Value>,
    #[serde(default)]
    license: Option<String>,
    #[serde(default)]
    metadata: Option<HashMap<String, yaml_serde::Value>>,
}

#[derive(Debug)]
#[allow(dead_code)]
struct Skill {
    meta: Frontmatter,
    body: String,
    path: PathBuf,
}

struct Registry {
    skills: HashMap<String, Skill>,
}

impl Registry {
    /// Walks `root` and parses every `SKILL.md`; a pack that fails to parse is reported and
    /// skipped, as run-time loaders do.
    fn load(root: &Path) -> std::io::Result<Registry> {
        let mut skills = HashMap::new();
        walk(root, &mut skills)?;
        Ok(Registry { skills })
    }

    fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name).or_else(|| {
            self.skills
                .values()
                .find(|s| s.meta.name.eq_ignore_ascii_case(name))
        })
    }

    /// DB-GPT's `load_skill` reply.
    fn load_skill(&self, name: &str, file_path: &str) -> String {
        let Some(skill) = self.get(name) else {
            return reply(&[("text", &format!("Skill '{name}' not found"))]);
        };
        reply(&[
            ("text", &format!("Skill: {}", skill.meta.name)),
            ("text", &format!("File path: {file_path}")),
            ("text", "---"),
            ("markdown", &skill.body),
        ])
    }
}

fn walk(dir: &Path, skills: &mut HashMap<String, Skill>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(&path, skills)?;
        } else if entry.file_name() == "SKILL.md" {
            match parse(&path) {
                Ok(skill) => {
                    skills.insert(skill.meta.name.clone(), skill);
                }
                Err(e) => eprintln!("skipping {}: {e}", path.display()),
            }
        }
    }
    Ok(())
}

fn parse(path: &Path) -> Result<Skill, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let text = text.replace("\r\n", "\n");
    let rest = text
        .trim()
        .strip_prefix("---")
        .ok_or("no frontmatter (the file must start with ---)")?;
    let (front, body) = rest.split_once("---").ok_or("unterminated frontmatter")?;
    let meta: Frontmatter = yaml_serde::from_str(front).map_err(|e| e.to_string())?;
    Ok(Skill {
        meta,
        body: body.trim().to_string(),
        path: path.to_path_buf(),
    })
}

/// `{"chunks": [{"output_type": ..., "content": ...}, ...]}` with Python's separators.
fn reply(chunks: &[(&str, &str)]) -> String {
    let parts: Vec<String> = chunks
        .iter()
        .map(|(kind, content)| {
            let content = serde_json::to_string(content).unwrap_or_default();
            format!(r#"{{"output_type": "{kind}", "content": {content}}}"#)
        })
        .collect();
    format!(r#"{{"chunks": [{}]}}"#, parts.join(", "))
}

/// Median nanoseconds per call over five batches of at least 20 ms each.
fn per_call_ns(mut f: impl FnMut() -> usize) -> f64 {
    let mut n: u32 = 1;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            black_box(f());
        }
        if t.elapsed().as_millis() >= 20 || n >= 1 << 24 {
            break;
        }
        n *= 2;
    }
    let mut batches: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                black_box(f());
            }
            t.elapsed().as_nanos() as f64 / f64::from(n)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[2]
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (report, rest) = match args.split_first() {
        Some((flag, rest)) if flag == "--report" => (true, rest),
        _ => (false, &args[..]),
    };
    let [root, name, file_path] = rest else {
        eprintln!("usage: runtime-loader [--report] DIR SKILL_NAME FILE_PATH");
        return ExitCode::from(2);
    };
    let t0 = Instant::now();
    let registry = match Registry::load(Path::new(root)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("runtime-loader: cannot read {root}: {e}");
            return ExitCode::from(2);
        }
    };
    let t1 = Instant::now();
    let answer = registry.load_skill(name, file_path);
    let t2 = Instant::now();
    let found = registry.get(name).is_some();
    let mut out = std::io::stdout().lock();
    if report {
        let upper = name.to_uppercase();
        let json = serde_json::json!({
            "packs": registry.skills.len(),
            "load_s": (t1 - t0).as_secs_f64(),
            "first_answer_s": (t2 - t1).as_secs_f64(),
            "hit_ns": per_call_ns(|| registry.load_skill(black_box(name), file_path).len()),
            "case_insensitive_ns": per_call_ns(|| registry.load_skill(black_box(&upper), file_path).len()),
            "miss_ns": per_call_ns(|| registry.load_skill(black_box("no-such-skill"), file_path).len()),
            "reply_bytes": answer.len(),
        });
        let _ = writeln!(out, "{json}");
    } else {
        let _ = writeln!(out, "{answer}");
    }
    let _ = out.flush();
    if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
