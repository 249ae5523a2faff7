//! The binary tables of a generated registry, shared by `skillbake-build` (which writes them) and
//! the runtime (which reads them): one source of truth for every column.
//!
//! A registry is two blobs and a handful of constants (see `ARCHITECTURE.md`):
//!
//! * the **text blob**: every string and every UTF-8 file, each pack's strings next to each
//!   other, in pieces of `1 << shift` text offsets (one `include_str!` each; a registry with less
//!   than 8 MiB of text has one), no string crossing from one piece into the next;
//! * the **data blob** (`include_bytes!`): the tables below, then the bytes of files that are not
//!   UTF-8 and of compressed files.
//!
//! A table is `rows × WIDTH` cells, each cell a little-endian `u32`, starting at a byte offset
//! of the data blob. A *text range* is two cells, start and end text offsets (the piece in the
//! high bits, the byte in it in the low `shift` bits); a *data range* is start and end byte
//! offsets into the data blob; a *row range* two cells, first row and end row of another table. [`NONE`] marks an absent value. Nothing in a table is a pointer: the binary
//! needs no relocation however many packs it holds.
//!
//! Adding a table: a module here with its columns and `WIDTH`, rows written by
//! `skillbake-build`'s generator, one `Table` field appended to the runtime's `__private::Parts`.

/// The version of these tables' layout, raised whenever a column moves or a table changes shape;
/// generated code asserts that the runtime reads the same one (`skillbake::__private::LAYOUT_FORMAT`).
pub const FORMAT: u32 = 1;

/// An absent value (optional cells, ranges, row numbers).
pub const NONE: u32 = u32::MAX;

/// One row per pack: every version of every skill, by name, then version (oldest first).
pub mod skill {
    /// Text range: the name in the form the index hashes and lookups compare (lower case, see
    /// [`crate::name::fold`]; the same range as `NAME` when the name is already lower case).
    pub const KEY: usize = 0;
    /// Bits of [`super::flags`].
    pub const FLAGS: usize = 2;
    /// Text range: `<location>/SKILL.md`.
    pub const SKILL_MD_PATH: usize = 3;
    /// Text range: the whole `load_skill` reply for `SKILL_MD_PATH`, precomputed.
    pub const REPLY: usize = 5;
    /// Text offset: the reply up to here is the head (everything before the echoed path).
    pub const HEAD_END: usize = 7;
    /// Text offset: the reply from here is the tail (everything after the echoed path).
    pub const TAIL_START: usize = 8;
    /// Text range: the name.
    pub const NAME: usize = 9;
    /// Text range: `description`.
    pub const DESCRIPTION: usize = 11;
    /// Text range: the pack's location as `load_skill` echoes it (`skills/<dir>`).
    pub const LOCATION: usize = 13;
    /// Text range: the body JSON-escaped, inside the tail.
    pub const ESCAPED_BODY: usize = 15;
    /// The body: a range whose meaning `BODY_FORM` gives.
    pub const BODY: usize = 17;
    /// How `BODY` is read (see [`super::body_form`]).
    pub const BODY_FORM: usize = 19;
    /// Text range: the frontmatter as compact JSON.
    pub const FRONTMATTER: usize = 20;
    /// Text range: `version` as written, or [`super::NONE`].
    pub const VERSION: usize = 22;
    /// Row range of the field table.
    pub const FIELDS: usize = 24;
    /// Row range of the list table: `tags`.
    pub const TAGS: usize = 26;
    /// Row range of the list table: `required_tools`.
    pub const REQUIRED_TOOLS: usize = 28;
    /// Row range of the file table: every file, sorted by path.
    pub const FILES: usize = 30;
    /// Row of the file table: `SKILL.md`.
    pub const SKILL_MD: usize = 32;
    /// Row of the file table: `schema.json`, or [`super::NONE`].
    pub const SCHEMA: usize = 33;
    /// Text range: what precedes the body in `SKILL.md` (frontmatter, blank lines), when
    /// `SKILL.md` is stored spliced.
    pub const SKILL_MD_PREFIX: usize = 34;
    /// Text range: what follows the body in `SKILL.md` (trailing whitespace), when spliced.
    pub const SKILL_MD_SUFFIX: usize = 36;
    /// Row range of the list table: the body's template variables, sorted.
    pub const TEMPLATE_VARS: usize = 38;
    /// Data range: the body's precompiled template ([`crate::template::Program`]), or
    /// [`super::NONE`] when it cannot be rendered.
    pub const TEMPLATE: usize = 40;
    /// Text range: why the body cannot be rendered (empty when it can).
    pub const TEMPLATE_NOTE: usize = 42;
    /// Row range of this table: every version of this skill, oldest first (the rows are
    /// ordered by name, then version).
    pub const VERSIONS: usize = 44;
    /// Row range of the list table: `requires:` as name, range, name, range, …
    pub const REQUIRES: usize = 46;
    /// Cells per row.
    pub const WIDTH: usize = 48;

    /// The run of cells a `load_skill` hit reads, from [`KEY`] on: the key it compares, the
    /// flags, the `SKILL.md` path it compares and the reply it copies. The name index's slot
    /// holds a copy (see [`super::index::slots`]).
    pub const HIT: usize = KEY;
    /// Cells in the [`HIT`] run.
    pub const HIT_CELLS: usize = 7;
    const _: () = assert!(
        FLAGS == KEY + 2 && SKILL_MD_PATH == FLAGS + 1 && REPLY == SKILL_MD_PATH + 2,
        "the hit run is key, flags, path, reply"
    );
    const _: () = assert!(REPLY + 2 - HIT == HIT_CELLS);
}

/// Bits of `skill::FLAGS`.
pub mod flags {
    /// A request for exactly `SKILL_MD_PATH` is answered with `REPLY` as it is (no file of the
    /// pack has that path, and the path is written the canonical way).
    pub const OWN_PATH_IS_BODY: u32 = 1;
    /// This row is the version of its skill an agent gets by name (the one the index holds).
    pub const DEFAULT: u32 = 2;
}

/// How a skill's body is found (`skill::BODY_FORM`).
pub mod body_form {
    /// `BODY` is a text range.
    pub const TEXT: u32 = 0;
    /// `BODY` is a byte range of the decoded `SKILL.md` (stored spliced around the body).
    pub const IN_SKILL_MD: u32 = 1;
    /// The body is `ESCAPED_BODY` unescaped (a `SKILL.md` whose body is not stored as written,
    /// e.g. with `\r\n` line endings).
    pub const UNESCAPE: u32 = 2;
}

/// One row per embedded file; a skill's files are consecutive and sorted by path.
pub mod file {
    /// Text range: the path relative to the pack, `/`-separated.
    pub const PATH: usize = 0;
    /// A range whose meaning `ENCODING` gives.
    pub const DATA: usize = 2;
    /// How the bytes are stored (see [`super::encoding`]).
    pub const ENCODING: usize = 4;
    /// How the file is served as a chunk (see [`super::kind`]).
    pub const KIND: usize = 5;
    /// The file's size in bytes.
    pub const LEN: usize = 6;
    /// Lazily decoded bytes: index into the registry's byte slots ([`super::NONE`] when the
    /// bytes are stored as they are).
    pub const SLOT: usize = 7;
    /// Eight cells: the SHA-256 of the file's exact bytes, computed by the compiler (cell `i`
    /// holds bytes `4i..4i+4` little-endian), so the runtime serves digests without hashing.
    pub const SHA256: usize = 8;
    /// Cells per row.
    pub const WIDTH: usize = 16;
}

/// How a file's bytes are stored (`file::ENCODING`).
pub mod encoding {
    /// `DATA` is a text range holding the exact bytes (UTF-8 files).
    pub const TEXT: u32 = 0;
    /// `DATA` is a data range holding the exact bytes.
    pub const BYTES: u32 = 1;
    /// `SKILL.md` rebuilt on first access as `SKILL_MD_PREFIX ‖ body ‖ SKILL_MD_SUFFIX`, the
    /// body unescaped from the precomputed reply: the body is stored once.
    pub const SPLICED: u32 = 2;
    /// `DATA` is a data range holding a raw DEFLATE stream (RFC 1951), inflated on first access.
    pub const DEFLATE: u32 = 3;
}

/// How a file is served (`file::KIND`): [`crate::file_type::FileKind`] as a number.
pub mod kind {
    /// Markdown.
    pub const MARKDOWN: u32 = 0;
    /// Scripts and source code.
    pub const CODE: u32 = 1;
    /// Other UTF-8 text.
    pub const TEXT: u32 = 2;
    /// Not UTF-8, or holding NUL bytes.
    pub const BINARY: u32 = 3;
}

/// One row per top-level frontmatter field, a skill's fields consecutive, in source order.
pub mod field {
    /// Text range: the key.
    pub const KEY: usize = 0;
    /// Text range: the value as compact JSON.
    pub const JSON: usize = 2;
    /// Cells per row.
    pub const WIDTH: usize = 4;
}

/// One row per item of a list (`tags`, `required_tools`, template variables, `requires:`).
pub mod list {
    /// Text range: the item.
    pub const ITEM: usize = 0;
    /// Cells per row.
    pub const WIDTH: usize = 2;
}

/// The name index: a `phf` perfect hash (CHD, `phf_shared` hashing) over the skill names.
pub mod index {
    /// Displacement table: one row per bucket.
    pub mod disps {
        /// First displacement.
        pub const D1: usize = 0;
        /// Second displacement.
        pub const D2: usize = 1;
        /// Cells per row.
        pub const WIDTH: usize = 2;
    }
    /// Slot table: one row per skill, in hash order.
    pub mod slots {
        /// Row of the skill table whose name hashes to this slot.
        pub const SKILL: usize = 0;
        /// That row's [`crate::layout::skill::HIT`] run, copied: a `load_skill` hit reads the
        /// slot alone, not the slot and then the skill row (one bounds check and one cache line
        /// fewer).
        pub const HIT: usize = 1;
        /// Cells per row.
        pub const WIDTH: usize = HIT + crate::layout::skill::HIT_CELLS;
    }
}

/// Reads cell `col` of row `row` of the table of `width` cells per row that starts at byte `at`
/// of `data` and has `rows` rows; [`NONE`] outside the table or the blob.
#[inline]
pub fn cell(data: &[u8], at: usize, rows: usize, width: usize, row: usize, col: usize) -> u32 {
    let [c] = cells(data, at, rows, width, row, col);
    c
}

/// Reads the `N` cells of row `row` from column `col` on (a range is two: start and end) with
/// one bounds check; every one [`NONE`] when any lies outside the table or the blob.
#[inline]
pub fn cells<const N: usize>(
    data: &[u8],
    at: usize,
    rows: usize,
    width: usize,
    row: usize,
    col: usize,
) -> [u32; N] {
    let mut out = [NONE; N];
    if row >= rows || col + N > width {
        return out;
    }
    let i = at + (row * width + col) * 4;
    if let Some(bytes) = data.get(i..i + 4 * N) {
        for (cell, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            if let &[b0, b1, b2, b3] = b {
                *cell = u32::from_le_bytes([b0, b1, b2, b3]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_little_endian_and_bounded() {
        let data = [9, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];
        assert_eq!(cell(&data, 1, 1, 3, 0, 0), 1);
        assert_eq!(cell(&data, 1, 1, 3, 0, 2), 3);
        assert_eq!(cell(&data, 1, 1, 3, 1, 0), NONE);
        assert_eq!(cell(&data, 1, 1, 3, 0, 3), NONE);
        assert_eq!(cell(&data, 5, 1, 3, 0, 2), NONE);
    }

    #[test]
    fn ranges_are_read_whole_or_not_at_all() {
        let data = [9, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];
        assert_eq!(cells::<2>(&data, 1, 1, 3, 0, 0), [1, 2]);
        assert_eq!(cells::<2>(&data, 1, 1, 3, 0, 1), [2, 3]);
        assert_eq!(cells::<2>(&data, 1, 1, 3, 0, 2), [NONE, NONE]);
        assert_eq!(cells::<2>(&data, 1, 1, 3, 1, 0), [NONE, NONE]);
        assert_eq!(cells::<3>(&data, 1, 1, 3, 0, 0), [1, 2, 3]);
        assert_eq!(cells::<2>(&data, 9, 1, 3, 0, 0), [NONE, NONE]);
    }
}
