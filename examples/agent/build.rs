//! Validates this crate's own `skills/` folder (or `$SKILLBAKE_SKILLS_DIR`) and compiles it into
//! the registry behind `skillbake_example_agent::REGISTRY`. A bad pack fails the build with every
//! diagnostic.

fn main() -> Result<(), skillbake_build::Error> {
    skillbake_build::Config::new()
        .skills_dir("skills")
        .compile()
}
