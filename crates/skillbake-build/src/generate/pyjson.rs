//! JSON string escaping exactly as Python's `json.dumps(..., ensure_ascii=False)` writes it;
//! shared with the runtime through `skillbake-format`.

pub use skillbake_format::escape::{json as escape, json_into as escape_into};
