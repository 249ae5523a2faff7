//! `undeclared-capability`: only skillbake knows what a pack declares it may do. For a pack
//! that runs under skillbake (it has an `entrypoint`) or declares `permission:`, every script is
//! read for what it does (Python, shell and JavaScript, line by line): opening sockets or
//! importing HTTP clients (`network`, or `smtp` for mail), starting other programs
//! (`subprocess`), writing to absolute or home paths instead of `OUTPUT_DIR`
//! (`filesystem:write`); each use the `permission:` list does not cover is reported at its line.
//! And when `allowed-tools` is declared without `Bash`, a shell block in the body that tells
//! the agent to run commands is reported.

use super::scan::{Hit, Kind, Lang};
use crate::diagnostic::Code;
use crate::validate::tools::list_items;
use crate::validate::PackCtx;
use regex::bytes::Regex;
use skillbake_format::permission::{self, Set};
use std::sync::OnceLock;

struct Use {
    lang: &'static [Lang],
    re: &'static str,
    needs: Set,
    what: &'static str,
}

const PY: &[Lang] = &[Lang::Python];
const JS: &[Lang] = &[Lang::Js];
const SH: &[Lang] = &[Lang::Shell];

const USES: &[Use] = &[
    Use { lang: PY, re: r"^\s*(import|from)\s+(requests|httpx|aiohttp|urllib3|http\.client|urllib\.request|ftplib|websocket|websockets|paramiko|boto3|openai|anthropic)\b", needs: Set::NETWORK, what: "it imports a network client, but `permission:` does not declare `network`" },
    Use { lang: PY, re: r"^\s*(import|from)\s+(smtplib|socket)\b", needs: Set::SMTP, what: "it imports `smtplib` or `socket`, but `permission:` declares neither `smtp` nor `network`" },
    Use { lang: PY, re: r"^\s*(import|from)\s+(subprocess|pty)\b|\bos\.(system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)\s*\(", needs: Set::SUBPROCESS, what: "it starts other programs, but `permission:` does not declare `subprocess`" },
    Use { lang: PY, re: r"\bopen\s*\(\s*(f?[\x22'](/|~)|os\.path\.expanduser\()[^\n]*,\s*[\x22'](w|a|x|wb|ab|w\+|a\+)[\x22']|\b(write_text|write_bytes)\s*\([^\n]*\)\s*$", needs: Set::FILESYSTEM_WRITE, what: "it writes outside `OUTPUT_DIR`, but `permission:` does not declare `filesystem:write`" },
    Use { lang: JS, re: r"require\s*\(\s*[\x22'](node:)?(https?|net|tls|dgram|axios|node-fetch|got|ws|undici)[\x22']\s*\)|^\s*import\b[^\n]*from\s+[\x22'](node:)?(https?|net|tls|dgram|axios|node-fetch|got|ws|undici)[\x22']|\bfetch\s*\(\s*[\x22'`]https?:", needs: Set::NETWORK, what: "it uses the network, but `permission:` does not declare `network`" },
    Use { lang: JS, re: r"require\s*\(\s*[\x22'](node:)?child_process[\x22']\s*\)|from\s+[\x22'](node:)?child_process[\x22']", needs: Set::SUBPROCESS, what: "it starts other programs, but `permission:` does not declare `subprocess`" },
    Use { lang: SH, re: r"^\s*[^#\n]*\b(curl|wget|nc|ncat|ssh|scp|rsync|ftp|telnet)\s+\S|/dev/tcp/", needs: Set::NETWORK, what: "it uses the network, but `permission:` does not declare `network`" },
];

/// The expression of `USES[i]`, compiled the first time a script needs it.
fn compiled(i: usize) -> Option<&'static Regex> {
    static RES: [OnceLock<Option<Regex>>; USES.len()] = [const { OnceLock::new() }; USES.len()];
    let u = USES.get(i)?;
    RES.get(i)?
        .get_or_init(|| Regex::new(&format!("(?m){}", u.re)).ok())
        .as_ref()
}

/// Whether the pack declares what it may do: it runs under skillbake (`entrypoint`) or lists
/// `permission:`.
fn declares(ctx: &PackCtx<'_>) -> Option<Set> {
    if ctx.field("entrypoint").is_none() && ctx.field("permission").is_none() {
        return None;
    }
    let names = ctx.field("permission").map(list_items).unwrap_or_default();
    Some(permission::Set::granted_by(
        names.iter().map(String::as_str),
    ))
}

/// Reads one script for undeclared capabilities.
pub fn scan(ctx: &PackCtx<'_>, path: &str, bytes: &[u8], kind: Kind, hits: &mut Vec<Hit>) {
    let Kind::Script(lang) = kind else { return };
    let Some(granted) = declares(ctx) else { return };
    for (i, u) in USES.iter().enumerate() {
        if !u.lang.contains(&lang) || granted.covers(u.needs) {
            continue;
        }
        if let Some(m) = compiled(i).and_then(|re| re.find(bytes)) {
            let len = String::from_utf8_lossy(m.as_bytes()).trim().chars().count();
            hits.push(Hit::at(
                Code::UndeclaredCapability,
                u.what,
                path,
                bytes,
                m.start(),
                len,
            ));
        }
    }
}

/// A body that tells the agent to run shell commands while `allowed-tools` leaves `Bash` out.
pub fn check_tools(ctx: &PackCtx<'_>, hits: &mut Vec<Hit>) {
    let Some(v) = ctx.field("allowed-tools") else {
        return;
    };
    let tools: Vec<String> = match v {
        yaml_serde::Value::String(s) => s
            .split([' ', ','])
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        other => list_items(other),
    };
    if tools.is_empty() || tools.iter().any(|t| t == "Bash" || t.starts_with("Bash(")) {
        return;
    }
    let Some(md) = ctx.pack.file(crate::discover::SKILL_MD) else {
        return;
    };
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = RE
        .get_or_init(|| {
            Regex::new(r"(?im)\b(run|execute)\b[^\n]{0,60}\n+\s*```(bash|sh|shell|console|zsh)\s*$")
                .ok()
        })
        .as_ref()
    else {
        return;
    };
    if let Some(m) = re.find(&md.bytes) {
        hits.push(Hit::at(
            Code::UndeclaredCapability,
            "the body tells the agent to run shell commands, but `allowed-tools` does not allow `Bash`",
            &md.path,
            &md.bytes,
            m.start(),
            0,
        ));
    }
}
