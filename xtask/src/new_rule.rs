//! `cargo xtask new-rule CODE --module M --severity error|warning [--summary TEXT]`: everything
//! a new diagnostic code needs, written at once, with markers left where a human decides:
//!
//! 1. the `codes!` row in `crates/skillbake-build/src/diagnostic.rs`, after the last row of the
//!    same module (else at the end);
//! 2. the rule's documentation skeleton `crates/skillbake-build/rules/CODE.md`;
//! 3. the fixtures `crates/skillbake-build/tests/fixtures/rules/CODE/{fail,pass}/my-skill/SKILL.md` (both a valid pack:
//!    edit `fail/` until it breaks the rule);
//! 4. when `M` is a new `validate/` module, that module with an empty `check` and its
//!    registration in `validate/mod.rs`;
//! 5. then `cargo xtask codegen` (README's table, the validate codes table).
//!
//! The result fails the test suite until the rule is written, by design: the fixture test
//! (`fail/` must raise CODE), the tidy test that the module raises the code, and the tidy test
//! that no `TODO(new-rule)` marker is left in the summary, the documentation or the fixtures.
//! Accept the two snapshots it then asks for (`it__rules__rule-CODE`, `it__tidy__codes`) after reading
//! them.

use crate::{cargo, root, run as run_step};
use skillbake_build::Code;
use std::path::Path;

const USAGE: &str =
    "usage: cargo xtask new-rule CODE --module M --severity error|warning [--summary TEXT]";

/// The marker every placeholder carries; a tidy test fails while one is left.
pub(crate) const TODO: &str = "TODO(new-rule)";

/// Runs `new-rule`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut code: Option<&str> = None;
    let (mut module, mut severity, mut summary) = (None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or(format!("{a} needs a value ({USAGE})"))
        };
        match a.as_str() {
            "--module" => module = Some(value()?),
            "--severity" => severity = Some(value()?),
            "--summary" => summary = Some(value()?),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}` ({USAGE})")),
            s if code.is_none() => code = Some(s),
            s => return Err(format!("unexpected argument `{s}` ({USAGE})")),
        }
    }
    let code = code.ok_or(USAGE)?;
    check_code(code)?;
    let module = normalise_module(&module.ok_or(format!("--module is required ({USAGE})"))?)?;
    let severity = match severity.as_deref() {
        Some("error") => "Error",
        Some("warning") => "Warning",
        _ => return Err(format!("--severity must be `error` or `warning` ({USAGE})")),
    };
    let summary = summary.unwrap_or_else(|| format!("{TODO}: one sentence on what {code} checks."));
    if summary.contains('"') || summary.contains('\\') {
        return Err("--summary may not contain `\"` or `\\`".into());
    }

    let root = root();
    let src = root.join("crates/skillbake-build/src");
    let module_path = src.join(&module);
    let new_module = !module_path.exists();
    if new_module && !module.starts_with("validate/") {
        return Err(format!(
            "`{module}` does not exist; new modules are created under validate/ only"
        ));
    }
    let variant = pascal_case(code);

    // 1. The codes! row.
    let diagnostic = src.join("diagnostic.rs");
    let text = read(&diagnostic)?;
    let row = format!(
        "    /// {TODO}: what `{code}` means, in a few words.\n    {variant} = \"{code}\", {severity}, \"{module}\", \"{summary}\";\n"
    );
    let text = insert_row(&text, &module, &row)?;

    // 2. The documentation skeleton, 3. the fixtures.
    let doc = root.join(format!("crates/skillbake-build/rules/{code}.md"));
    let fixtures = root.join(format!(
        "crates/skillbake-build/tests/fixtures/rules/{code}"
    ));
    for p in [&doc, &fixtures] {
        if p.exists() {
            return Err(format!("`{}` already exists", p.display()));
        }
    }
    let (fail, pass) = (fixture_pack(code, true), fixture_pack(code, false));
    write(&doc, &skeleton(code, severity == "Warning", &fail, &pass))?;
    write(&fixtures.join("fail/my-skill/SKILL.md"), &fail)?;
    write(&fixtures.join("pass/my-skill/SKILL.md"), &pass)?;

    // 4. A new validate module, registered.
    if new_module {
        let name = module
            .trim_start_matches("validate/")
            .trim_end_matches(".rs")
            .to_string();
        write(&module_path, &module_skeleton(code))?;
        let mod_rs = src.join("validate/mod.rs");
        let registered = register(&read(&mod_rs)?, &name)?;
        write(&mod_rs, &registered)?;
    }
    write(&diagnostic, &text)?;

    // 5. Generated text, with the new code compiled in.
    run_step(
        "cargo xtask codegen",
        cargo().args(["run", "-q", "-p", "xtask", "--", "codegen"]),
    )?;
    eprintln!(
        "\nnew rule `{code}` (Code::{variant}, {severity}) in crates/skillbake-build/src/{module}.\n\
         Now:\n\
         * raise it there: `Diagnostic::new(Code::{variant}, file, message).at(pos).help(fix)`;\n\
         * edit crates/skillbake-build/tests/fixtures/rules/{code}/fail/ until it breaks the rule (pass/ must stay clean);\n\
         * replace every `{TODO}` (the summary and doc comment in diagnostic.rs, rules/{code}.md);\n\
         * `cargo test --test rules --test tidy`, read and accept the new snapshots, then\n\
           `cargo xtask codegen` writes the failing example into rules/{code}.md."
    );
    Ok(())
}

fn read(p: &Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("cannot read `{}`: {e}", p.display()))
}

fn write(p: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    std::fs::write(p, text).map_err(|e| format!("cannot write `{}`: {e}", p.display()))
}

/// A code is kebab-case ASCII and new.
fn check_code(code: &str) -> Result<(), String> {
    let kebab = !code.is_empty()
        && code.starts_with(|c: char| c.is_ascii_lowercase())
        && !code.ends_with('-')
        && !code.contains("--")
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !kebab {
        return Err(format!(
            "`{code}` is not a kebab-case code (lower-case letters, digits, single `-`)"
        ));
    }
    if Code::from_name(code).is_some() {
        return Err(format!("`{code}` exists already"));
    }
    Ok(())
}

/// `validate/x`, `validate/x.rs`, `crates/skillbake-build/src/validate/x.rs` → `validate/x.rs`.
fn normalise_module(m: &str) -> Result<String, String> {
    let m = m
        .trim_start_matches("crates/skillbake-build/src/")
        .trim_start_matches("./");
    let m = if m.ends_with(".rs") {
        m.to_string()
    } else {
        format!("{m}.rs")
    };
    let ok = !m.contains("..")
        && m.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'/' || b == b'.'
        });
    if !ok {
        return Err(format!(
            "`{m}`: give the module as a path under crates/skillbake-build/src"
        ));
    }
    Ok(m)
}

/// `body-too-long` → `BodyTooLong`.
fn pascal_case(code: &str) -> String {
    code.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Inserts `row` into the `codes!` table after the last row of `module`, else at its end.
fn insert_row(text: &str, module: &str, row: &str) -> Result<String, String> {
    let start = text
        .find("\ncodes! {\n")
        .ok_or("diagnostic.rs: no `codes! {` table")?
        + 1;
    let end = start
        + text[start..]
            .find("\n}\n")
            .ok_or("diagnostic.rs: `codes!` is not closed")?
        + 1;
    let table = &text[start..end];
    let marker = format!(", \"{module}\", ");
    let at = match table.rfind(&marker) {
        Some(i) => start + i + table[i..].find('\n').map_or(0, |n| n + 1),
        None => end,
    };
    Ok(format!("{}{row}{}", &text[..at], &text[at..]))
}

/// The pack of a fixture: valid, so that `fail/` raises nothing until edited.
fn fixture_pack(code: &str, fail: bool) -> String {
    let note = if fail {
        format!("\n<!-- {TODO}: change this pack so that it breaks `{code}`. -->\n")
    } else {
        String::new()
    };
    format!(
        "---\nname: my-skill\ndescription: Summarise text files. Use when the user asks for a summary.\n---\n# My skill\n\nSteps to follow.\n{note}"
    )
}

/// The documentation skeleton; codegen adds the rendered diagnostic to "Failing example".
fn skeleton(code: &str, warning: bool, fail: &str, pass: &str) -> String {
    let silence = if warning {
        format!(
            "```toml\n# skillbake.toml at the skills root\n[lints]\n{code} = \"allow\"   # or \"warn\" / \"deny\"\n```\n\n`skillbake check --deny warnings` turns this warning, like every other warning, into an error.\n"
        )
    } else {
        format!(
            "```toml\n# skillbake.toml at the skills root\n[lints]\n{code} = \"allow\"   # or \"warn\" / \"deny\"\n```\n"
        )
    };
    format!(
        "# {code}\n\n{TODO}: what the rule checks, exactly: which files and fields, which values pass.\n\n## Why\n\n{TODO}: what goes wrong for an agent when the rule is broken.\n\n## Failing example\n\n`my-skill/SKILL.md`:\n\n```markdown\n{}\n```\n\n## Passing example\n\n```markdown\n{}\n```\n\n## How to fix\n\n{TODO}: how to fix it.\n\n## How to silence\n\n{silence}",
        fail.trim_end(),
        pass.trim_end()
    )
}

/// A new validate module: an empty `check` to fill in.
fn module_skeleton(code: &str) -> String {
    format!(
        "//! `{code}`: {TODO}: what this module checks.\n\nuse super::PackCtx;\nuse crate::diagnostic::Diagnostic;\n\n/// Checks `{code}` on one pack.\npub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {{\n    let _ = (ctx, diags);\n}}\n"
    )
}

/// `validate/mod.rs` with `pub mod name;` among the modules and `name::check(ctx, diags);` last
/// among the rules that need the frontmatter.
fn register(text: &str, name: &str) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mods: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("pub mod "))
        .collect();
    let &last = mods.last().ok_or("validate/mod.rs: no `pub mod` lines")?;
    let decl = format!("pub mod {name};");
    let at = mods
        .iter()
        .copied()
        .find(|&i| lines[i].as_str() > decl.as_str())
        .unwrap_or(last + 1);
    lines.insert(at, decl);
    let open = lines
        .iter()
        .position(|l| l.trim() == "if ctx.md.frontmatter.is_some() {")
        .ok_or("validate/mod.rs: no `if ctx.md.frontmatter.is_some() {` in check_pack")?;
    let close = open
        + lines[open..]
            .iter()
            .position(|l| l == "    }")
            .ok_or("validate/mod.rs: the frontmatter block is not closed")?;
    lines.insert(close, format!("        {name}::check(ctx, diags);"));
    Ok(lines.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_modules_are_checked() {
        assert!(check_code("entrypoint-missing").is_ok());
        for bad in ["", "Bad", "a--b", "a-", "-a", "a_b", "name-missing"] {
            assert!(check_code(bad).is_err(), "{bad}");
        }
        assert_eq!(normalise_module("validate/x").unwrap(), "validate/x.rs");
        assert_eq!(
            normalise_module("crates/skillbake-build/src/validate/x.rs").unwrap(),
            "validate/x.rs"
        );
        assert!(normalise_module("../x").is_err());
        assert_eq!(pascal_case("body-too-long"), "BodyTooLong");
    }

    #[test]
    fn rows_go_after_their_module() {
        let text = "x\ncodes! {\n    /// a\n    A = \"a\", Error, \"m.rs\", \"A.\";\n    /// b\n    B = \"b\", Error, \"n.rs\", \"B.\";\n}\n";
        let out = insert_row(text, "m.rs", "ROW\n").unwrap();
        assert_eq!(out, "x\ncodes! {\n    /// a\n    A = \"a\", Error, \"m.rs\", \"A.\";\nROW\n    /// b\n    B = \"b\", Error, \"n.rs\", \"B.\";\n}\n");
        let out = insert_row(text, "new.rs", "ROW\n").unwrap();
        assert!(out.ends_with("\"B.\";\nROW\n}\n"), "{out}");
    }

    #[test]
    fn new_modules_are_registered() {
        let text = "//! x\n\npub mod body;\npub mod tools;\n\npub fn check_pack() {\n    if ctx.md.frontmatter.is_some() {\n        tools::check(ctx, diags);\n    }\n    body::check(ctx, diags);\n}\n";
        let out = register(text, "permission").unwrap();
        assert_eq!(out, "//! x\n\npub mod body;\npub mod permission;\npub mod tools;\n\npub fn check_pack() {\n    if ctx.md.frontmatter.is_some() {\n        tools::check(ctx, diags);\n        permission::check(ctx, diags);\n    }\n    body::check(ctx, diags);\n}\n");
    }
}
