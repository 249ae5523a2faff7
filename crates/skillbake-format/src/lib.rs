//! # skillbake-format
//!
//! Text formats shared by skillbake's build-time compiler (`skillbake-build`) and its runtime
//! (`skillbake`): whatever one precomputes the other can render again, byte for byte. No
//! dependencies, no allocation beyond the output, no panics on any input.
//!
//! * [`escape`] — JSON strings as Python's `json.dumps(..., ensure_ascii=False)` writes them, and
//!   HTML/XML text as Python's `html.escape` does;
//! * [`chunks`] — the fixed parts of DB-GPT's `load_skill` reply;
//! * [`catalog`] — the list of skills for a system prompt, in four formats, with a budget;
//! * [`activation`] — other shapes of a loaded skill (`<skill>`, `<skill_content>`);
//! * [`layout`] — the binary tables of a generated registry (every column, for both sides).

#![forbid(unsafe_code)]

pub mod activation;
pub mod catalog;
pub mod chunks;
pub mod escape;
pub mod layout;
