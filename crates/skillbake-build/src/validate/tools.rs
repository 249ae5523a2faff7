//! `required_tools`: every tool named must be a DB-GPT built-in or declared in `skillbake.toml`
//! (`[tools] known = [...]`). A list or one comma-separated string, as DB-GPT allows.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};
use skillbake_format::suggest::{closest, did_you_mean};
use yaml_serde::Value;

/// DB-GPT's agent tools and registered tool instances.
pub const BUILTIN_TOOLS: &[&str] = &[
    "load_skill",
    "load_tools",
    "knowledge_retrieve",
    "sql_query",
    "code_interpreter",
    "shell_interpreter",
    "execute_skill_script_file",
    "html_interpreter",
    "get_skill_resource",
    "select_skill",
    "execute_skill_script",
    "terminate",
    "baidu_search",
    "list_dbgpt_support_models",
    "get_current_host_cpu_status",
    "get_current_host_memory_status",
    "get_current_host_system_load",
];

/// The items of a list field written as a list of strings or one comma-separated string.
/// Non-string items are skipped (the type rule reports them).
pub fn list_items(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        Value::Sequence(items) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.trim().to_string()),
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// Checks `required_tools`.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let Some(v) = ctx.field("required_tools") else {
        return;
    };
    let known = || {
        BUILTIN_TOOLS
            .iter()
            .copied()
            .chain(ctx.config.known_tools.iter().map(String::as_str))
    };
    for tool in list_items(v) {
        if known().any(|k| k == tool) {
            continue;
        }
        let mut d = Diagnostic::new(
            Code::UnknownTool,
            &ctx.file,
            format!("`required_tools` names `{tool}`, which is not a known tool"),
        )
        .at(ctx.md.find_in_value("required_tools", &tool));
        d = match closest(&tool, known()) {
            Some(s) => d.help(format!(
                "{} If `{tool}` is your own tool, declare it in skillbake.toml: `[tools] known = [\"{tool}\"]`",
                did_you_mean(s)
            )),
            None => d.help(format!(
                "declare your own tools in skillbake.toml at the skills root: `[tools] known = [\"{tool}\"]`"
            )),
        };
        diags.push(d);
    }
}
