//! Compiles `skills/` (or `$SKILLBAKE_SKILLS_DIR`) into the registry behind `skillbake_cli::BUNDLED`,
//! through `skillbake-build` exactly as a downstream crate would. Any invalid pack fails the build
//! with every diagnostic.
//!
//! On Linux (glibc) the `skillbake` command itself is linked as a position-dependent executable:
//! as a PIE it applies about 15,000 relocations (clap, tokio, rmcp, jsonschema…) at every start
//! before `load` can answer, which is most of a cold `skillbake load` (see `BENCHMARKS.md`). The
//! executable's own image then loses address randomisation (shared libraries, stack and heap
//! keep it); `SKILLBAKE_PIE=1` at build time keeps the PIE. The library crates, and the binaries
//! of crates that depend on them, are not affected.

fn main() {
    if let Err(e) = skillbake_build::Config::new()
        .skills_dir("skills")
        .compile()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }

    println!("cargo:rerun-if-env-changed=SKILLBAKE_PIE");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && var("SKILLBAKE_PIE") != "1" {
        println!("cargo:rustc-link-arg-bin=skillbake=-no-pie");
    }
}
