//! Compiles `tests/fixtures/sandbox` (one pack per attack on the sandbox) into `REGISTRY`.

fn main() -> Result<(), skillbake_build::Error> {
    skillbake_build::Config::new()
        .skills_dir("../fixtures/sandbox")
        .compile()
}
