//! # skillbake
//!
//! The runtime of skillbake: agent skill packs (`SKILL.md` + `schema.json` + scripts and
//! references), validated at build time by [`skillbake-build`](https://docs.rs/skillbake-build)
//! and compiled into your binary as a perfect-hash registry. `load_skill` then runs with zero
//! file-system I/O and answers byte for byte what DB-GPT's `load_skill` tool answers:
//!
//! ```text
//! {"chunks": [{"output_type": "text", "content": "Skill: csv-data-analysis"}, {"output_type": "text", "content": "File path: skills/csv-data-analysis/SKILL.md"}, {"output_type": "text", "content": "---"}, {"output_type": "markdown", "content": "<body>"}]}
//! ```
//!
//! ## Embedding your own skills
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! skillbake = "0.1"
//!
//! [build-dependencies]
//! skillbake-build = "0.1"
//! ```
//!
//! `build.rs`:
//!
//! ```no_run
//! fn main() -> Result<(), skillbake_build::Error> {
//!     skillbake_build::Config::new().skills_dir("skills").compile()
//! }
//! ```
//!
//! and in the crate, `skillbake::include_skills!();` defines `pub static REGISTRY:
//! skillbake::Registry`:
//!
//! ```text
//! skillbake::include_skills!();
//!
//! fn main() {
//!     println!("{}", REGISTRY.load_skill("my-skill", "skills/my-skill/SKILL.md"));
//! }
//! ```
//!
//! ## Features
//!
//! None is on by default: the runtime depends on `phf_shared` (the name index's hash) and the
//! dependency-free `skillbake-format` alone, with no YAML, no JSON Schema and no file system.
//!
//! * `route`: [`Registry::route`], the top-K skills for a request (adds `skillbake-route` and
//!   its stemmer);
//! * `compress`: files stored DEFLATE-compressed (`[embed] compress` in `skillbake.toml`), inflated
//!   on first access (adds `miniz_oxide`); a registry that compresses files needs it;
//! * `testing`: [`assert_skill_snapshots!`], insta snapshots of every skill (adds `insta`).
//!
//! Running a pack's scripts is [`skillbake-exec`](https://docs.rs/skillbake-exec); serving a
//! registry over MCP is [`skillbake-mcp`](https://docs.rs/skillbake-mcp).
//!
//! ## Layers
//!
//! The runtime is the last layer of parse → validate → generate → serve: [`Registry`] and
//! [`Skill`] read tables that `skillbake-build` generated; [`chunk`] writes DB-GPT's replies.

#![forbid(unsafe_code)]
// Nothing on the serving path panics: no unchecked indexing or slicing, no `panic!`.
#![deny(clippy::indexing_slicing, clippy::panic)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod chunk;
mod registry;
#[cfg(feature = "route")]
mod route;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use registry::{
    File, LookupError, ManifestSignature, Registry, RenderError, Resolution, Skill,
};
#[cfg(feature = "route")]
#[cfg_attr(docsrs, doc(cfg(feature = "route")))]
pub use route::{in_bucket, RouteOptions, Routed};
pub use skillbake_format::activation::Shape as Activation;
pub use skillbake_format::catalog::{Catalog, Format as CatalogFormat};
pub use skillbake_format::file_type::FileKind;
pub use skillbake_format::semver::{Req as VersionReq, Version};
pub use skillbake_format::tools::Format as ToolsFormat;

/// Defines `pub static REGISTRY: skillbake::Registry` from the registry that
/// `skillbake_build::Config::compile` wrote to `OUT_DIR` in this crate's `build.rs`.
#[macro_export]
macro_rules! include_skills {
    () => {
        include!(concat!(env!("OUT_DIR"), "/skillbake_registry.rs"));
    };
}

/// Support for generated code. Not public API: may change in any release.
///
/// A generated registry is two blobs and the [`Parts`](__private::Parts) that locate its tables
/// in them (see `skillbake_format::layout` and `ARCHITECTURE.md`). Nothing here holds a pointer
/// per pack: a binary with ten thousand skills starts as fast as one with ten.
#[doc(hidden)]
pub mod __private {
    use std::ops::Range;

    /// The layout version of the routing index this runtime reads; generated code asserts it.
    pub const ROUTE_FORMAT: u32 = 2;
    #[cfg(feature = "route")]
    const _: () = assert!(ROUTE_FORMAT == skillbake_route::FORMAT);

    /// The layout version of the tables this runtime reads; generated code asserts it.
    pub const LAYOUT_FORMAT: u32 = skillbake_format::layout::FORMAT;

    /// A byte range `(start, end)` into the registry's text or data.
    pub type Str = (u32, u32);

    /// A table of `u32` cells in the data blob: `rows` rows from byte `at` (the width is the
    /// table's `WIDTH` in `skillbake_format::layout`).
    #[derive(Debug, Clone, Copy)]
    pub struct Table {
        pub at: usize,
        pub rows: usize,
    }

    impl Table {
        /// Cell `col` of `row`, `NONE` outside the table.
        #[inline]
        pub fn cell(&self, data: &[u8], width: usize, row: usize, col: usize) -> u32 {
            skillbake_format::layout::cell(data, self.at, self.rows, width, row, col)
        }

        /// Cells `col` and `col + 1` of `row` (a range), read together; both `NONE` outside
        /// the table.
        #[inline]
        pub fn range(&self, data: &[u8], width: usize, row: usize, col: usize) -> (u32, u32) {
            let [start, end] = self.cells(data, width, row, col);
            (start, end)
        }

        /// The `N` cells of `row` from `col` on, read with one bounds check; all `NONE` when
        /// any lies outside the table.
        #[inline]
        pub fn cells<const N: usize>(
            &self,
            data: &[u8],
            width: usize,
            row: usize,
            col: usize,
        ) -> [u32; N] {
            skillbake_format::layout::cells(data, self.at, self.rows, width, row, col)
        }
    }

    /// Text decoded on first access and kept for the life of the process (a `SKILL.md` stored
    /// spliced around its body, or a body stored only escaped).
    pub type TextSlot = std::sync::OnceLock<Box<str>>;

    /// Bytes decoded on first access (a compressed file).
    pub type ByteSlot = std::sync::OnceLock<Box<[u8]>>;

    /// Whether this build of the runtime can inflate compressed files (feature `compress`).
    pub const COMPRESS: bool = cfg!(feature = "compress");

    /// The registry's text: every string and UTF-8 file, in pieces of at most `1 << shift`
    /// bytes, one `include_str!` each. A text offset `o` is byte `o & ((1 << shift) - 1)` of
    /// piece `o >> shift`, and no string crosses from one piece into the next. (rustc holds an
    /// included file several times while it compiles it, and under LTO LLVM's bitcode writer
    /// holds one constant many times over: at 10,000 packs, 177 MB of text, rustc on the
    /// crate that includes the registry went from 3.27 GiB with the text as one constant to
    /// 1.39 GiB in pieces.)
    #[derive(Debug, Clone, Copy)]
    pub struct Texts {
        /// The pieces, in order.
        pub pieces: &'static [&'static str],
        /// log2 of the span of text offsets each piece has.
        pub shift: u32,
    }

    impl Texts {
        /// The piece holding `start` and the range `start..end` within it (`None` when `start`
        /// names no piece or `end` comes before the piece).
        #[inline]
        fn locate(&self, start: u32, end: u32) -> Option<(&'static str, Range<usize>)> {
            // `checked_shr` refuses a shift of 32 or more, so the mask below is well defined.
            let piece = self.pieces.get(start.checked_shr(self.shift)? as usize)?;
            let base = start & u32::MAX.wrapping_shl(self.shift);
            Some((
                piece,
                (start - base) as usize..end.checked_sub(base)? as usize,
            ))
        }

        /// The bytes of `start..end`; `None` when the range is not within one piece.
        #[inline]
        pub fn bytes(&self, start: u32, end: u32) -> Option<&'static [u8]> {
            let (piece, range) = self.locate(start, end)?;
            piece.as_bytes().get(range)
        }

        /// The text of `start..end`; `None` when the range is not within one piece or does not
        /// fall on character boundaries.
        #[inline]
        pub fn get(&self, start: u32, end: u32) -> Option<&'static str> {
            let (piece, range) = self.locate(start, end)?;
            piece.get(range)
        }

        /// The length in bytes of every piece together.
        pub fn len(&self) -> usize {
            self.pieces.iter().map(|p| p.len()).sum()
        }

        /// Whether there is no text at all.
        pub fn is_empty(&self) -> bool {
            self.pieces.iter().all(|p| p.is_empty())
        }
    }

    /// The blobs and tables of a registry.
    #[derive(Clone, Copy)]
    pub struct Parts {
        /// Every string and UTF-8 file.
        pub text: Texts,
        /// The tables, then the bytes of binary and compressed files.
        pub data: &'static [u8],
        /// `layout::skill`, one row per skill in name order.
        pub skills: Table,
        /// `layout::file`.
        pub files: Table,
        /// `layout::field`.
        pub fields: Table,
        /// `layout::list`.
        pub lists: Table,
        /// The name index's hash key (`phf_shared::hash`).
        pub index_key: u64,
        /// `layout::index::disps`.
        pub index_disps: Table,
        /// `layout::index::slots`.
        pub index_slots: Table,
        /// Tool definitions as JSON, in `ToolsFormat::ALL` order.
        pub tools: [Str; crate::ToolsFormat::ALL.len()],
        /// One per skill (see [`TextSlot`]).
        pub text_slots: &'static [TextSlot],
        /// One per compressed file (see [`ByteSlot`]).
        pub byte_slots: &'static [ByteSlot],
        /// The routing index (`skillbake_route::index` layout).
        pub route: &'static [u8],
        /// The public key that signed the manifest, `ed25519:` and hexadecimal; empty when the
        /// build signed nothing.
        pub signing_key: &'static str,
        /// The manifest's signature, `ed25519:` and hexadecimal; empty when unsigned.
        pub signature: &'static str,
    }

    impl std::fmt::Debug for Parts {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Parts")
                .field("text_bytes", &self.text.len())
                .field("data_bytes", &self.data.len())
                .field("skills", &self.skills.rows)
                .field("files", &self.files.rows)
                .finish_non_exhaustive()
        }
    }

    /// Inflates a raw DEFLATE stream of `len` bytes once inflated; empty when it is not one.
    #[cfg(feature = "compress")]
    pub fn inflate(data: &[u8], len: usize) -> Box<[u8]> {
        match miniz_oxide::inflate::decompress_to_vec_with_limit(data, len) {
            Ok(v) if v.len() == len => v.into_boxed_slice(),
            _ => Box::default(),
        }
    }

    /// Without feature `compress` nothing is inflated (generated code that needs it does not
    /// compile: see `COMPRESS`).
    #[cfg(not(feature = "compress"))]
    pub fn inflate(_data: &[u8], _len: usize) -> Box<[u8]> {
        Box::default()
    }
}
