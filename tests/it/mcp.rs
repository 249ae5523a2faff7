//! `skillbake serve`, driven over stdio by the official Rust MCP client (`rmcp`) as an agent
//! drives it: the real binary in a child process, compared with the library's answers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorCode, GetSkillRequestParams, JsonObject,
    ReadResourceDirectoryRequestParams, ReadResourceRequestParams, ResourceContents,
    SkillResources,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{json, Value};
use skillbake::{CatalogFormat, ToolsFormat};
use skillbake_cli::BUNDLED;
use std::future::Future;

type Client = RunningService<RoleClient, ()>;

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Starts `skillbake serve` from an empty folder (the server must not need `skills/`) and
/// initializes an MCP session with it.
async fn connect(dir: &std::path::Path) -> Client {
    connect_with(dir, &[]).await
}

/// [`connect`] with more arguments for `skillbake serve`.
async fn connect_with(dir: &std::path::Path, extra: &[&str]) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillbake"));
    cmd.arg("serve").args(extra).current_dir(dir);
    let transport = TokioChildProcess::new(cmd).unwrap();
    ().serve(transport).await.unwrap()
}

fn args(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

async fn call(client: &Client, tool: &'static str, arguments: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args(arguments)))
        .await
        .unwrap()
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .map(|c| c.as_text().expect("text content").text.as_str())
        .collect()
}

fn only_text(result: &CallToolResult) -> &str {
    let t = texts(result);
    assert_eq!(t.len(), 1, "{result:?}");
    t[0]
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

fn mcp_error_code(e: ServiceError) -> ErrorCode {
    match e {
        ServiceError::McpError(e) => e.code,
        other => panic!("expected an MCP error, got {other}"),
    }
}

#[test]
fn tools_match_skillbake_tools_format_mcp() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;
        let tools = client.list_all_tools().await.unwrap();
        let listed = serde_json::to_value(&tools).unwrap();

        let mut expected: Vec<Value> =
            serde_json::from_str(BUNDLED.tools_json(ToolsFormat::Mcp)).unwrap();
        expected.push(json!({
            "name": "list_skills",
            "description": tools.last().unwrap().description.as_deref().unwrap(),
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
        }));
        assert_eq!(listed, Value::Array(expected));
        insta::assert_snapshot!("tools_list", serde_json::to_string_pretty(&listed).unwrap());
        client.cancel().await.unwrap();
    });
}

#[test]
fn initialize_reports_name_version_and_catalog() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;
        let info = client.peer_info().expect("initialized");
        let server = info.server_info.as_ref().expect("serverInfo");
        assert_eq!(server.name, "skillbake");
        assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
        let instructions = info.instructions.as_deref().expect("instructions");
        assert_eq!(instructions, BUNDLED.catalog(CatalogFormat::Xml, None).text);
        assert!(instructions.starts_with("<available_skills>"));
        assert!(info.capabilities.tools.is_some());
        assert!(info.capabilities.resources.is_some());
        client.cancel().await.unwrap();
    });
}

#[test]
fn load_skill_answers_the_library_bytes() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;
        for skill in BUNDLED.iter() {
            // file_path omitted: the skill's own SKILL.md path.
            let r = call(&client, "load_skill", json!({"skill_name": skill.name()})).await;
            assert!(!is_error(&r), "{}", skill.name());
            assert_eq!(
                only_text(&r),
                skillbake_cli::load_skill(skill.name(), skill.skill_md_path())
            );
            // Every file of the pack, by its path relative to the pack.
            for file in skill.files() {
                let r = call(
                    &client,
                    "load_skill",
                    json!({"skill_name": skill.name(), "file_path": file.path()}),
                )
                .await;
                assert!(!is_error(&r), "{} {}", skill.name(), file.path());
                assert_eq!(
                    only_text(&r),
                    skillbake_cli::load_skill(skill.name(), file.path())
                );
            }
        }
        // Case-insensitive name, explicit location-prefixed path.
        let r = call(
            &client,
            "load_skill",
            json!({"skill_name": "CSV-Data-Analysis", "file_path": "skills/csv-data-analysis/scripts/analyze_csv.py"}),
        )
        .await;
        assert!(!is_error(&r));
        assert_eq!(
            only_text(&r),
            skillbake_cli::load_skill(
                "CSV-Data-Analysis",
                "skills/csv-data-analysis/scripts/analyze_csv.py"
            )
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn bad_arguments_are_errors_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;

        // Unknown skill: DB-GPT's not-found reply, flagged as an error.
        let r = call(
            &client,
            "load_skill",
            json!({"skill_name": "no-such-skill"}),
        )
        .await;
        assert!(is_error(&r));
        assert_eq!(
            only_text(&r),
            skillbake_cli::load_skill("no-such-skill", "")
        );

        // Unknown file: the file-not-found reply with the pack's files.
        let r = call(
            &client,
            "load_skill",
            json!({"skill_name": "excel", "file_path": "../etc/passwd"}),
        )
        .await;
        assert!(is_error(&r));
        assert_eq!(
            only_text(&r),
            skillbake_cli::load_skill("excel", "../etc/passwd")
        );

        // Missing, mistyped and unknown arguments.
        for bad in [
            json!({}),
            json!({"file_path": "SKILL.md"}),
            json!({"skill_name": 42}),
            json!({"skill_name": null}),
            json!({"skill_name": ["excel"]}),
            json!({"skill_name": "excel", "file_path": 7}),
            json!({"skill_name": "excel", "extra": true}),
        ] {
            let r = call(&client, "load_skill", bad.clone()).await;
            assert!(is_error(&r), "{bad}");
            assert!(only_text(&r).starts_with("Error: "), "{bad}: {r:?}");
        }
        let r = client
            .call_tool(CallToolRequestParams::new("load_skill"))
            .await
            .unwrap();
        assert!(is_error(&r));
        assert!(only_text(&r).contains("skill_name"));

        let r = call(&client, "list_skills", json!({"verbose": true})).await;
        assert!(is_error(&r));

        // A pack tool with arguments its schema.json rejects.
        for bad in [
            json!({}),
            json!({"path": 1}),
            json!({"path": "a", "max_length": 0}),
            json!({"path": "a", "nope": 1}),
        ] {
            let r = call(&client, "read-file", bad.clone()).await;
            assert!(is_error(&r), "{bad}");
            // The executor's own refusal, though this server runs nothing.
            let outcome: Value = serde_json::from_str(only_text(&r)).unwrap();
            assert_eq!(outcome["error"]["code"], "INVALID_PARAMS", "{r:?}");
            assert!(
                outcome["error"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("The parameters for `read-file` "),
                "{r:?}"
            );
        }

        // Unknown tool: a protocol error.
        let e = client
            .call_tool(CallToolRequestParams::new("no_such_tool"))
            .await
            .unwrap_err();
        assert_eq!(mcp_error_code(e), ErrorCode::INVALID_PARAMS);

        // Still serving.
        let r = call(&client, "list_skills", json!({})).await;
        assert!(!is_error(&r));
        let r = call(&client, "load_skill", json!({"skill_name": "excel"})).await;
        assert!(!is_error(&r));
        client.cancel().await.unwrap();
    });
}

#[test]
fn list_skills_and_pack_tools() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;
        let r = call(&client, "list_skills", json!({})).await;
        let listed: Value = serde_json::from_str(only_text(&r)).unwrap();
        let expected: Vec<Value> = BUNDLED
            .iter()
            .map(|s| {
                json!({
                    "name": s.name(),
                    "version": s.version(),
                    "versions": [s.version()],
                    "description": s.description(),
                    "location": s.skill_md_path(),
                    "uri": format!("skill://{}/SKILL.md", s.name()),
                })
            })
            .collect();
        assert_eq!(listed, Value::Array(expected));

        // A pack tool: the pack's instructions, then the checked arguments (the schema's
        // defaults applied, as a run would get them), not executed.
        let arguments = json!({"path": "logs/app.log", "max_length": 5000});
        let r = call(&client, "read-file", arguments.clone()).await;
        assert!(!is_error(&r));
        let t = texts(&r);
        assert_eq!(t.len(), 2);
        let skill = BUNDLED.get("read-file").unwrap();
        assert_eq!(
            t[0],
            skillbake_cli::load_skill("read-file", skill.skill_md_path())
        );
        let echo: Value = serde_json::from_str(t[1]).unwrap();
        assert_eq!(echo["tool"], "read-file");
        let checked = skillbake_exec::ParamCheck::new(&BUNDLED)
            .check(&skill, arguments.clone())
            .unwrap();
        assert_ne!(checked, arguments, "read-file's schema has defaults");
        assert_eq!(echo["arguments"], checked);
        assert_eq!(echo["executed"], false);
        assert!(echo["note"]
            .as_str()
            .unwrap()
            .contains("does not execute scripts"));

        let r = call(
            &client,
            "send-email",
            json!({"to": ["a@example.com"], "subject": "Hi", "body": "Report attached."}),
        )
        .await;
        assert!(!is_error(&r), "{r:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn every_embedded_file_is_a_readable_resource() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;
        let resources = client.list_all_resources().await.unwrap();
        let mut expected = Vec::new();
        for skill in BUNDLED.iter() {
            for file in skill.files() {
                expected.push(format!("skill://{}/{}", skill.name(), file.path()));
            }
        }
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, expected);

        // The MIME type every bundled file must have, by extension, written out here rather
        // than taken from the server; a bundled file with another extension fails the test.
        let expected_mime = |path: &str| match path.rsplit_once('.').map(|(_, e)| e) {
            Some("md") => "text/markdown",
            Some("json") => "application/json",
            Some("py") => "text/x-python",
            Some("csv") => "text/csv",
            Some("html") => "text/html",
            other => panic!("{path}: no expected MIME type for extension {other:?}"),
        };
        for skill in BUNDLED.iter() {
            for file in skill.files() {
                let uri = format!("skill://{}/{}", skill.name(), file.path());
                let listed = resources.iter().find(|r| r.uri == uri).unwrap();
                assert_eq!(
                    listed.mime_type.as_deref(),
                    Some(expected_mime(file.path())),
                    "{uri}"
                );
            }
        }

        // Every resource reads back the exact bytes of the embedded file.
        for skill in BUNDLED.iter() {
            for file in skill.files() {
                let uri = format!("skill://{}/{}", skill.name(), file.path());
                let read = client
                    .read_resource(ReadResourceRequestParams::new(uri.clone()))
                    .await
                    .unwrap();
                assert_eq!(read.contents.len(), 1);
                match &read.contents[0] {
                    ResourceContents::TextResourceContents {
                        uri: u,
                        mime_type,
                        text,
                        ..
                    } => {
                        assert_eq!(u, &uri);
                        assert_eq!(
                            mime_type.as_deref(),
                            Some(expected_mime(file.path())),
                            "{uri}"
                        );
                        assert_eq!(text.as_bytes(), file.bytes(), "{uri}");
                    }
                    other => panic!("{uri}: expected text, got {other:?}"),
                }
            }
        }

        // SKILL.md as written, frontmatter included; percent-encoded paths resolve too.
        let read = client
            .read_resource(ReadResourceRequestParams::new(
                "skill://csv-data-analysis/scripts%2Fanalyze_csv.py",
            ))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("expected text");
        };
        let skill = BUNDLED.get("csv-data-analysis").unwrap();
        assert_eq!(
            text.as_bytes(),
            skill.file("scripts/analyze_csv.py").unwrap().bytes()
        );

        let templates = client.list_all_resource_templates().await.unwrap();
        let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
        assert_eq!(
            templates,
            ["skill://{name}/{path}", "skill://v{version}/{name}/{path}"]
        );

        for bad in [
            "skill://no-such-skill/SKILL.md",
            "skill://excel/no-such-file.md",
            "skill://excel/",
            "skill://excel/../read-file/SKILL.md",
            "file:///etc/passwd",
            "",
        ] {
            let e = client
                .read_resource(ReadResourceRequestParams::new(bad))
                .await
                .unwrap_err();
            assert_eq!(mcp_error_code(e), ErrorCode::RESOURCE_NOT_FOUND, "{bad}");
        }
        // Still serving.
        let read = client
            .read_resource(ReadResourceRequestParams::new("skill://excel/SKILL.md"))
            .await
            .unwrap();
        assert_eq!(read.contents.len(), 1);
        client.cancel().await.unwrap();
    });
}

#[test]
fn find_skills_routes_like_the_library() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;
        let query = "email the quarterly report to the finance team";
        let r = call(&client, "find_skills", json!({"query": query, "top_k": 2})).await;
        assert!(!is_error(&r));
        let opts = skillbake::RouteOptions {
            top: 2,
            bucket: None,
        };
        assert_eq!(only_text(&r), BUNDLED.route_json(query, opts));
        let v: Value = serde_json::from_str(only_text(&r)).unwrap();
        assert_eq!(v[0]["name"], "send-email");
        assert_eq!(v.as_array().unwrap().len(), 2);
        assert_eq!(
            v[0]["parameters"]["required"],
            json!(["to", "subject", "body"])
        );
        // Mistakes the model can correct.
        for bad in [
            json!({}),
            json!({"query": 3}),
            json!({"query": "x", "top_k": 0}),
            json!({"query": "x", "top_k": 51}),
            json!({"query": "x", "bucket": 1}),
            json!({"query": "x", "k": 1}),
        ] {
            let r = call(&client, "find_skills", bad.clone()).await;
            assert!(is_error(&r), "{bad}");
            assert!(only_text(&r).starts_with("Error: "), "{bad}");
        }
        let none = call(&client, "find_skills", json!({"query": "zzqx"})).await;
        assert_eq!(only_text(&none), "[]");
        client.cancel().await.unwrap();
    });
}

/// With an explicit policy, a runnable pack's tool runs the pack: one text content holding the
/// unified result, `isError` exactly when `ok` is false.
#[test]
fn pack_tools_execute_under_an_explicit_policy() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "hello from a file\n").unwrap();
    let cache_arg = cache.display().to_string();
    block_on(async {
        let client = connect_with(
            dir.path(),
            // A limit no loaded machine reaches: the run must finish.
            &[
                "--allow",
                "filesystem:read",
                "--timeout",
                "120",
                "--cache-dir",
                &cache_arg,
            ],
        )
        .await;
        let r = call(
            &client,
            "read-file",
            json!({"path": file.display().to_string()}),
        )
        .await;
        assert!(!is_error(&r), "{r:?}");
        let v: Value = serde_json::from_str(only_text(&r)).unwrap();
        assert_eq!(v["ok"], true);
        assert_eq!(v["data"]["content"], "hello from a file\n");
        assert_eq!(v["error"], Value::Null);

        // A failure is an error result carrying the same unified text.
        let r = call(&client, "read-file", json!({"path": "/no/such/file"})).await;
        assert!(is_error(&r));
        let v: Value = serde_json::from_str(only_text(&r)).unwrap();
        assert_eq!(
            (v["ok"].clone(), v["error"]["code"].clone()),
            (json!(false), json!("FILE_NOT_FOUND"))
        );
        let r = call(&client, "read-file", json!({"path": 7})).await;
        assert!(is_error(&r));
        let v: Value = serde_json::from_str(only_text(&r)).unwrap();
        assert_eq!(v["error"]["code"], "INVALID_PARAMS");

        // send-email needs `smtp`, which this server does not grant.
        let r = call(
            &client,
            "send-email",
            json!({"to": ["a@example.com"], "subject": "Hi", "body": "Report attached."}),
        )
        .await;
        assert!(is_error(&r));
        let v: Value = serde_json::from_str(only_text(&r)).unwrap();
        assert_eq!(v["error"]["code"], "PERMISSION_DENIED");
        client.cancel().await.unwrap();
    });
}

/// Every file under folder `uri`, reading folders down (bounded by depth).
async fn files_under(client: &Client, uri: String, depth: usize) -> Vec<(String, Option<u64>)> {
    assert!(
        depth < 16,
        "{uri}: folders nest deeper than any bundled pack"
    );
    let listed = client
        .read_resource_directory(ReadResourceDirectoryRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let mut out = Vec::new();
    for child in listed.resources {
        assert_eq!(child.uri, format!("{uri}/{}", child.name));
        if child.is_directory() {
            out.extend(Box::pin(files_under(client, child.uri, depth + 1)).await);
        } else {
            out.push((child.uri, child.size));
        }
    }
    out
}

/// The MCP Skills extension over stdio with rmcp's client: every bundled pack is listed once,
/// `skills/get` answers its entry, every file reads back the embedded bytes and passes rmcp's
/// own digest and size check, and its folders add up to the entry.
#[test]
fn skills_extension_lists_and_verifies_every_bundled_pack() {
    let dir = tempfile::tempdir().unwrap();
    block_on(async {
        let client = connect(dir.path()).await;
        let info = client.peer_info().expect("initialized");
        assert!(info.capabilities.supports_directory_read());
        let skills = client.list_all_skills().await.unwrap();
        let names: Vec<&str> = skills.iter().map(|s| s.name()).collect();
        assert_eq!(names, BUNDLED.names().collect::<Vec<_>>());
        for (entry, skill) in skills.iter().zip(BUNDLED.iter()) {
            assert_eq!(entry.uri, format!("skill://{}/SKILL.md", skill.name()));
            let frontmatter: Value = serde_json::from_str(skill.frontmatter_json()).unwrap();
            assert_eq!(
                serde_json::to_value(&entry.frontmatter).unwrap(),
                frontmatter
            );
            let got = client
                .get_skill(GetSkillRequestParams::new(entry.uri.clone()))
                .await
                .unwrap();
            assert_eq!(&got.skill, entry);
            let SkillResources::Files(files) = &entry.resources else {
                panic!("{}: dynamic", entry.uri)
            };
            assert_eq!(files.len(), skill.files().len());
            for (listed, file) in files.iter().zip(skill.files()) {
                let read = client
                    .read_resource(ReadResourceRequestParams::new(listed.uri.clone()))
                    .await
                    .unwrap();
                let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
                    panic!("{}: every bundled file is text", listed.uri)
                };
                assert_eq!(text.as_bytes(), file.bytes(), "{}", listed.uri);
                listed.verify(text.as_bytes()).unwrap();
            }
            let root = entry.uri.strip_suffix("/SKILL.md").unwrap().to_string();
            let found = files_under(&client, root, 0).await;
            let manifest: Vec<(String, Option<u64>)> = files
                .iter()
                .map(|f| (f.uri.clone(), Some(f.size)))
                .collect();
            assert_eq!(found, manifest, "{}", entry.uri);
        }
        insta::assert_snapshot!(
            "skills_list",
            serde_json::to_string_pretty(&skills).unwrap()
        );
        client.cancel().await.unwrap();
    });
}
