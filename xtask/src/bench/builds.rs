//! Release builds of `skillbake` with a pack set compiled in, and of the bench crates under
//! `benches/`, each in its own target folder.

use super::packs::PackSet;
use super::process::{capture, s};
use crate::{cargo, run as run_step};
use std::path::Path;
use std::path::PathBuf;

pub(super) fn build_dir(root: &Path, what: &str) -> PathBuf {
    root.join("target/bench-build").join(what)
}

/// `skillbake` with `set` compiled in, in its own target folder.
pub(super) fn build_skillbake(root: &Path, set: &PackSet) -> Result<PathBuf, String> {
    let target = build_dir(root, &format!("skillbake-{}", set.packs));
    let bin = crate::build_bundled_skillbake(
        &set.dir,
        Some(&target),
        &format!("{} packs compiled in", set.packs),
    )?;
    let listed = capture(&[s(&bin), "list".into()])?.lines().count();
    if listed != set.packs {
        return Err(format!(
            "`{}` embeds {listed} skills, expected {}",
            bin.display(),
            set.packs
        ));
    }
    Ok(bin)
}

/// A bench crate under `benches/` (not a workspace member), in its own target folder.
pub(super) fn build_aux(root: &Path, name: &str, bin: &str) -> Result<PathBuf, String> {
    let target = build_dir(root, name);
    let manifest = root.join("benches").join(name).join("Cargo.toml");
    run_step(
        &format!("cargo build --release --manifest-path benches/{name}/Cargo.toml"),
        cargo()
            .args(["build", "--release", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target),
    )?;
    Ok(target.join("release").join(bin))
}
