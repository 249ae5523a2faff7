//! File and pack sizes: everything embedded ends up in the binary and, when loaded, in an
//! agent's context. Warns above `[limits] max-file-size` and `max-pack-size`.

use super::PackCtx;
use crate::diagnostic::{Code, Diagnostic};

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
