//! The `skillbake` binary, driven as users and CI scripts drive it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn fixture(rel: &str) -> String {
    format!(
        "{}/crates/skillbake-build/tests/fixtures/{rel}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn check_bundled_packs_is_clean() {
    let o = run(&["check", "skills", "--color", "never"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "checked 5 packs: 0 errors, 0 warnings");
    // What the full catalog and the routing index cost, on every run.
    assert!(
        lines[1].starts_with("catalog (xml): 2,566 characters, about 773 tokens; routing index: "),
        "{out}"
    );
    assert_eq!(lines.len(), 2);
}

#[test]
fn check_json_contract() {
    let o = run(&[
        "check",
        &fixture("rules/name-dir-mismatch/fail"),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["packs"], 1);
    assert_eq!(v["errors"], 1);
    assert_eq!(v["warnings"], 0);
    let d = &v["diagnostics"][0];
    let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["code", "severity", "file", "line", "column", "message", "help"]
    );
    assert_eq!(d["code"], "name-dir-mismatch");
    assert_eq!(d["severity"], "error");
    assert!(d["file"].as_str().unwrap().ends_with("/SKILL.md"));
    assert!(!d["file"].as_str().unwrap().contains('\\'));
    assert!(d["line"].as_u64().unwrap() >= 2);
    assert!(d["column"].as_u64().unwrap() >= 1);
}

/// What the human renderer shows as a secondary label is in every machine format too: JSON
/// `related`, SARIF `relatedLocations`, a `note:` line of the GitHub annotation.
#[test]
fn related_places_reach_every_format() {
    let root = fixture("rules/duplicate-name/fail");
    let human = stdout(&run(&["check", &root, "--color", "never"]));
    assert!(
        human.contains(" ::: team-a/my-skill/SKILL.md:2:7"),
        "{human}"
    );
    assert!(human.contains("-------- first declared here"), "{human}");

    let o = run(&["check", &root, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["diagnostics"][0]["related"],
        serde_json::json!([{"file": "team-a/my-skill/SKILL.md", "line": 2, "column": 7,
            "message": "first declared here"}])
    );

    let o = run(&["check", &root, "--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let related = &v["runs"][0]["results"][0]["relatedLocations"][0];
    assert_eq!(related["message"]["text"], "first declared here");
    let loc = &related["physicalLocation"];
    assert!(loc["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .ends_with("duplicate-name/fail/team-a/my-skill/SKILL.md"));
    assert_eq!(loc["region"]["startLine"], 2);
    assert_eq!(loc["region"]["startColumn"], 7);
    assert_eq!(loc["region"]["endColumn"], 15);

    let github = stdout(&run(&["check", &root, "--format", "github"]));
    assert!(
        github.contains("%0Anote: first declared here: ")
            && github.contains("team-a/my-skill/SKILL.md:2:7%0Ahelp: "),
        "{github}"
    );
}

/// SARIF artifact locations are URI references: a space in a path is `%20`.
#[test]
fn sarif_uris_are_percent_encoded() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("my pack");
    std::fs::create_dir_all(&pack).unwrap();
    std::fs::write(
        pack.join("SKILL.md"),
        "---\nname: my-pack\ndescription: Does things. Use when asked.\n---\nBody.\n",
    )
    .unwrap();
    let o = run(&["check", tmp.path().to_str().unwrap(), "--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let uri = v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        ["uri"]
        .as_str()
        .unwrap();
    assert!(uri.ends_with("/my%20pack/SKILL.md"), "{uri}");
}

#[test]
fn check_warnings_exit_zero() {
    let o = run(&[
        "check",
        &fixture("rules/name-not-portable/fail"),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["errors"], 0);
    assert_eq!(v["warnings"], 1);
}

#[test]
fn check_github_annotations() {
    let path = fixture("rules/name-dir-mismatch/fail");
    let o = run(&["check", &path, "--format", "github"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("::error file={}/", path.replace(':', "%3A"))),
        "{first}"
    );
    assert!(
        first.contains(",line=") && first.contains(",col="),
        "{first}"
    );
    assert!(first.contains("::[name-dir-mismatch] "), "{first}");
    assert!(out.ends_with("checked 1 pack: 1 error, 0 warnings\n"));
}

#[test]
fn check_single_pack_and_several_roots() {
    let pack = fixture("accepted/grouped");
    let o = run(&["check", &pack, "skills"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = run(&["check", "skills/excel", "--quiet"]);
    assert_eq!(stdout(&o), "checked 1 pack: 0 errors, 0 warnings\n");
}

#[test]
fn check_usage_and_unreadable_paths_exit_two() {
    let o = run(&["check", "does/not/exist"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does/not/exist"));
    assert_eq!(run(&["check", "Cargo.toml"]).status.code(), Some(2));
    assert_eq!(run(&["check", "--format", "yaml"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn load_defaults_to_the_packs_own_skill_md() {
    let o = run(&["load", "csv-data-analysis"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        format!(
            "{}\n",
            skillbake_cli::load_skill("csv-data-analysis", "skills/csv-data-analysis/SKILL.md")
        )
    );
}

#[test]
fn load_not_found_exits_one_with_output() {
    let o = run(&["load", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "{\"chunks\": [{\"output_type\": \"text\", \"content\": \"Skill 'nope' not found\"}]}\n"
    );
    let o = run(&["load", "excel", "missing.md"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("File 'missing.md' not found in skill 'excel'"));
}

#[test]
fn cat_writes_exact_bytes() {
    let o = run(&["cat", "read-file", "SKILL.md"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        o.stdout,
        std::fs::read("skills/read-file/SKILL.md").unwrap()
    );
    let o = run(&["cat", "read-file", "nope.txt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no file 'nope.txt'"));
    assert_eq!(run(&["cat", "nope", "SKILL.md"]).status.code(), Some(1));
}

#[test]
fn list_text_and_json() {
    let o = run(&["list"]);
    let names: Vec<String> = stdout(&o)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(names, skillbake_cli::BUNDLED.names().collect::<Vec<_>>());
    let o = run(&["list", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 5);
    assert_eq!(v[0]["name"], "csv-data-analysis");
    assert_eq!(v[0]["location"], "skills/csv-data-analysis/SKILL.md");
}

#[test]
fn list_is_snapshotted() {
    insta::assert_snapshot!("list_text", stdout(&run(&["list"])));
}

/// The binary serves from its embedded registry: copied into an empty folder far from the
/// sources and run there, it answers exactly as the library does, for every pack and file.
#[test]
fn serves_without_the_skills_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("skillbake-copy");
    std::fs::copy(BIN, &bin).unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run_there = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(&empty)
            .env_remove("SKILLBAKE_SKILLS_DIR")
            .output()
            .unwrap()
    };
    assert!(!Path::new(&empty).join("skills").exists());
    for skill in skillbake_cli::BUNDLED.iter() {
        let o = run_there(&["load", skill.name()]);
        assert_eq!(
            stdout(&o),
            format!("{}\n", skill.load(skill.skill_md_path()))
        );
        for f in skill.files() {
            let o = run_there(&["cat", skill.name(), f.path()]);
            assert_eq!(o.stdout, f.bytes(), "{}/{}", skill.name(), f.path());
            let o = run_there(&["load", skill.name(), f.path()]);
            assert_eq!(stdout(&o), format!("{}\n", skill.load(f.path())));
        }
    }
}

/// `load` and `cat` written plainly are answered before clap is built (`src/cli/fast.rs`); with
/// `--` in front of the arguments they go through clap. Both must print the same bytes on both
/// streams and exit with the same code, for hits, misses and odd paths.
#[test]
fn fast_path_answers_exactly_as_the_parsed_commands() {
    let cases: &[&[&str]] = &[
        &["load", "csv-data-analysis"],
        &[
            "load",
            "csv-data-analysis",
            "skills/csv-data-analysis/SKILL.md",
        ],
        &["load", "CSV-Data-Analysis", "SKILL.md"],
        &["load", "excel", ""],
        &["load", "excel", "scripts/../SKILL.md"],
        &[
            "load",
            "read-file",
            "skills\\read-file\\scripts\\read_file.py",
        ],
        &["load", "excel", "missing.md"],
        &["load", "nope"],
        &["load", "nope", "x y.md"],
        &["cat", "read-file", "SKILL.md"],
        &["cat", "Read-File", "./SKILL.md"],
        &["cat", "read-file", "nope.txt"],
        &["cat", "nope", "SKILL.md"],
    ];
    for args in cases {
        let fast = run(args);
        let mut parsed_args = vec![args[0], "--"];
        parsed_args.extend_from_slice(&args[1..]);
        let parsed = run(&parsed_args);
        assert_eq!(fast.status.code(), parsed.status.code(), "{args:?}");
        assert_eq!(fast.stdout, parsed.stdout, "{args:?}");
        assert_eq!(fast.stderr, parsed.stderr, "{args:?}");
    }
    // Anything else is clap's: options, help, wrong arity.
    assert_eq!(run(&["load"]).status.code(), Some(2));
    assert_eq!(run(&["cat", "read-file"]).status.code(), Some(2));
    assert_eq!(run(&["load", "a", "b", "c"]).status.code(), Some(2));
    assert!(stdout(&run(&["load", "--help"])).contains("Usage"));
}

#[test]
fn load_and_cat_take_version_ranges() {
    let by_name = run(&["load", "send-email"]);
    for request in [
        "send-email@1",
        "send-email@^1.0",
        "send-email@=1.0.0",
        "Send-Email@*",
    ] {
        let o = run(&["load", request]);
        assert_eq!(o.status.code(), Some(0), "{request}");
        assert_eq!(o.stdout, by_name.stdout, "{request}");
    }
    let o = run(&["load", "send-email@2"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "{\"chunks\": [{\"output_type\": \"text\", \"content\": \"Skill 'send-email@2' not found\"}]}\n"
    );
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err,
        "skillbake: `send-email@2`: no version of `send-email` matches; embedded versions: 1.0.0\n"
    );
    let o = run(&["load", "send-email@one"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("the text after `@` is not a version range"));

    let o = run(&["cat", "send-email@=1.0.0", "SKILL.md"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        o.stdout,
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/send-email/SKILL.md"))
            .unwrap()
    );
    let o = run(&["cat", "send-email@>=2", "SKILL.md"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn diff_usage_errors_exit_2() {
    for args in [
        &["diff"][..],
        &["diff", "skills"],
        &["diff", "--baseline", "HEAD", "a", "b"],
        &["diff", "skills", "no-such-folder-or-revision-xyz"],
    ] {
        let o = run(args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // Two folders: no git needed.
    let o = run(&["diff", "skills", "skills", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["unchanged"], 5);
}

/// `load --var` renders the body as DB-GPT renders prompt templates, from the precompiled
/// template; without `--var` the body is served as written (DB-GPT's `load_skill`).
#[test]
fn load_renders_the_body_with_vars() {
    let skill = skillbake_cli::BUNDLED
        .get("financial-report-analyzer")
        .unwrap();
    assert_eq!(
        skill.template_vars().collect::<Vec<_>>(),
        ["company", "period"]
    );
    let line = |args: &[&str]| {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        stdout(&o)
            .lines()
            .find(|l| l.starts_with("分析对象"))
            .unwrap()
            .to_string()
    };
    let base = ["load", "--format", "skill-tag", "financial-report-analyzer"];
    let rendered = [
        line(
            &[
                &base[..],
                &["--var", "company=贵州茅台", "--var", "period=2024"],
            ]
            .concat(),
        ),
        line(&[&base[..], &["--var", "company=Contoso"]].concat()),
        line(&[&base[..], &["--var", "unused=1"]].concat()),
        line(&base),
    ];
    insta::assert_snapshot!("load_var", rendered.join("\n"));
    let o = run(&["load", "financial-report-analyzer", "--var", "period=2024"]);
    let reply = stdout(&o);
    assert!(reply.starts_with(
        r#"{"chunks": [{"output_type": "text", "content": "Skill: financial-report-analyzer"}"#
    ));
    assert!(reply.contains("报告期 2024"));
    assert_eq!(
        skillbake_cli::BUNDLED
            .render("Financial-Report-Analyzer", &[("period", "Q3")])
            .map(|b| b.contains("报告期 Q3")),
        Ok(true)
    );
    assert_eq!(
        skillbake_cli::BUNDLED.render("nope", &[]),
        Err(skillbake::RenderError::SkillNotFound)
    );
    let o = run(&[
        "load",
        "financial-report-analyzer",
        "scripts/calculate_ratios.py",
        "--var",
        "a=1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["load", "financial-report-analyzer", "--var", "novalue"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Writes every embedded file under `dir` at its skill path, as an MCP host would cache it.
fn materialise(dir: &Path) {
    for skill in skillbake_cli::BUNDLED.all_versions() {
        let root = skillbake_mcp::skill_root(&skill);
        let root = root.strip_prefix("skill://").unwrap();
        for file in skill.files() {
            let path = dir.join(root).join(file.path());
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file.bytes()).unwrap();
        }
    }
}

/// `skillbake manifest` is what `skills/list` serves; `skillbake verify` finds an exact copy
/// exact and names every file that differs (in size, or in content only), is missing, or is
/// extra.
#[test]
fn manifest_and_verify_a_materialised_copy() {
    let o = run(&["manifest", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let entries: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let server = skillbake_mcp::Server::new(&skillbake_cli::BUNDLED).unwrap();
    let listed = server.skills_page(None).unwrap().skills;
    assert_eq!(entries.as_array().unwrap().len(), listed.len());
    for (json, entry) in entries.as_array().unwrap().iter().zip(&listed) {
        assert_eq!(json["uri"], entry.uri.as_str());
        assert_eq!(
            json["frontmatter"],
            serde_json::Value::Object(entry.frontmatter.clone())
        );
        let digests: Vec<&str> = json["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["digest"].as_str().unwrap())
            .collect();
        let served: Vec<&str> = entry.resources.iter().map(|r| r.digest.as_str()).collect();
        assert_eq!(digests, served);
    }
    let text = run(&["manifest"]);
    assert_eq!(text.status.code(), Some(0));
    insta::assert_snapshot!("manifest_text", stdout(&text));

    let dir = tempfile::tempdir().unwrap();
    let verify = |what: &str| {
        let o = Command::new(BIN)
            .args(["verify", "copy"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        (o.status.code(), format!("{what}:\n{}", stdout(&o)))
    };
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    materialise(&copy);
    let (code, exact) = verify("exact");
    assert_eq!(code, Some(0), "{exact}");
    std::fs::write(
        copy.join("read-file/SKILL.md"),
        "---\nname: read-file\n---\n",
    )
    .unwrap();
    let md = copy.join("send-email/SKILL.md");
    let mut bytes = std::fs::read(&md).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&md, bytes).unwrap();
    std::fs::remove_file(copy.join("excel/schema.json")).unwrap();
    std::fs::write(copy.join("excel/notes.txt"), "not embedded\n").unwrap();
    let (code, changed) = verify("changed");
    assert_eq!(code, Some(1), "{changed}");
    insta::assert_snapshot!("verify", format!("{exact}\n{changed}"));
    let o = run(&["verify", "/no/such/folder"]);
    assert_eq!(o.status.code(), Some(2));
}
