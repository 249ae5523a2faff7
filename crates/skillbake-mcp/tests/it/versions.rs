//! Two real versions of a bundled pack, built and served side by side. A temporary crate embeds
//! `send-email` 1.0.0 (the bundled pack, kept in `send-email@1.0.0/`) and a 2.0.0 with a breaking
//! change (`to` renamed to `recipients`, its script changed to match) through `build.rs` exactly
//! as a downstream agent would, twice: once as is (agents get 2.0.0 by name) and once with
//! `Config::require("send-email", "^1")` (agents get 1.0.0). Its binary answers `load_skill`
//! and serves both registries over MCP, driven here by rmcp's client.
//!
//! 2.0.0 also ships an example pack (`examples/minimal/SKILL.md`), as a skill about writing
//! skills does. Both versions' instructions and scripts come out of one build: whatever a request names
//! (`send-email`, `send-email@1`, `send-email@=2.0.0`), the instructions and the script served
//! for it are the same version's; a path into another version's folder names nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common::{copy_tree, Order};
use rmcp::model::{
    CallToolRequestParams, GetSkillRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceRequestParams, ResourceContents, SkillResources,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const BUILD_RS: &str = r#"fn main() -> Result<(), skillbake_build::Error> {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    for (name, pin) in [("newest", None), ("pinned", Some("^1"))] {
        let dir = out.join(name);
        std::fs::create_dir_all(&dir).expect("out dir");
        let mut config = skillbake_build::Config::new();
        config.skills_dir("skills").ignore_env().out_dir(dir);
        if let Some(range) = pin {
            config.require("send-email", range);
        }
        config.compile()?;
    }
    Ok(())
}
"#;

const MAIN_RS: &str = r#"mod newest {
    include!(concat!(env!("OUT_DIR"), "/newest/skillbake_registry.rs"));
}
mod pinned {
    include!(concat!(env!("OUT_DIR"), "/pinned/skillbake_registry.rs"));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let registry = match args.first().map(String::as_str) {
        Some("pinned") => &pinned::REGISTRY,
        _ => &newest::REGISTRY,
    };
    match args.get(1).map(String::as_str) {
        Some("serve") => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime
                .block_on(skillbake_mcp::serve_stdio(registry))
                .expect("serve");
            runtime.shutdown_background();
        }
        Some("load") => {
            let name = args.get(2).map_or("", String::as_str);
            let path = args.get(3).map_or("", String::as_str);
            println!("{}", registry.load_skill(name, path));
        }
        Some("catalog") => {
            println!("{}", registry.catalog(skillbake::CatalogFormat::Dbgpt, None).text);
        }
        Some("versions") => {
            for s in registry.all_versions() {
                println!("{} {} {} default={}", s.name(), s.version().unwrap_or("-"), s.location(), s.is_default());
            }
        }
        other => panic!("unknown command {other:?}"),
    }
}
"#;

/// The `SKILL.md` of the example pack that send-email 2.0.0 ships in `examples/minimal/`.
const NESTED_SKILL_MD: &str =
    "---\nname: minimal\ndescription: The smallest pack, shipped as an example.\n---\n\n# minimal\n";

/// Builds the consumer once (all tests share it) and returns its binary.
fn consumer() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let repo = &crate::common::workspace();
        // Kept for the life of the test process: the binary runs from it.
        let dir = Box::leak(Box::new(tempfile::tempdir().unwrap()));
        let dir = dir.path();
        let skills = dir.join("skills");
        copy_tree(&repo.join("skills/send-email"), &skills.join("send-email@1.0.0"), Order::Sorted);
        let v2 = skills.join("send-email");
        copy_tree(&repo.join("skills/send-email"), &v2, Order::Sorted);
        let md = std::fs::read_to_string(v2.join("SKILL.md")).unwrap();
        let line = md.lines().find(|l| l.starts_with("version:")).unwrap();
        assert_eq!(line, "version: \"1.0.0\"", "the bundled pack's version changed");
        let md = md.replacen(line, "version: \"2.0.0\"", 1).replacen(
            "| `to` | string or string[] | yes |",
            "| `recipients` | string or string[] | yes |",
            1,
        );
        std::fs::write(v2.join("SKILL.md"), md).unwrap();
        let schema = std::fs::read_to_string(v2.join("schema.json"))
            .unwrap()
            .replacen("\"to\": {", "\"recipients\": {", 1)
            .replace("\"required\": [\"to\",", "\"required\": [\"recipients\",");
        std::fs::write(v2.join("schema.json"), schema).unwrap();
        let script = v2.join("scripts/send_email.py");
        let text = std::fs::read_to_string(&script).unwrap();
        std::fs::write(&script, format!("# send-email 2.0.0: `recipients` replaces `to`.\n{text}"))
            .unwrap();
        // An example pack shipped inside 2.0.0: a file of send-email, not a skill of its own.
        let example = v2.join("examples/minimal");
        std::fs::create_dir_all(&example).unwrap();
        std::fs::write(example.join("SKILL.md"), NESTED_SKILL_MD).unwrap();

        let manifest = format!(
            "[package]\nname = \"two-versions\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n\
             [dependencies]\nskillbake = {{ path = {:?} }}\nskillbake-mcp = {{ path = {:?} }}\n\
             tokio = {{ version = \"1\", features = [\"rt\"] }}\n\n\
             [build-dependencies]\nskillbake-build = {{ path = {:?} }}\n",
            repo.join("crates/skillbake").display().to_string(),
            repo.join("crates/skillbake-mcp").display().to_string(),
            repo.join("crates/skillbake-build").display().to_string()
        );
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        std::fs::write(dir.join("build.rs"), BUILD_RS).unwrap();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/main.rs"), MAIN_RS).unwrap();
        // Shared with the rebuild test: the build helper and its dependencies compile once.
        let target = crate::common::downstream_target();
        let o = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--offline", "--quiet"])
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("SKILLBAKE_SKILLS_DIR")
            .env_remove("RUSTFLAGS")
            .env("CARGO_TERM_COLOR", "never")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        target.join("debug").join(format!("two-versions{}", std::env::consts::EXE_SUFFIX))
    })
}

fn run(args: &[&str]) -> String {
    let o = Command::new(consumer()).args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The content of a reply's last chunk.
fn last_chunk(reply: &str) -> String {
    let v: Value = serde_json::from_str(reply.trim_end()).unwrap();
    v["chunks"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn both_versions_are_embedded_and_the_requirement_picks_the_default() {
    assert_eq!(
        run(&["newest", "versions"]),
        "send-email 1.0.0 skills/send-email@1.0.0 default=false\nsend-email 2.0.0 skills/send-email default=true\n"
    );
    assert_eq!(
        run(&["pinned", "versions"]),
        "send-email 1.0.0 skills/send-email@1.0.0 default=true\nsend-email 2.0.0 skills/send-email default=false\n"
    );
    // A catalog lists each skill once, at the version an agent gets.
    assert_eq!(
        run(&["newest", "catalog"]).matches("- send-email:").count(),
        1
    );
}

#[test]
fn lookups_by_name_and_range_serve_one_version_s_instructions_and_script() {
    for (registry, request, version) in [
        ("newest", "send-email", "2.0.0"),
        ("newest", "send-email@1", "1.0.0"),
        ("newest", "send-email@^1.0", "1.0.0"),
        ("newest", "send-email@=1.0.0", "1.0.0"),
        ("newest", "Send-Email@2", "2.0.0"),
        ("pinned", "send-email", "1.0.0"),
        ("pinned", "send-email@>=2", "2.0.0"),
    ] {
        let body = last_chunk(&run(&[registry, "load", request, ""]));
        let script = last_chunk(&run(&[registry, "load", request, "scripts/send_email.py"]));
        let v2 = body.contains("| `recipients` |");
        assert_eq!(v2, version == "2.0.0", "{registry} {request}: instructions");
        assert_eq!(
            script.starts_with("# send-email 2.0.0"),
            version == "2.0.0",
            "{registry} {request}: script"
        );
    }
    // A path into the other version's folder names nothing; neither does a range no version meets.
    let cross = run(&[
        "newest",
        "load",
        "send-email",
        "skills/send-email@1.0.0/scripts/send_email.py",
    ]);
    assert!(
        last_chunk(&cross).starts_with(
            "File 'skills/send-email@1.0.0/scripts/send_email.py' not found in skill 'send-email'"
        ),
        "{cross}"
    );
    assert_eq!(
        run(&["newest", "load", "send-email@3", ""]).trim_end(),
        r#"{"chunks": [{"output_type": "text", "content": "Skill 'send-email@3' not found"}]}"#
    );
}

/// Runs `body` with rmcp's client connected over stdio to the consumer's server of the
/// `newest` registry, and closes the connection after it.
fn with_client(body: impl AsyncFnOnce(&RunningService<RoleClient, ()>)) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut cmd = tokio::process::Command::new(consumer());
            cmd.args(["newest", "serve"]);
            let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
            body(&client).await;
            client.cancel().await.unwrap();
        });
}

#[test]
fn the_mcp_server_serves_both_versions() {
    with_client(async |client| {
        let call = |name: &'static str, args: Value| {
            let args = match args {
                Value::Object(o) => o,
                _ => unreachable!(),
            };
            client.call_tool(CallToolRequestParams::new(name).with_arguments(args))
        };
        let listed = call("list_skills", json!({})).await.unwrap();
        let listed: Value =
            serde_json::from_str(&listed.content[0].as_text().unwrap().text).unwrap();
        assert_eq!(listed[0]["name"], "send-email");
        assert_eq!(listed[0]["version"], "2.0.0");
        assert_eq!(listed[0]["versions"], json!(["1.0.0", "2.0.0"]));

        for (request, version) in [("send-email", "2.0.0"), ("send-email@1", "1.0.0")] {
            let r = call("load_skill", json!({"skill_name": request}))
                .await
                .unwrap();
            let text = &r.content[0].as_text().unwrap().text;
            assert_eq!(
                text.contains("| `recipients` |"),
                version == "2.0.0",
                "{request}"
            );
            let path = if version == "2.0.0" {
                "skills/send-email/SKILL.md"
            } else {
                "skills/send-email@1.0.0/SKILL.md"
            };
            assert!(text.contains(&format!("File path: {path}")), "{text}");
        }
        // Routing picks among skills at the version agents get by name.
        let found = call(
            "find_skills",
            json!({"query": "email the weekly report to alice", "top_k": 1}),
        )
        .await
        .unwrap();
        let found: Value = serde_json::from_str(&found.content[0].as_text().unwrap().text).unwrap();
        assert_eq!(found[0]["name"], "send-email", "{found}");
        assert_eq!(found[0]["location"], "skills/send-email/SKILL.md");
        assert!(found[0]["parameters"]["properties"]
            .get("recipients")
            .is_some());

        // The pack tool is the version agents get by name.
        let tools = client.list_all_tools().await.unwrap();
        let tool = tools.iter().find(|t| t.name == "send-email").unwrap();
        assert!(tool
            .input_schema
            .get("properties")
            .unwrap()
            .get("recipients")
            .is_some());

        // Every version's files are resources; the other version under `v{version}/`, and
        // still readable under the `name@version` alias of earlier releases.
        let resources = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        let old = "skill://v1.0.0/send-email/scripts/send_email.py";
        assert!(
            uris.contains(&old) && uris.contains(&"skill://send-email/scripts/send_email.py"),
            "{uris:?}"
        );
        for uri in [old, "skill://send-email%401.0.0/scripts/send_email.py"] {
            let read = client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .unwrap();
            match &read.contents[0] {
                ResourceContents::TextResourceContents { text, .. } => {
                    assert!(!text.starts_with("# send-email 2.0.0"));
                    assert!(text.contains("def main"), "{text}");
                }
                other => panic!("{other:?}"),
            }
        }

        // The skills extension lists both versions, each under its own skill path, and
        // every file verifies against its entry with rmcp's own check.
        let skills = client.list_all_skills().await.unwrap();
        let listed: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        assert!(
            listed.contains(&"skill://v1.0.0/send-email/SKILL.md"),
            "{listed:?}"
        );
        assert!(
            listed.contains(&"skill://send-email/SKILL.md"),
            "{listed:?}"
        );
        for skill in &skills {
            let got = client
                .get_skill(GetSkillRequestParams::new(skill.uri.clone()))
                .await
                .unwrap();
            assert_eq!(&got.skill, skill);
            let SkillResources::Files(files) = &skill.resources else {
                panic!("{}: dynamic", skill.uri)
            };
            for file in files {
                let read = client
                    .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
                    .await
                    .unwrap();
                let bytes = match &read.contents[0] {
                    ResourceContents::TextResourceContents { text, .. } => text.as_bytes(),
                    other => panic!("{other:?}"),
                };
                file.verify(bytes).unwrap();
            }
        }
    });
}

/// The skill paths of the MCP Skills extension, as the README's "URIs" paragraph describes
/// them: the version agents get by name at `skill://NAME`, every version at
/// `skill://vVERSION/NAME`; reads match the name case-insensitively while `skills/get` wants the
/// listed URI exactly; an example pack shipped inside a pack is one of its files, not a skill.
#[test]
fn skill_paths_of_versions_case_folded_names_and_nested_packs() {
    with_client(async |client| {
        let read = |uri: &str| {
            let uri = uri.to_string();
            let request = ReadResourceRequestParams::new(uri.clone());
            let client = &client;
            async move {
                match client.read_resource(request).await {
                    Ok(r) => match &r.contents[0] {
                        ResourceContents::TextResourceContents { text, .. } => text.clone(),
                        other => panic!("{other:?}"),
                    },
                    Err(e) => panic!("{uri}: {e}"),
                }
            }
        };

        // Every version once, at its own skill path; the nested pack is not listed.
        let skills = client.list_all_skills().await.unwrap();
        let mut listed: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        listed.sort_unstable();
        assert_eq!(
            listed,
            [
                "skill://send-email/SKILL.md",
                "skill://v1.0.0/send-email/SKILL.md"
            ]
        );
        let files = |uri: &str| -> Vec<String> {
            let skill = skills.iter().find(|s| s.uri == uri).unwrap();
            let SkillResources::Files(files) = &skill.resources else {
                panic!("{uri}: dynamic")
            };
            files.iter().map(|f| f.uri.clone()).collect()
        };
        // The nested pack is a file of the version that ships it, and only of that one.
        let nested = "skill://send-email/examples/minimal/SKILL.md";
        assert!(files("skill://send-email/SKILL.md")
            .iter()
            .any(|f| f == nested));
        assert!(!files("skill://v1.0.0/send-email/SKILL.md")
            .iter()
            .any(|f| f.contains("examples")));
        assert_eq!(read(nested).await, NESTED_SKILL_MD);
        let examples = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(
                "skill://send-email/examples",
            ))
            .await
            .unwrap();
        let children: Vec<(&str, Option<&str>)> = examples
            .resources
            .iter()
            .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
            .collect();
        assert_eq!(
            children,
            [(
                "skill://send-email/examples/minimal",
                Some("inode/directory")
            )]
        );
        let e = invalid_params(client.get_skill(GetSkillRequestParams::new(nested)).await);
        assert!(
            e.contains("that is the skill's file `examples/minimal/SKILL.md`")
                && e.contains("served at skill://send-email/SKILL.md"),
            "{e}"
        );

        // The default version is also at its versioned path; the other one only there (and
        // at the `name@version` alias).
        let v2 = read("skill://send-email/scripts/send_email.py").await;
        let v1 = read("skill://v1.0.0/send-email/scripts/send_email.py").await;
        assert!(v2.starts_with("# send-email 2.0.0"));
        assert!(!v1.starts_with("# send-email 2.0.0"));
        assert_eq!(
            read("skill://v2.0.0/send-email/scripts/send_email.py").await,
            v2
        );
        assert_eq!(
            read("skill://send-email%401.0.0/scripts/send_email.py").await,
            v1
        );

        // Letter case: reads and folder listings fold the name, and answer canonical URIs.
        assert_eq!(read("skill://SEND-EMAIL/scripts/send_email.py").await, v2);
        assert_eq!(
            read("skill://v1.0.0/Send-Email/scripts/send_email.py").await,
            v1
        );
        let folded = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(
                "skill://Send-Email/scripts",
            ))
            .await
            .unwrap();
        let uris: Vec<&str> = folded.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["skill://send-email/scripts/send_email.py"]);
        // skills/get wants the listed URI exactly, and says where the skill is.
        let e = invalid_params(
            client
                .get_skill(GetSkillRequestParams::new("skill://Send-Email/SKILL.md"))
                .await,
        );
        assert!(e.contains("served at skill://send-email/SKILL.md"), "{e}");
    });
}

/// The message of an `invalid params` (`-32602`) error; any other answer fails the test.
fn invalid_params<T: std::fmt::Debug>(answer: Result<T, rmcp::ServiceError>) -> String {
    match answer {
        Err(rmcp::ServiceError::McpError(e)) => {
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{e:?}");
            e.message.to_string()
        }
        other => panic!("expected invalid params, got {other:?}"),
    }
}
