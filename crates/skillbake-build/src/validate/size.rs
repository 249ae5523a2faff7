//! File and pack sizes: everything embedded ends up in the binary and, when loaded, in an
//! agent's context. Warns above `[limits] max-file-size` and `max-pack-size`, and above the MCP
//! Skills extension's publication limits per skill ([`MCP_MAX_FILES`] files, [`MCP_MAX_BYTES`]
//! bytes: `pack-over-mcp-limits`), past which hosts of the extension may decline the skill.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};

/// Most files one skill may publish under the MCP Skills extension (`SKILL.md` included).
pub const MCP_MAX_FILES: usize = 512;
/// Most bytes the files of one skill may add up to under the MCP Skills extension (16 MiB).
pub const MCP_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// `1536` → `1.5 KiB`.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `human_size` plus the exact byte count when a unit was used.
fn describe(n: u64) -> String {
    if n < 1024 {
        human_size(n)
    } else {
        format!("{} ({n} bytes)", human_size(n))
    }
}

/// Checks every file of the pack and the pack's total.
pub fn check(ctx: &PackCtx<'_>, diags: &mut Vec<Diagnostic>) {
    let cfg = ctx.config;
    let mut total: u64 = 0;
    for f in &ctx.pack.files {
        let size = f.bytes.len() as u64;
        total += size;
        if size > cfg.max_file_size {
            diags.push(
                Diagnostic::new(
                    Code::FileTooLarge,
                    ctx.pack.display_path(&f.path),
                    format!(
                        "file is {}; the limit is {}",
                        describe(size),
                        human_size(cfg.max_file_size)
                    ),
                )
                .help("split it, move bulk data out of the pack, or raise `[limits] max-file-size` in skillbake.toml"),
            );
        }
    }
    mcp_limits(ctx, total, diags);
    if total > cfg.max_pack_size {
        diags.push(
            Diagnostic::new(
                Code::PackTooLarge,
                &ctx.file,
                format!(
                    "the pack's files add up to {}; the limit is {}",
                    describe(total),
                    human_size(cfg.max_pack_size)
                ),
            )
            .help("move large assets out of the pack, or raise `[limits] max-pack-size` in skillbake.toml"),
        );
    }
}

/// `pack-over-mcp-limits`: more files or bytes than one skill may publish over MCP.
fn mcp_limits(ctx: &PackCtx<'_>, total: u64, diags: &mut Vec<Diagnostic>) {
    let files = ctx.pack.files.len();
    let mut over = Vec::new();
    if files > MCP_MAX_FILES {
        over.push(format!("{files} files (the limit is {MCP_MAX_FILES})"));
    }
    if total > MCP_MAX_BYTES {
        over.push(format!(
            "{} of files (the limit is {})",
            describe(total),
            human_size(MCP_MAX_BYTES)
        ));
    }
    if over.is_empty() {
        return;
    }
    diags.push(
        Diagnostic::new(
            Code::PackOverMcpLimits,
            &ctx.file,
            format!(
                "the pack holds {}, over the MCP Skills extension's limits per skill: hosts may decline it",
                over.join(" and ")
            ),
        )
        .help("move bulk data (datasets, generated files, vendored trees) out of the pack or split it into smaller skills; `SKILL.md` counts as a file"),
    );
}

#[cfg(test)]
mod tests {
    use super::human_size;

    #[test]
    fn sizes() {
        assert_eq!(human_size(10), "10 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(10 * 1024 * 1024), "10.0 MiB");
    }
}
