//! `cargo xtask codegen [--check]`: writes the text that is derived from the code, so that no
//! fact is pasted by hand in a second place:
//!
//! * README.md's rules table (between `<!-- rules:start -->` and `<!-- rules:end -->`), from
//!   `Code::ALL`: code, default severity, summary, module;
//! * README.md's change-rule table of `skillbake diff` (between `<!-- change-rules:start -->`
//!   and `<!-- change-rules:end -->`), from `diff::Rule::ALL`: rule, bump, area, summary;
//! * README.md's dry-run sample (between `<!-- dry-run:start -->` and `<!-- dry-run:end -->`),
//!   from a real dry run of the debug binary (see [`crate::dry_run`]);
//! * the codes table of `crates/skillbake-build/src/validate/mod.rs` (between its
//!   `codes:start`/`codes:end` markers): each validate module and the codes it raises;
//! * in every `crates/skillbake-build/rules/<code>.md`, the rendered diagnostic of the
//!   "Failing example" section (the fenced `text` block starting with `error[` or `warning[`),
//!   from the reviewed snapshot `crates/skillbake-build/tests/it/snapshots/it__rules__rule-<code>.snap` of the rule's failing
//!   fixture. A rule whose snapshot does not exist yet keeps its block.
//!
//! With `--check` nothing is written: a difference is an error naming the files, and
//! `cargo xtask ci` runs it. Everything is regenerated from the code every time, so a merge
//! conflict in one of these regions is resolved by taking either side and rerunning
//! `cargo xtask codegen`.

use crate::root;
use skillbake_build::Code;
use std::path::{Path, PathBuf};

/// One generated file: where, what it holds now, what it should hold.
struct Output {
    path: PathBuf,
    old: String,
    new: String,
}

/// Runs codegen (`--check`: compare only).
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => return Err("usage: cargo xtask codegen [--check]".into()),
    };
    let root = root();
    let outputs = generate(&root)?;
    let stale: Vec<&Output> = outputs.iter().filter(|o| o.old != o.new).collect();
    if check {
        if stale.is_empty() {
            eprintln!("codegen: {} files up to date", outputs.len());
            return Ok(());
        }
        let names: Vec<String> = stale.iter().map(|o| rel(&root, &o.path)).collect();
        return Err(format!(
            "generated text is out of date in {}; run `cargo xtask codegen`",
            names.join(", ")
        ));
    }
    for o in &stale {
        std::fs::write(&o.path, &o.new)
            .map_err(|e| format!("cannot write `{}`: {e}", o.path.display()))?;
        eprintln!("codegen: wrote {}", rel(&root, &o.path));
    }
    if stale.is_empty() {
        eprintln!("codegen: {} files up to date", outputs.len());
    }
    Ok(())
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

/// Every generated file with its current and expected text.
fn generate(root: &Path) -> Result<Vec<Output>, String> {
    let mut out = Vec::new();
    let readme = root.join("README.md");
    let old = read(&readme)?;
    let new = replace_between(
        &old,
        "<!-- rules:start -->\n",
        "<!-- rules:end -->",
        &rules_table(),
    )
    .ok_or("README.md lacks the `<!-- rules:start -->` / `<!-- rules:end -->` markers")?;
    let new = replace_between(
        &new,
        "<!-- change-rules:start -->\n",
        "<!-- change-rules:end -->",
        &change_rules_table(),
    )
    .ok_or(
        "README.md lacks the `<!-- change-rules:start -->` / `<!-- change-rules:end -->` markers",
    )?;
    let new = replace_between(
        &new,
        "<!-- dry-run:start -->\n",
        "<!-- dry-run:end -->",
        &crate::dry_run::sample(root)?,
    )
    .ok_or("README.md lacks the `<!-- dry-run:start -->` / `<!-- dry-run:end -->` markers")?;
    out.push(Output {
        path: readme,
        old,
        new,
    });

    let validate = root.join("crates/skillbake-build/src/validate/mod.rs");
    let old = read(&validate)?;
    let new = replace_between(
        &old,
        "//! <!-- codes:start -->\n",
        "//! <!-- codes:end -->",
        &validate_table(),
    )
    .ok_or("validate/mod.rs lacks the `//! <!-- codes:start -->` / `codes:end` markers")?;
    out.push(Output {
        path: validate,
        old,
        new,
    });

    for &code in Code::ALL {
        let doc = root.join(format!("crates/skillbake-build/rules/{code}.md"));
        let old = read(&doc)?;
        let snap = root.join(format!(
            "crates/skillbake-build/tests/it/snapshots/it__rules__rule-{code}.snap"
        ));
        let new = match std::fs::read_to_string(&snap) {
            Ok(snapshot) => {
                let rendered = first_diagnostic(&snapshot, code).ok_or_else(|| {
                    format!("{}: no `[{code}]` diagnostic in it", rel(root, &snap))
                })?;
                with_failing_output(&old, &rendered).ok_or_else(|| {
                    format!("{}: no `## Failing example` section", rel(root, &doc))
                })?
            }
            Err(_) => old.clone(),
        };
        out.push(Output {
            path: doc,
            old,
            new,
        });
    }
    Ok(out)
}

/// `text` with what lies between `start` and `end` replaced by `body`.
fn replace_between(text: &str, start: &str, end: &str, body: &str) -> Option<String> {
    let s = text.find(start)? + start.len();
    let e = s + text.get(s..)?.find(end)?;
    Some(format!("{}{body}{}", text.get(..s)?, text.get(e..)?))
}

/// README's rules table.
pub(crate) fn rules_table() -> String {
    let mut s = String::from("| code | default | checks | rule lives in |\n|---|---|---|---|\n");
    for &c in Code::ALL {
        s.push_str(&format!(
            "| `{}` | {} | {} | `crates/skillbake-build/src/{}` |\n",
            c.as_str(),
            c.default_severity(),
            c.summary().replace('|', "\\|"),
            c.module()
        ));
    }
    s
}

/// README's change-rule table of `skillbake diff`.
pub(crate) fn change_rules_table() -> String {
    use skillbake_build::diff::Rule;
    let mut s = String::from("| rule | needs | area | recognises |\n|---|---|---|---|\n");
    for &r in Rule::ALL {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.as_str(),
            r.bump(),
            r.area().as_str(),
            r.summary().replace('|', "\\|")
        ));
    }
    s
}

/// The table of validate modules and their codes, as `//!` lines.
fn validate_table() -> String {
    let mut modules: Vec<(&str, Vec<&str>)> = Vec::new();
    for &c in Code::ALL {
        let Some(m) = c
            .module()
            .strip_prefix("validate/")
            .and_then(|m| m.strip_suffix(".rs"))
        else {
            continue;
        };
        match modules.iter_mut().find(|(name, _)| *name == m) {
            Some((_, codes)) => codes.push(c.as_str()),
            None => modules.push((m, vec![c.as_str()])),
        }
    }
    let mut s = String::from("//! | module | codes |\n//! |---|---|\n");
    for (m, codes) in modules {
        let codes: Vec<String> = codes.iter().map(|c| format!("`{c}`")).collect();
        // A module under a folder (`security/hidden`) is linked by its path.
        let path = m.replace('/', "::");
        s.push_str(&format!("//! | [`{path}`] | {} |\n", codes.join(", ")));
    }
    s
}

/// The first rendered diagnostic of `code` in a snapshot of `human::render` output.
fn first_diagnostic(snap: &str, code: Code) -> Option<String> {
    let rendered = snap.splitn(3, "---\n").nth(2)?;
    let tag = format!("[{code}]");
    rendered
        .split("\n\n")
        .find(|d| d.lines().next().is_some_and(|l| l.contains(&tag)))
        .map(|d| d.trim_end().to_string())
}

/// `doc` with the rendered diagnostic of its "Failing example" section replaced by `rendered`
/// (or added at the end of the section when it has none).
fn with_failing_output(doc: &str, rendered: &str) -> Option<String> {
    let start = doc.find("\n## Failing example\n")? + 1;
    let end = doc
        .get(start + 1..)?
        .find("\n## ")
        .map_or(doc.len(), |i| start + 1 + i + 1);
    let section = doc.get(start..end)?;
    let block = format!("```text\n{rendered}\n```\n");
    let mut from = 0;
    let new_section = loop {
        let Some(i) = section.get(from..)?.find("```text\n") else {
            // No rendered diagnostic yet: append one.
            break format!("{}\n\n{block}\n", section.trim_end_matches('\n'));
        };
        let open = from + i;
        let body = open + "```text\n".len();
        let close = body + section.get(body..)?.find("```\n")?;
        let first = section.get(body..close)?.lines().next().unwrap_or("");
        if first.starts_with("error[") || first.starts_with("warning[") {
            break format!(
                "{}{block}{}",
                section.get(..open)?,
                section.get(close + "```\n".len()..)?
            );
        }
        from = close + "```\n".len();
    };
    Some(format!(
        "{}{new_section}{}",
        doc.get(..start)?,
        doc.get(end..)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_rendered_block_only() {
        let doc = "# x\n\n## Failing example\n\n```markdown\n---\n```\n\n```text\nerror[x]: old\n```\n\n## Passing example\n\nok\n";
        let new = with_failing_output(doc, "error[x]: new\n --> a").unwrap();
        assert_eq!(
            new,
            "# x\n\n## Failing example\n\n```markdown\n---\n```\n\n```text\nerror[x]: new\n --> a\n```\n\n## Passing example\n\nok\n"
        );
        let skeleton = "# x\n\n## Failing example\n\n`a/SKILL.md`:\n\n## Passing example\n";
        let new = with_failing_output(skeleton, "warning[x]: w").unwrap();
        assert_eq!(
            new,
            "# x\n\n## Failing example\n\n`a/SKILL.md`:\n\n```text\nwarning[x]: w\n```\n\n## Passing example\n"
        );
    }

    #[test]
    fn finds_the_diagnostic_of_the_code() {
        let code = Code::from_name("body-empty").unwrap();
        let snap = "---\nsource: crates/skillbake-build/tests/it/rules.rs\n---\nerror[name-missing]: one\n --> f:1:1\n\nwarning[body-empty]: two\n --> f:2:1\n  |\n\nchecked 1 pack: 1 error, 1 warning\n";
        assert_eq!(
            first_diagnostic(snap, code).as_deref(),
            Some("warning[body-empty]: two\n --> f:2:1\n  |")
        );
        assert_eq!(first_diagnostic("---\nx\n---\nchecked\n", code), None);
        assert_eq!(
            replace_between("a<s>old</s>b", "<s>", "</s>", "new").as_deref(),
            Some("a<s>new</s>b")
        );
    }
}
