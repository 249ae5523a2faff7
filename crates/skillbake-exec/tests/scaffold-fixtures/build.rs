//! Writes the scaffolds of `skillbake new` (`skillbake_build::scaffold`) into `OUT_DIR/skills`,
//! one per kind, and compiles them into `REGISTRY`.

use skillbake_build::scaffold::{Runnable, Scaffold};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let skills = out.join("skills");
    if skills.exists() {
        std::fs::remove_dir_all(&skills)?;
    }
    std::fs::create_dir_all(&skills)?;
    let mut scaffolds = vec![Scaffold::new("new-plain")];
    for r in Runnable::ALL {
        scaffolds.push(Scaffold {
            runnable: Some(r),
            ..Scaffold::new(format!("new-{r}"))
        });
    }
    for s in &scaffolds {
        s.write(&skills)?;
    }
    // The packs depend only on the scaffold's code, which is this script's build-dependency:
    // cargo reruns the script when it changes. The folder it writes is not watched.
    println!("cargo:rerun-if-changed=build.rs");
    skillbake_build::Config::new()
        .skills_dir(&skills)
        .ignore_env()
        .no_cargo_output()
        .compile()?;
    Ok(())
}
