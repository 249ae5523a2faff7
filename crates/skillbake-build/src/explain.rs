//! The documentation of every diagnostic code, from `rules/<code>.md` in this crate: what the
//! rule checks, why, a failing and a passing example, how to fix and how to silence it. Printed
//! by `skillbake explain CODE`.

use crate::diagnostic::Code;

/// The markdown documentation of `code`.
pub fn explain(code: Code) -> &'static str {
    code.doc()
}
