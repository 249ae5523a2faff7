//! An example agent that bakes its own `skills/` folder into its binary with skillbake: `build.rs`
//! validates the packs and compiles them, and [`REGISTRY`] serves DB-GPT's `load_skill` replies
//! from the embedded tables with no file-system access.
//!
//! ```
//! let reply = skillbake_example_agent::REGISTRY.load_skill("unit-convert", "scripts/convert.py");
//! assert!(reply.contains(r#""output_type": "code""#));
//! ```

#![forbid(unsafe_code)]

skillbake::include_skills!();
