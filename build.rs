//! Compiles `skills/` (or `$SKILLBAKE_SKILLS_DIR`) into the registry behind `skillbake::BUNDLED`,
//! through `skillbake-build` exactly as a downstream crate would. Any invalid pack fails the build
//! with every diagnostic.

fn main() {
    #[cfg(feature = "bundled")]
    if let Err(e) = skillbake_build::Config::new()
        .skills_dir("skills")
        .compile()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
