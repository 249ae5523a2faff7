//! # skillbake-route
//!
//! Routing a request to the right few of thousands of skills, shared by skillbake's compiler
//! (`skillbake-build`, which builds the index at compile time) and its runtime (`skillbake`,
//! which answers `Registry::route` from the compiled tables):
//!
//! * [`tokenize`] — the one tokenizer both sides use: stemming, identifier splitting, CJK
//!   bigrams and unigrams, no dictionary;
//! * [`index`] — the byte layout of the compiled index, its writer and its bounds-checked
//!   reader, and [`index::search`]: top-K by BM25F impacts, scored in fixed windows of documents
//!   with dynamic pruning (MaxScore over the per-term and per-block maxima stored in the index;
//!   exactly [`index::search_exhaustive`]'s answer), memory independent of the number of
//!   skills, with `when_not_to_use` evidence subtracted; [`index::search_near`], the part of the
//!   top-K that scores within a ratio of one document's own score (the compiler's
//!   near-duplicate check), pruned from that score on.
//!
//! ```
//! use skillbake_route::index::{self, Fields, Posting, Writer};
//! use skillbake_route::tokenize::Tokenizer;
//!
//! let mut w = Writer::new(2, 1.0);
//! w.term("csv", 1, &[Posting { doc: 0, impact: 9, fields: Fields::NAME }]).unwrap();
//! w.term("email", 1, &[Posting { doc: 1, impact: 7, fields: Fields::DESCRIPTION }]).unwrap();
//! let bytes = w.finish().unwrap();
//! let ix = index::Index::new(&bytes).unwrap();
//! let terms = index::query_terms(&ix, &mut Tokenizer::new(), "Send an e-mail? No: an email");
//! let hits = index::search(&ix, &terms, 5, |_| true);
//! assert_eq!(hits[0].doc, 1);
//! ```

#![forbid(unsafe_code)]

pub mod index;
pub mod tokenize;

pub use index::{Fields, Hit, Index, FORMAT};
pub use tokenize::{Kind, Tokenizer};
