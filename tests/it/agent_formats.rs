//! What an agent framework sees: the catalog for a system prompt in every format (with and
//! without a budget), tool definitions in every API's shape, and every activation shape of a
//! loaded skill — snapshot-tested against the exact shapes, on the bundled packs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use skillbake::{Activation, CatalogFormat, ToolsFormat};
use skillbake_cli::BUNDLED;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

#[test]
fn catalogs_in_every_format() {
    for format in CatalogFormat::ALL {
        let c = BUNDLED.catalog(format, None);
        assert_eq!(c.omitted, 0);
        insta::assert_snapshot!(format!("catalog-{}", format.name()), c.text);
    }
}

#[test]
fn budgeted_catalogs_shorten_then_drop() {
    for format in CatalogFormat::ALL {
        let full = BUNDLED.catalog(format, None).text.chars().count();
        let shortened = BUNDLED.catalog(format, Some(full * 3 / 4));
        assert!(shortened.shortened && shortened.omitted == 0, "{format:?}");
        assert!(shortened.text.chars().count() <= full * 3 / 4);
        let dropped = BUNDLED.catalog(format, Some(full / 20));
        assert!(dropped.omitted > 0, "{format:?}");
        assert!(
            dropped.text.contains("omitted to fit the budget"),
            "{format:?}"
        );
    }
    insta::assert_snapshot!(
        "catalog-codex-budget-900",
        BUNDLED.catalog(CatalogFormat::Codex, Some(900)).text
    );
}

#[test]
fn tool_definitions_in_every_dialect() {
    let names: Vec<&str> = BUNDLED.names().collect();
    for format in ToolsFormat::ALL {
        let json = BUNDLED.tools_json(format);
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let (load, schema) = match format {
            ToolsFormat::OpenAi => (&v[0]["function"], &v[0]["function"]["parameters"]),
            ToolsFormat::Anthropic => (&v[0], &v[0]["input_schema"]),
            ToolsFormat::Mcp => (&v[0], &v[0]["inputSchema"]),
            ToolsFormat::JsonSchema => (&v["load_skill"], &v["load_skill"]),
        };
        if format != ToolsFormat::JsonSchema {
            assert_eq!(load["name"], "load_skill");
            // load_skill, find_skills, and one tool per pack with a schema.json (every bundled
            // pack).
            assert_eq!(v.as_array().unwrap().len(), 2 + names.len(), "{format:?}");
        }
        let allowed: Vec<&str> = schema["properties"]["skill_name"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(allowed, names);
        insta::assert_snapshot!(format!("tools-{}", format.name()), json);
    }
    let openai: serde_json::Value =
        serde_json::from_str(BUNDLED.tools_json(ToolsFormat::OpenAi)).unwrap();
    assert_eq!(openai[1]["function"]["name"], "find_skills");
    assert_eq!(
        openai[1]["function"]["parameters"]["required"],
        serde_json::json!(["query"])
    );
    assert_eq!(openai[2]["type"], "function");
    assert_eq!(openai[2]["function"]["name"], "csv-data-analysis");
    assert!(openai[2]["function"]["parameters"].get("$schema").is_none());
}

#[test]
fn activation_shapes() {
    let skill = BUNDLED.get("read-file").unwrap();
    let tag = skill.activation(Activation::SkillTag);
    assert_eq!(
        tag,
        format!("<skill name=\"read-file\">\n{}\n</skill>", skill.body())
    );
    insta::assert_snapshot!(
        "skill-content-read-file",
        skill.activation(Activation::SkillContent)
    );
}

#[test]
fn cli_prompt_tools_and_load_formats() {
    let run = |args: &[&str]| Command::new(BIN).args(args).output().unwrap();
    let o = run(&["prompt", "--format", "dbgpt"]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!("{}\n", BUNDLED.catalog(CatalogFormat::Dbgpt, None).text)
    );
    let o = run(&["prompt", "--budget", "300"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("left out to fit 300 characters"));
    let o = run(&["tools", "--format", "mcp"]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        BUNDLED.tools_json(ToolsFormat::Mcp)
    );
    let o = run(&["load", "--format", "skill-tag", "EXCEL"]);
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .starts_with("<skill name=\"excel\">\n"));
    let o = run(&["load", "--format", "skill-content", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!(
            "Error: Unknown skill 'nope'. Available: {}\n",
            BUNDLED.names().collect::<Vec<_>>().join(", ")
        )
    );
}
