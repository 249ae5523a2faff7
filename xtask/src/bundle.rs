//! `cargo xtask bundle --skills DIR --out PATH`: a `skillbake` binary with DIR's packs compiled in
//! (instead of the bundled ones), for shipping one self-contained tool per skills folder.
//!
//! DIR is validated first (the report is printed; errors stop the bundle), then
//! `cargo build --release -p skillbake-cli --bin skillbake` runs with `SKILLBAKE_SKILLS_DIR` set to
//! DIR's absolute path, and the binary is copied to PATH. The copy's `list` must name as many
//! skills as DIR has packs.

use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask bundle --skills DIR --out PATH";

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut skills: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--skills" => skills = Some(it.next().ok_or("--skills needs a value")?.into()),
            "--out" => out = Some(it.next().ok_or("--out needs a value")?.into()),
            s => return Err(format!("unexpected argument `{s}` ({USAGE})")),
        }
    }
    let (Some(skills), Some(out)) = (skills, out) else {
        return Err(USAGE.into());
    };
    let skills = std::fs::canonicalize(&skills)
        .map_err(|e| format!("cannot read the skills folder `{}`: {e}", skills.display()))?;

    eprintln!("==> skillbake check {}", skills.display());
    let checked = skillbake_build::check(&skills, &skillbake_build::CheckOptions::default());
    eprint!(
        "{}",
        skillbake_build::report::human::render(&checked.report, false)
    );
    if checked.report.has_errors() {
        return Err(format!(
            "`{}` has errors; nothing was bundled",
            skills.display()
        ));
    }
    let packs = checked.packs().len();

    let built = crate::build_bundled_skillbake(
        &skills,
        None,
        &format!("SKILLBAKE_SKILLS_DIR={}", skills.display()),
    )?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    }
    std::fs::copy(&built, &out).map_err(|e| {
        format!(
            "cannot copy `{}` to `{}`: {e}",
            built.display(),
            out.display()
        )
    })?;

    let listed = listed_skills(&out)?;
    if listed != packs {
        return Err(format!(
            "`{} list` shows {listed} skills, but `{}` has {packs} packs",
            out.display(),
            skills.display()
        ));
    }
    println!(
        "bundled {packs} pack{} from {} into {}",
        if packs == 1 { "" } else { "s" },
        skills.display(),
        out.display()
    );
    Ok(())
}

/// The number of skills `PATH list` prints (one line each).
fn listed_skills(bin: &Path) -> Result<usize, String> {
    // A bare file name would be looked up on PATH; run the copy itself.
    let bin = if bin.is_absolute() {
        bin.to_path_buf()
    } else {
        Path::new(".").join(bin)
    };
    let o = Command::new(&bin)
        .args(["list", "--format", "text"])
        .output()
        .map_err(|e| format!("cannot run `{} list`: {e}", bin.display()))?;
    if !o.status.success() {
        return Err(format!(
            "`{} list` failed: {}",
            bin.display(),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).lines().count())
}
