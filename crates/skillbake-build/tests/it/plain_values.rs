//! Plain YAML values that loaders read other than they look (`yaml-tab`, `yaml-inline-comment`):
//! what is reported and what is not, and that every fix offered yields a frontmatter that reads
//! as intended (the same data for a tab, the whole line's text for a `#`) and checks clean.

use skillbake_build::fix::apply_edits;
use skillbake_build::{check_files, CheckOptions, Code, Diagnostic};
use yaml_serde::Value;

/// A pack whose frontmatter is `name: my-skill` and then `rest`.
fn skill_md(rest: &str) -> String {
    format!("---\nname: my-skill\n{rest}---\n# My skill\n\nSteps to follow.\n")
}

/// The diagnostics of `code` for the pack of [`skill_md`]`(rest)`.
fn diagnose(rest: &str, code: Code) -> (String, Vec<Diagnostic>) {
    let text = skill_md(rest);
    let tmp = tempfile::tempdir().unwrap();
    let checked = check_files(
        tmp.path(),
        &CheckOptions::default(),
        "my-skill",
        vec![("SKILL.md".into(), text.clone().into_bytes())],
    );
    assert!(
        checked
            .report
            .diagnostics
            .iter()
            .all(|d| d.code != Code::YamlSyntax),
        "{text:?} is not YAML"
    );
    let found = checked
        .report
        .diagnostics
        .into_iter()
        .filter(|d| d.code == code)
        .collect();
    (text, found)
}

/// The frontmatter of a `SKILL.md` as YAML reads it.
fn frontmatter(text: &str) -> Value {
    let yaml = text.split("---\n").nth(1).unwrap();
    yaml_serde::from_str(yaml).unwrap()
}

/// Applies every fix of `diags` to `text`.
fn fixed(text: &str, diags: &[Diagnostic]) -> String {
    let edits: Vec<_> = diags
        .iter()
        .filter_map(|d| d.fix.as_deref())
        .flat_map(|f| f.edits.clone())
        .collect();
    apply_edits(text, &edits).0
}

#[test]
fn tabs_outside_quotes_are_fixed_to_the_same_data() {
    for (rest, line, column) in [
        ("description: Summarise.\tUse when asked.\n", 3, 24),
        ("description:\tSummarise text.\n", 3, 13),
        ("description: Summarise text.\t\n", 3, 29),
        ("description: a \tb\t# a comment\n", 3, 16),
        (
            "description: Summarise.\nmetadata:\n  layout: two\tcolumns\n",
            5,
            14,
        ),
        (
            "description: Summarise.\nmetadata:\n  tags:\n  - a\tb\n",
            6,
            6,
        ),
        (
            "description: Summarise.\nmetadata:\n  tags: [a,\tb]\n",
            5,
            12,
        ),
        (
            "description: Summarise.\nmetadata:\n  k: \"quoted\"\t\n",
            5,
            14,
        ),
    ] {
        let (text, diags) = diagnose(rest, Code::YamlTab);
        assert_eq!(diags.len(), 1, "{rest:?}: {diags:?}");
        let d = &diags[0];
        assert_eq!((d.line, d.column), (Some(line), Some(column)), "{rest:?}");
        assert!(d.fix.is_some(), "{rest:?}: no fix");
        let after = fixed(&text, &diags);
        assert_eq!(
            frontmatter(&after),
            frontmatter(&text),
            "{rest:?} → {after:?}"
        );
        let tmp = tempfile::tempdir().unwrap();
        let recheck = check_files(
            tmp.path(),
            &CheckOptions::default(),
            "my-skill",
            vec![("SKILL.md".into(), after.clone().into_bytes())],
        );
        assert!(
            recheck
                .report
                .diagnostics
                .iter()
                .all(|d| d.code != Code::YamlTab),
            "{after:?}: {:?}",
            recheck.report.diagnostics
        );
    }
}

#[test]
fn a_tab_in_a_value_over_several_lines_is_reported_without_a_fix() {
    let (_, diags) = diagnose("description: Summarise\n  text\tfiles.\n", Code::YamlTab);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!((diags[0].line, diags[0].column), (Some(4), Some(7)));
    assert!(diags[0].fix.is_none());
}

#[test]
fn tabs_in_quotes_block_scalars_comments_and_the_body_are_text() {
    for rest in [
        "description: \"Summarise\ttext.\"\n",
        "description: 'Summarise\ttext.'\n",
        "description: |\n  Summarise\ttext.\n",
        "description: >-\n  Summarise\n  \ttext.\n",
        "description: Summarise text. # a\tcomment\n",
        "description: \"Summarise\n\ttext.\"\n",
    ] {
        let (_, diags) = diagnose(rest, Code::YamlTab);
        assert!(diags.is_empty(), "{rest:?}: {diags:?}");
    }
}

#[test]
fn a_hash_that_looks_like_text_is_quoted_with_the_rest_of_the_line() {
    for (rest, want) in [
        (
            "description: Use for C# and F# #dotnet\n",
            "Use for C# and F# #dotnet",
        ),
        (
            "description: Fixes issue #42 and #43 of the tracker\n",
            "Fixes issue #42 and #43 of the tracker",
        ),
        (
            "description: Uses the standardized ## [YYYY-MM-DD] header format\n",
            "Uses the standardized ## [YYYY-MM-DD] header format",
        ),
        (
            "description: Summarise.\nmetadata:\n  - note: see #setup\n",
            "see #setup",
        ),
    ] {
        let (text, diags) = diagnose(rest, Code::YamlInlineComment);
        assert_eq!(diags.len(), 1, "{rest:?}: {diags:?}");
        let hash = rest.find(" #").unwrap() + 1;
        let line = rest[..hash].matches('\n').count() + 3;
        let column = hash - rest[..hash].rfind('\n').map_or(0, |i| i + 1) + 1;
        assert_eq!(
            (diags[0].line, diags[0].column),
            (Some(line as u32), Some(column as u32)),
            "{rest:?}"
        );
        let after = fixed(&text, &diags);
        let fm = frontmatter(&after);
        let read = match &fm {
            Value::Mapping(m) if m.contains_key("metadata") => m["metadata"][0]["note"].clone(),
            Value::Mapping(m) => m["description"].clone(),
            _ => unreachable!(),
        };
        assert_eq!(read, Value::String(want.into()), "{after:?}");
        let (_, again) = diagnose(
            after
                .split("---\n")
                .nth(1)
                .unwrap()
                .strip_prefix("name: my-skill\n")
                .unwrap(),
            Code::YamlInlineComment,
        );
        assert!(again.is_empty(), "{after:?}: {again:?}");
    }
}

#[test]
fn a_hash_that_looks_like_a_comment_is_reported_without_a_fix() {
    for rest in [
        "description: Summarise text.  # shortened later\n",
        "description: Summarise text. # shortened later\n",
        "description: Summarise text.  #later\n",
        "description: Summarise text. #\n",
        "description: Summarise\n  text #files\n",
        "description: Fixes issue #42 # and a real comment\n",
    ] {
        let (_, diags) = diagnose(rest, Code::YamlInlineComment);
        assert_eq!(diags.len(), 1, "{rest:?}: {diags:?}");
        assert!(diags[0].fix.is_none(), "{rest:?}");
    }
}

#[test]
fn comments_after_other_values_and_hashes_in_text_pass() {
    for rest in [
        "description: Summarise.\ntimeout: 30  # seconds\n",
        "description: Summarise.\nmetadata:\n  beta: true #for now\n  ratio: 1.5 #x\n  none: ~ #x\n",
        "description: \"Use for C# #dotnet\"  # quoted\n",
        "description: Use for C# and F#\n",
        "description: See https://example.com/docs#setup\n",
        "description: |\n  Use for #dotnet\n",
        "description: Summarise.\n# a comment of its own\n",
        "description: Summarise.\nmetadata: # comment after a key\n  a: b\n",
    ] {
        let (_, diags) = diagnose(rest, Code::YamlInlineComment);
        assert!(diags.is_empty(), "{rest:?}: {diags:?}");
    }
}
