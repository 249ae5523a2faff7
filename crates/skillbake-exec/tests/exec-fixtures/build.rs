//! Compiles `tests/fixtures/exec` (one pack per behaviour of the executor) into `REGISTRY`,
//! signing its manifest with `test-signing.key`: a key made for these tests and published with
//! them (never trust it for anything), so that the MCP tests see a signed registry's provenance.

fn main() -> Result<(), skillbake_build::Error> {
    skillbake_build::Config::new()
        .skills_dir("../fixtures/exec")
        .sign_with_key_file("test-signing.key")
        .compile()
}
