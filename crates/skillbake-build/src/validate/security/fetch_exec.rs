//! `download-exec`: code fetched at run time and executed at once: a download piped into a
//! shell or interpreter, `bash <(curl …)`, a file downloaded, made executable and run, a
//! PowerShell download cradle, an archive unpacked with a password. Installers of a few
//! well-known toolchains served over HTTPS from their own domains are not reported (they are
//! what a user would run anyway); a plain-HTTP URL or a bare IP address always is.

use super::scan::{Pat, Role, Scope};
use crate::diagnostic::Code;

const A: Role = Role::Alone;

/// Hosts whose official installer is commonly piped into a shell.
pub const KNOWN_INSTALLERS: &[&str] = &[
    "sh.rustup.rs",
    "astral.sh",
    "bun.sh",
    "deno.land",
    "get.docker.com",
    "raw.githubusercontent.com/nvm-sh",
    "raw.githubusercontent.com/homebrew",
    "brew.sh",
    "get.pnpm.io",
    "install.python-poetry.org",
    "claude.ai/install",
    "ollama.com/install",
    "opencode.ai/install",
    "cli.github.com",
    "sdk.cloud.google.com",
    "get.helm.sh",
    "fly.io/install",
    "supabase.com",
    "vercel.com",
    "railway.app",
    "foundry.paradigm.xyz",
    "starship.rs",
    "pixi.sh",
    "nixos.org",
    "tailscale.com/install",
    "cursor.com/install",
    "mise.run",
    "get.volta.sh",
    "rye.astral.sh",
    "install.determinate.systems",
    "dot.net",
    "aka.ms",
    "anthropic.com",
    "openai.com",
    "modal.com",
    "k3s.io",
    "get.k3s.io",
    "fnm.vercel.app",
    "sh.vector.dev",
    "uv.astral.sh",
    "get.rvm.io",
    "sh.brew.sh",
    "install.julialang.org",
    "get.sdkman.io",
    "rustup.rs",
];

/// The code these patterns raise.
pub const CODE: Code = Code::DownloadExec;

/// The patterns.
pub const PATTERNS: &[Pat] = &[
    Pat {
        triggers: &[
            "curl",
            "wget",
            "fetch",
            "iwr",
            "irm",
            "invoke-webrequest",
            "invoke-restmethod",
        ],
        re: r"\b(curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\s+[^|\n]*(https?://|\$\{?\w|\w\.\w+/)[^|\n]*\|\s*(sudo\s+)?(-?\w+=\S+\s+)*(ba|z|k|da)?sh\b(\s+-s?\s*$|\s*$|\s*[;&)`\x22'#]|\s+-s\b|\s+-\s)|\b(curl|wget)\s+[^|\n]*(https?://|\$\{?\w|\w\.\w+/)[^|\n]*\|\s*(sudo\s+)?(python3?|node|perl|ruby|php|iex|invoke-expression)\s*(-\s*)?($|[;&)`\x22'#])",
        needs: Some(r"(curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\s[^|\n]*\|"),
        what: "it pipes a download into a shell or interpreter",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["<(curl", "<(wget", "$(curl", "$(wget", "`curl", "`wget"],
        re: r"\b(ba|z)?sh\s+(-c\s+)?[\x22']?(<\(|\$\(|`)\s*(curl|wget)\b|\beval\s+[\x22']?(\$\(|`)\s*(curl|wget)\b|source\s+<\(\s*(curl|wget)\b",
        needs: None,
        what: "it runs what a URL returns",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["downloadstring", "downloadfile", "iex", "invoke-expression"],
        re: r"(iex|invoke-expression)\b[^\n]*(downloadstring|invoke-webrequest|iwr|irm|net\.webclient)|(downloadstring|downloadfile)\s*\([^\n]*\)[^\n]*\|\s*(iex|invoke-expression)",
        needs: None,
        what: "it runs a PowerShell download cradle",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["chmod +x", "chmod 755", "chmod 777", "chmod u+x"],
        re: r"\b(curl|wget)\b[^\n]*(-o|-O|--output|>)\s*\S+[^\n]*(&&|;)\s*(sudo\s+)?chmod\s+(\+x|755|777|u\+x)\s+\S+\s*(&&|;)\s*(sudo\s+)?(\./|/|~/|\$)\S+",
        needs: None,
        what: "it downloads a program, makes it executable and runs it",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["urlopen", "requests.get", "urllib.request", "fetch("],
        re: r"\b(exec|eval)\s*\(\s*(urllib\.request\.)?(urlopen|requests\.get|httpx\.get|await\s+\(?await\s+fetch)\s*\(",
        needs: Some(r"(exec|eval)\s*\("),
        what: "it executes code fetched from a URL",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &[
            "unzip -p",
            "unzip -P",
            "7z x",
            "7z e",
            "7za x",
            "password:",
            "password is",
            "密码",
        ],
        re: r"\bunzip\s+(-\w+\s+)*-P\s*\S+|\b7za?\s+[xe]\b[^\n]*\s-p\S+|\b(archive|zip|rar|7z|file)\b[^\n]{0,40}\bpassword\s*(is|:)\s*\S+|(压缩包|解压)[^\n]{0,20}密码",
        needs: Some(r"unzip|7z|archive|zip|rar|file|压缩包|解压"),
        what: "it unpacks a password-protected archive (which hides its content from scanners)",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &[
            "prerequisite",
            "before using",
            "required",
            "download and run",
            "download and install",
            "download and execute",
            "前置",
            "先下载",
            "下载并运行",
        ],
        re: r"(prerequisite|before using|required|must first)[^\n]{0,80}\b(download|run|execute|install)\b[^\n]{0,60}(https?://\S+\.(exe|msi|dmg|pkg|sh|bat|ps1|scr|zip|jar|appimage)\b|https?://(\d{1,3}\.){3}\d{1,3})|\bdownload\s+and\s+(run|execute|install)\b[^\n]{0,60}https?://\S+\.(exe|msi|dmg|pkg|bat|ps1|scr|jar|appimage)\b|(前置|先下载|下载并运行)[^\n]{0,60}https?://\S+\.(exe|msi|dmg|pkg|sh|bat|ps1|zip)\b",
        needs: Some(
            r"(prerequisite|before using|required|must first|download\s+and\s+(run|execute|install)|前置|先下载|下载并运行)[^\n]*https?://",
        ),
        what: "it makes running a program downloaded from a URL a prerequisite",
        scope: Scope::Code,
        role: A,
    },
];

/// Whether a matched line only pipes the official HTTPS installer of a well-known tool.
pub fn known_installer(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    if lower.contains("http://") || has_ip_url(&lower) {
        return false;
    }
    KNOWN_INSTALLERS.iter().any(|h| {
        lower.contains(&format!("https://{h}")) || lower.contains(&format!("https://www.{h}"))
    })
}

fn has_ip_url(lower: &str) -> bool {
    lower.match_indices("://").any(|(i, _)| {
        let rest = &lower[i + 3..];
        let host: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        host.split('.').filter(|p| !p.is_empty()).count() == 4
    })
}
