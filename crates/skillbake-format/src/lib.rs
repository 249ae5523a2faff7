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
//! * [`layout`] — the binary tables of a generated registry (every column, for both sides);
//! * [`tokens`] — a model-free estimate of a text's cost in tokens;
//! * [`candidates`] — the routed top-K skills for the model's final choice, in every catalog
//!   format and as JSON;
//! * [`tools`] — the tool-definition dialects of LLM APIs;
//! * [`file_type`] — how an embedded file is served (chunk kind) and labelled (MIME type);
//! * [`manifest`] — the text manifest of a registry's files and the bytes its signature covers;
//! * [`percent`] — percent-coding for every URI skillbake writes or reads;
//! * [`name`] — how skill names are compared (case-insensitively, as DB-GPT does);
//! * [`template`] — precompiled Jinja2 templates: the instruction table and its interpreter;
//! * [`permission`] — the permission vocabulary packs declare and executors grant;
//! * [`interpreter`] — which interpreter runs a pack's script (shebang, extension);
//! * [`python`] — Python's `str.strip()` whitespace and `repr(float)`, for DB-GPT's replies.
//! * [`semver`] — versions and Cargo-style version ranges, for `version`, `requires` and
//!   `name@range` lookups;
//! * [`suggest`] — did-you-mean: the closest known word to a misspelt one, and how it is offered.
//!
//! Every fact lives in one table here (formats and their names, extensions and their kinds and
//! MIME types); the compiler, the runtime and the CLI's value lists all read the same table.

#![forbid(unsafe_code)]
#![deny(clippy::indexing_slicing, clippy::panic)]

mod table;

pub mod activation;
pub mod candidates;
pub mod catalog;
pub mod chunks;
pub mod escape;
pub mod file_type;
pub mod interpreter;
pub mod layout;
pub mod manifest;
pub mod name;
pub mod percent;
pub mod permission;
pub mod python;
pub mod semver;
pub mod suggest;
pub mod template;
pub mod tokens;
pub mod tools;
