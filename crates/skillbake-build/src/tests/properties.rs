//! Property tests of the compiler's front end and of the JSON escaping shared by the compiler
//! and the runtime: arbitrary bytes through the `SKILL.md` parser, generated YAML-ish packs
//! through the whole check, round trips of accepted packs through code generation, and
//! the Python-compatible escaper against Python's `json.dumps` and serde_json.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::generate::{generate, GenOptions};
use crate::parse::frontmatter;
use crate::{check, CheckOptions, Code, Severity};
use proptest::prelude::*;

/// Enough cases to shake out parser corners while keeping the suite quick in debug builds.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Arbitrary bytes as SKILL.md.

/// Random bytes, sometimes behind an opening `---` line and around a closing one, so the parser
/// gets past the first line often enough.
fn skill_md_bytes() -> impl Strategy<Value = Vec<u8>> {
    let bytes = || proptest::collection::vec(any::<u8>(), 0..256);
    prop_oneof![
        bytes(),
        bytes().prop_map(|b| [b"---\n".as_slice(), &b].concat()),
        (bytes(), bytes()).prop_map(|(a, b)| [b"---\r\n".as_slice(), &a, b"\n---\n", &b].concat()),
        (bytes(), bytes())
            .prop_map(|(a, b)| [b"\xEF\xBB\xBF---\n".as_slice(), &a, b"\r---\r", &b].concat()),
    ]
}

// ---------------------------------------------------------------------------------------------
// A small grammar of YAML-ish frontmatter.

/// A frontmatter value before rendering.
#[derive(Debug, Clone)]
enum Node {
    /// Written as is after `key: ` (plain or quoted scalar, flow collection, alias).
    Inline(String),
    /// `- item` lines.
    List(Vec<Node>),
    /// Nested `key: value` lines.
    Map(Vec<(String, Node)>),
    /// A `|` or `>` block scalar with its lines.
    Block(char, Vec<String>),
    /// `&anchor` in front of a value.
    Anchored(String, Box<Node>),
}

/// How the frontmatter is laid out: indentation unit, separator after `:`.
#[derive(Debug, Clone)]
struct Layout {
    indent: &'static str,
    after_colon: &'static str,
}

fn scalar() -> impl Strategy<Value = String> {
    // YAML that parses, quoted strings with `:`, `#` and `---` inside included.
    let valid = prop_oneof![
        6 => prop::sample::select(vec![
            "my-skill",
            "hello world",
            "1.10",
            "2",
            "true",
            "null",
            "~",
            "-",
            "x # trailing comment",
            "...",
            "中文说明",
            "sql_query",
            "load_skill",
            "web_search",
            "sql_query, load_skill",
            "!!str 12",
            "\"--- not a delimiter\"",
            "'a: b # c'",
            "\"esc \\n \\t \\u00e9 \\\"\"",
            "{a: b, c: d}",
            "{}",
            "[]",
        ])
        .prop_map(str::to_string),
        3 => "[a-z][a-z0-9 _-]{0,12}",
        2 => "[a-z :#\\-]{0,12}".prop_map(|s| format!("\"{s}\"")),
        2 => "[a-z :#\\-']{0,12}".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
        2 => proptest::collection::vec("[a-z_]{1,8}", 0..4)
            .prop_map(|v| format!("[{}]", v.join(", "))),
        // Aliases: defined or not, depending on what came before.
        1 => prop::sample::select(vec!["*a", "*b"]).prop_map(str::to_string),
    ];
    // Text that YAML rejects or reads in a surprising way.
    let hostile = prop::sample::select(vec![
        "a: b",
        "---",
        "{unclosed",
        "[a, b",
        "@at",
        "`tick`",
        "%percent",
        "!tag value",
        "? q",
        "|",
        ">",
        "\"bad escape \\q\"",
        "\"unterminated",
        "*undefined",
    ])
    .prop_map(str::to_string);
    prop_oneof![12 => valid, 1 => hostile]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => prop::sample::select(vec![
            "name",
            "description",
            "tags",
            "required_tools",
            "metadata",
            "version",
            "license",
            "compatibility",
            "allowed-tools",
            "config",
            "author",
            "skill_type",
            "when_to_use",
            "requried_tools",
            "<<",
        ])
        .prop_map(str::to_string),
        5 => "[a-z][a-z0-9_-]{0,8}",
        1 => Just("\"quoted key\"".to_string()),
        1 => Just("'name'".to_string()),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        4 => scalar().prop_map(Node::Inline),
        1 => (
            prop::sample::select(vec!['|', '>']),
            proptest::collection::vec(
                prop::sample::select(vec!["line", "---", "", "a: b", "# not a comment", "\tTAB"])
                    .prop_map(str::to_string),
                0..4,
            ),
        )
            .prop_map(|(c, lines)| Node::Block(c, lines)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Node::List),
            proptest::collection::vec(("[a-z]{1,6}", inner.clone()), 0..4).prop_map(Node::Map),
            (prop::sample::select(vec!["a", "b"]), inner)
                .prop_map(|(a, n)| Node::Anchored(a.to_string(), Box::new(n))),
        ]
    })
}

/// Renders `node` as the value of a key at `depth`: returns the text that follows the key's `:`.
/// `anchors` holds the anchors defined so far; an alias to one not yet defined is written as a
/// plain scalar (the hostile scalars cover undefined aliases).
fn render_value(
    node: &Node,
    depth: usize,
    layout: &Layout,
    eol: &str,
    anchors: &mut Vec<String>,
) -> String {
    let ind = layout.indent.repeat(depth + 1);
    match node {
        Node::Inline(s) => match s.strip_prefix('*') {
            Some(a) if a != "undefined" && !anchors.iter().any(|d| d == a) => {
                format!("{}{a}", layout.after_colon)
            }
            _ => format!("{}{s}", layout.after_colon),
        },
        Node::List(items) => {
            let mut out = String::new();
            for item in items {
                out.push_str(eol);
                out.push_str(&ind);
                out.push('-');
                out.push_str(&render_value(item, depth + 1, layout, eol, anchors));
            }
            if items.is_empty() {
                out.push_str(" []");
            }
            out
        }
        Node::Map(entries) => {
            let mut out = String::new();
            for (k, v) in entries {
                out.push_str(eol);
                out.push_str(&ind);
                out.push_str(k);
                out.push(':');
                out.push_str(&render_value(v, depth + 1, layout, eol, anchors));
            }
            if entries.is_empty() {
                out.push_str(" {}");
            }
            out
        }
        Node::Block(c, lines) => {
            let mut out = format!(" {c}");
            for l in lines {
                out.push_str(eol);
                out.push_str(&ind);
                out.push_str(l);
            }
            out
        }
        // An anchor on an alias or on another anchor is a YAML error the hostile scalars
        // already cover; render the inner value alone.
        Node::Anchored(_, inner)
            if matches!(&**inner, Node::Anchored(..))
                || matches!(&**inner, Node::Inline(s) if s.starts_with('*')) =>
        {
            render_value(inner, depth, layout, eol, anchors)
        }
        Node::Anchored(a, inner) => {
            let value = render_value(inner, depth, layout, eol, anchors);
            // Defined once the node is complete: an alias inside its own anchor is recursion.
            anchors.push(a.clone());
            format!(" &{a}{value}")
        }
    }
}

/// A generated pack: the bytes of `SKILL.md` and an optional `schema.json`.
#[derive(Debug, Clone)]
struct Pack {
    skill_md: String,
    schema: Option<&'static str>,
}

fn name_entry() -> impl Strategy<Value = Option<(String, Node)>> {
    prop_oneof![
        6 => Just(Some(("name".to_string(), Node::Inline("my-skill".into())))),
        1 => prop::sample::select(vec![
            "\"my-skill\"",
            "'my-skill'",
            "&a my-skill",
            "My-Skill",
            "other",
        ])
        .prop_map(|v| Some(("name".to_string(), Node::Inline(v.into())))),
        1 => Just(None),
    ]
}

fn description_entry() -> impl Strategy<Value = Option<(String, Node)>> {
    prop_oneof![
        6 => scalar().prop_map(|v| Some(("description".to_string(), Node::Inline(v)))),
        1 => node().prop_map(|v| Some(("description".to_string(), v))),
        1 => Just(None),
    ]
}

fn body_line() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "# Title",
            "Some instructions.",
            "---",
            " --- ",
            "  indented  ",
            "\t",
            "{{ variable }}",
            "{% if x %}",
            "{# comment",
            "中文",
            "\u{a0}nbsp\u{2028}",
            "\u{1c}sep\u{1f}",
            "name: not frontmatter",
        ])
        .prop_map(str::to_string),
        "[ -~]{0,20}",
    ]
}

fn pack() -> impl Strategy<Value = Pack> {
    let layout = prop_oneof![
        12 => Just(Layout { indent: "  ", after_colon: " " }),
        2 => Just(Layout { indent: "    ", after_colon: " " }),
        2 => Just(Layout { indent: "  ", after_colon: "\t" }),
        1 => Just(Layout { indent: "\t", after_colon: " " }),
    ];
    let eol = prop_oneof![6 => Just("\n"), 3 => Just("\r\n"), 1 => Just("\r")];
    let extra = proptest::collection::vec((key(), node()), 0..4);
    let schema = prop_oneof![
        16 => Just(None),
        4 => Just(Some(concat!(
            r##"{"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "##,
            r#""$defs": {"x": {"type": "string"}}}"#,
        ))),
        1 => Just(Some(r#"{"type": "object", "properties": {"#)),
        1 => Just(Some(r#"{"type": 3}"#)),
        1 => Just(Some(r##"{"$ref": "#/$defs/missing"}"##)),
        1 => Just(Some(r#"{"$ref": "https://example.com/s.json"}"#)),
    ];
    (
        (any::<bool>(), layout, eol, any::<bool>()),
        (name_entry(), description_entry(), extra),
        proptest::collection::vec(body_line(), 0..6),
        ("[ \t\r\n]{0,3}", "[ \t\r\n]{0,3}", "[ \t]{0,2}"),
        schema,
    )
        .prop_flat_map(
            |((bom, layout, eol, trailing_eol), (name, desc, extra), body, ws, schema)| {
                let entries: Vec<(String, Node)> =
                    name.into_iter().chain(desc).chain(extra).collect();
                (
                    Just(entries).prop_shuffle(),
                    Just((bom, layout, eol, trailing_eol, body, ws, schema)),
                )
            },
        )
        .prop_map(
            |(
                entries,
                (bom, layout, eol, trailing_eol, body, (lead, trail, opener_ws), schema),
            )| {
                let mut s = String::new();
                if bom {
                    s.push('\u{feff}');
                }
                s.push_str("---");
                s.push_str(&opener_ws);
                s.push_str(eol);
                let mut anchors = Vec::new();
                for (k, v) in &entries {
                    s.push_str(k);
                    s.push(':');
                    s.push_str(&render_value(v, 0, &layout, eol, &mut anchors));
                    s.push_str(eol);
                }
                s.push_str("---");
                s.push_str(eol);
                s.push_str(&lead);
                s.push_str(&body.join(eol));
                s.push_str(&trail);
                if trailing_eol {
                    s.push_str(eol);
                }
                Pack {
                    skill_md: s,
                    schema,
                }
            },
        )
}

/// Writes `pack` as `<tmp>/my-skill/` and checks `<tmp>`.
fn check_pack(pack: &Pack) -> (tempfile::TempDir, crate::Checked) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my-skill");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), &pack.skill_md).unwrap();
    if let Some(schema) = pack.schema {
        std::fs::write(dir.join("schema.json"), schema).unwrap();
    }
    let checked = check(tmp.path(), &CheckOptions::default());
    (tmp, checked)
}

/// The text after the closing `---` line, found independently of the parser: after an optional
/// BOM the first line (trailing whitespace trimmed) is `---`, the frontmatter ends at the first
/// later line that is exactly `---`; lines end at `\n`, `\r\n` or a lone `\r`.
fn text_after_closing_line(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rest = text;
    let mut first = true;
    while !rest.is_empty() {
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let term = if rest[end..].starts_with("\r\n") {
            2
        } else {
            usize::from(end < rest.len())
        };
        let next = &rest[end + term..];
        if first {
            if line.trim_end() != "---" {
                return None;
            }
            first = false;
        } else if line == "---" {
            return Some(next);
        }
        rest = next;
    }
    None
}

// ---------------------------------------------------------------------------------------------
// JSON escaping.

fn json_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\\x00-\\x20\"\\\\/a\\x7f\u{e9}\u{4e2d}\u{2028}\u{feff}\u{10ffff}]{0,32}",
    ]
}

// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_never_panic_the_parser(bytes in skill_md_bytes()) {
        let mut diags = Vec::new();
        let parsed = frontmatter::parse(&bytes, "SKILL.md", &mut diags);
        match parsed {
            None => {
                prop_assert!(std::str::from_utf8(&bytes).is_err());
                prop_assert!(diags.iter().any(|d| d.code == Code::InvalidUtf8), "{:?}", diags);
            }
            Some(md) => {
                prop_assert!(std::str::from_utf8(&bytes).is_ok());
                prop_assert!(!md.body.contains('\r'));
                prop_assert_eq!(md.body.trim(), md.body.as_str());
            }
        }
        for d in &diags {
            prop_assert!(d.line.is_none_or(|l| l >= 1), "{:?}", d);
            prop_assert!(d.column.is_none_or(|c| c >= 1), "{:?}", d);
        }
    }

    #[test]
    fn generated_packs_are_accepted_or_get_an_error_on_a_file(pack in pack()) {
        let (_tmp, checked) = check_pack(&pack);
        let errors: Vec<_> = checked
            .report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        if !errors.is_empty() {
            prop_assert!(
                errors.iter().any(|d| !d.file.is_empty()
                    && (d.file.ends_with("SKILL.md")
                        || d.file.ends_with("schema.json")
                        || d.file == "skillbake.toml")),
                "{:?}",
                errors
            );
        }
        for d in &checked.report.diagnostics {
            prop_assert!(!d.file.is_empty(), "{:?}", d);
        }
    }

    /// `line-endings` fires exactly on the packs with a CR in `SKILL.md`, and its fix changes
    /// what the check finds in nothing but that diagnostic: the same other diagnostics at the
    /// same places, the same description and body.
    #[test]
    fn the_line_endings_fix_changes_nothing_but_line_endings(pack in pack()) {
        let (_tmp, checked) = check_pack(&pack);
        let ours = |c: &crate::Checked| -> Vec<(Code, Option<u32>, Option<u32>)> {
            c.report
                .diagnostics
                .iter()
                .filter(|d| d.code != Code::LineEndings)
                .map(|d| (d.code, d.line, d.column))
                .collect()
        };
        let fired: Vec<_> = checked
            .report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::LineEndings)
            .collect();
        prop_assert_eq!(fired.len(), usize::from(pack.skill_md.contains('\r')));
        let Some(d) = fired.first() else {
            return Ok(());
        };
        let fix = d.fix.as_deref().unwrap();
        let (lf, used) = crate::fix::apply_edits(&pack.skill_md, &fix.edits);
        prop_assert_eq!(used.len(), fix.edits.len());
        prop_assert_eq!(&lf, &pack.skill_md.replace("\r\n", "\n").replace('\r', "\n"));
        let (_tmp2, fixed) = check_pack(&Pack { skill_md: lf, schema: pack.schema });
        prop_assert_eq!(ours(&fixed), ours(&checked));
        let served = |c: &crate::Checked| -> Vec<(String, String)> {
            c.packs().map(|p| (p.description().to_string(), p.body().to_string())).collect()
        };
        prop_assert_eq!(served(&fixed), served(&checked));
    }

    #[test]
    fn escaped_strings_round_trip_through_serde_json(s in json_string()) {
        let mut escaped = String::new();
        skillbake_format::escape::json_into(&mut escaped, &s);
        let back: String = serde_json::from_str(&format!("\"{escaped}\"")).unwrap();
        prop_assert_eq!(back, s);
    }
}

/// The escaper against its reference, Python's `json.dumps(s, ensure_ascii=False)`: 2,000 strings
/// from the same strategy (fixed seed), sent to one `python3` in a batch.
#[test]
fn escaping_matches_python_json_dumps() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = json_string();
    let mut inputs: Vec<String> = (0..2000)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    // Every control character, the characters Python escapes by name, and non-BMP text.
    inputs.push((0u8..0x20).map(char::from).collect());
    inputs.push("\"\\/\u{7f}\u{85}\u{2028}\u{2029}\u{feff}\u{10ffff}😀".into());
    let script = "import json, sys\n\
        data = json.loads(sys.stdin.buffer.read().decode('utf-8'))\n\
        out = '\\n'.join(json.dumps(s, ensure_ascii=False) for s in data)\n\
        sys.stdout.buffer.write(out.encode('utf-8'))\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is required for the escaping test");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(serde_json::to_string(&inputs).unwrap().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let python = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = python.split('\n').collect();
    assert_eq!(lines.len(), inputs.len());
    for (s, expected) in inputs.iter().zip(lines) {
        let mut ours = String::from('"');
        skillbake_format::escape::json_into(&mut ours, s);
        ours.push('"');
        assert_eq!(ours, expected, "{s:?}");
    }
}

/// Accepted packs round-trip: they generate, and the body in the model is the text after the
/// closing line as DB-GPT normalises it. Run by hand to also check that the grammar above
/// yields accepted packs at all (about a fifth of them), so the property is never vacuous.
#[test]
fn accepted_packs_round_trip_through_generate() {
    let accepted = std::cell::Cell::new(0usize);
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let result = runner.run(&pack(), |pack| {
        let (_tmp, checked) = check_pack(&pack);
        if checked.report.has_errors() {
            return Ok(());
        }
        accepted.set(accepted.get() + 1);
        let opts = GenOptions {
            runtime_path: "::skillbake".into(),
            location_prefix: "skills".into(),
            signature: None,
        };
        prop_assert!(generate(&checked.skills, &opts).is_ok());
        prop_assert_eq!(checked.skills.len(), 1);
        let skill = &checked.skills[0];
        prop_assert_eq!(skill.name.as_str(), "my-skill");
        let after = text_after_closing_line(&pack.skill_md);
        prop_assert!(after.is_some(), "accepted without a closing line");
        prop_assert_eq!(
            &skill.body,
            &frontmatter::normalize_body(after.unwrap_or_default())
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        accepted.get() > 0,
        "no generated pack was accepted: the grammar no longer exercises the round trip"
    );
}
