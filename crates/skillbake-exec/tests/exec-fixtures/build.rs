//! Compiles `tests/fixtures/exec` (one pack per behaviour of the executor) into `REGISTRY`.

fn main() -> Result<(), skillbake_build::Error> {
    skillbake_build::Config::new()
        .skills_dir("../fixtures/exec")
        .compile()
}
