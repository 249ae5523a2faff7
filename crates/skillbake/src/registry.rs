//! The serve layer: a [`Registry`] of skills compiled into the binary, looked up through a `phf`
//! perfect hash. Nothing here reads the file system, allocates beyond the reply it returns (a file
//! stored compressed or spliced is decoded once, on first access), or panics on any input.
//!
//! Every row is read from the tables that `skillbake-build` wrote (`skillbake_format::layout`):
//! cells are offsets into the text and data blobs, never pointers.

use crate::__private::{Parts, Str, Table, TextSlot, Texts};
use crate::chunk;
use skillbake_format::activation::Shape as Activation;
use skillbake_format::catalog::{self, Catalog, CatalogEntry};
use skillbake_format::escape::json_unescape_into;
use skillbake_format::file_type::FileKind;
use skillbake_format::layout::{self, body_form, encoding, NONE};
use skillbake_format::semver::{self, Req, Version};
use skillbake_format::template;
use skillbake_format::tools::Format as ToolsFormat;
use std::fmt;

/// Why [`Registry::render`] gave no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// No skill has this name.
    SkillNotFound,
    /// The body uses a construct the precompiled table cannot express (the reason, recorded at
    /// build time).
    NotRenderable(&'static str),
    /// Jinja2 would raise too: an attribute of an undefined variable, a type error.
    Failed(template::RenderError),
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::SkillNotFound => f.write_str("skill not found"),
            RenderError::NotRenderable(why) => f.write_str(why),
            RenderError::Failed(e) => write!(f, "rendering failed: {e}"),
        }
    }
}

impl std::error::Error for RenderError {}

/// The signature of a registry's manifest, as the build embedded it ([`Registry::signature`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManifestSignature {
    /// The public key that signed, `ed25519:` and 64 hexadecimal digits.
    pub public_key: &'static str,
    /// The Ed25519 signature, `ed25519:` and 128 hexadecimal digits.
    pub signature: &'static str,
}

/// The skills compiled into a binary. Build one with `skillbake::include_skills!()`.
#[derive(Clone, Copy)]
pub struct Registry {
    parts: &'static Parts,
    /// The name index's bucket count, as a divisor ([`FastRem`]).
    buckets: FastRem,
    /// The name index's slot count, as a divisor.
    slots: FastRem,
}

/// `n % d` for a `u32` divisor fixed when the registry is built, with two multiplications
/// instead of a division (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
/// 2019: exact for every 32-bit `n` and `d` with a 64-bit multiplier). A lookup takes two
/// remainders; a hardware division costs more than the rest of the probe's arithmetic.
#[derive(Clone, Copy, Debug)]
struct FastRem {
    d: u32,
    /// `⌈2⁶⁴ / d⌉`, wrapped (0 for `d` = 1, whose remainder is always 0).
    m: u64,
}

impl FastRem {
    /// The divisor `d`; 0 (an empty index) gives remainders of 0, where the empty tables read
    /// `NONE`.
    const fn new(d: usize) -> FastRem {
        let d = if d > u32::MAX as usize { 0 } else { d as u32 };
        let m = match d {
            0 => 0,
            _ => (u64::MAX / d as u64).wrapping_add(1),
        };
        FastRem { d, m }
    }

    /// `n % d` (0 when `d` is 0).
    #[inline]
    fn rem(self, n: u32) -> u32 {
        let low = self.m.wrapping_mul(u64::from(n));
        ((u128::from(low) * u128::from(self.d)) >> 64) as u32
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("skills", &self.len())
            .finish_non_exhaustive()
    }
}

/// Why [`Registry::lookup`] found no skill.
#[derive(Debug, Clone, Copy)]
pub enum LookupError<'r> {
    /// No skill has this name, even ignoring case (Unicode lower case).
    UnknownSkill,
    /// The text after `@` is not a version range.
    InvalidRange(semver::Error),
    /// The skill exists (here at the version an agent gets by name) but none of its versions
    /// matches the range.
    NoMatchingVersion(Skill<'r>),
}

impl fmt::Display for LookupError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::UnknownSkill => f.write_str("no skill has this name"),
            LookupError::InvalidRange(e) => {
                write!(f, "the text after `@` is not a version range: {e}")
            }
            LookupError::NoMatchingVersion(s) => {
                write!(
                    f,
                    "no version of `{}` matches; embedded versions: ",
                    s.name()
                )?;
                for (i, v) in s.versions().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(v.version().unwrap_or("(none)"))?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LookupError<'_> {}

/// What a `load_skill` request resolved to.
#[derive(Debug, Clone, Copy)]
pub enum Resolution<'r> {
    /// The skill's body (`file_path` is empty or ends in `SKILL.md`).
    Body(Skill<'r>),
    /// Another embedded file of the skill.
    File(Skill<'r>, File),
    /// The skill exists but `file_path` names none of its files.
    FileNotFound(Skill<'r>),
    /// No skill has this name, even ignoring letter case.
    SkillNotFound,
}

impl Resolution<'_> {
    /// Appends the `load_skill` reply for this resolution to `out`.
    pub fn write_reply(&self, skill_name: &str, file_path: &str, out: &mut String) {
        match self {
            Resolution::Body(s) => {
                let (head, tail) = s.chunk_parts();
                let whole = (file_path == s.skill_md_path()).then(|| s.reply());
                chunk::body_reply(out, whole, head, tail, file_path)
            }
            Resolution::File(s, f) => {
                let content = match f.text() {
                    Some(text) if f.kind() != FileKind::Binary => chunk::Content::Text {
                        output_type: f.kind().output_type(),
                        text,
                    },
                    _ => chunk::Content::Binary {
                        path: f.path(),
                        size: f.size(),
                    },
                };
                chunk::file_reply(out, s.chunk_parts().0, file_path, content)
            }
            Resolution::FileNotFound(s) => {
                chunk::file_not_found(out, s.name(), file_path, s.files().map(|f| f.path()))
            }
            Resolution::SkillNotFound => chunk::skill_not_found(out, skill_name),
        }
    }

    /// True when the reply carries content (the body or a file).
    pub fn is_found(&self) -> bool {
        matches!(self, Resolution::Body(_) | Resolution::File(..))
    }
}

fn slice(text: Texts, s: Str) -> &'static str {
    text.get(s.0, s.1).unwrap_or("")
}

/// A row the name index found: its number and the rest of its hit run (`layout::skill::HIT`),
/// what a hit needs, read with the slot.
#[derive(Clone, Copy)]
struct Probed {
    row: usize,
    /// `[flags, path start, path end, reply start, reply end]`.
    cells: [u32; layout::skill::HIT_CELLS - 2],
}

impl Probed {
    /// The precomputed reply when `file_path` is the row's own `SKILL.md` path (and no file of
    /// the pack has that path): the path compared as bytes.
    #[inline]
    fn own_skill_md_reply(&self, parts: &'static Parts, file_path: &str) -> Option<&'static str> {
        let [flags, path_start, path_end, reply_start, reply_end] = self.cells;
        if flags & layout::flags::OWN_PATH_IS_BODY == 0 {
            return None;
        }
        let path = parts.text.bytes(path_start, path_end)?;
        (path == file_path.as_bytes()).then(|| text_at(parts, reply_start, reply_end))
    }
}

fn text_at(parts: &'static Parts, start: u32, end: u32) -> &'static str {
    parts.text.get(start, end).unwrap_or("")
}

/// The `SKILL.md` of skill row `row` when it is stored spliced around its body, rebuilt once
/// (kept in the row's text slot): prefix, unescaped body, suffix.
fn decoded_skill_md(parts: &'static Parts, row: usize) -> &'static str {
    let Some(slot) = parts.text_slots.get(row) else {
        return "";
    };
    slot.get_or_init(|| {
        let s = |col| {
            let (start, end) = parts
                .skills
                .range(parts.data, layout::skill::WIDTH, row, col);
            text_at(parts, start, end)
        };
        let prefix = s(layout::skill::SKILL_MD_PREFIX);
        let escaped = s(layout::skill::ESCAPED_BODY);
        let suffix = s(layout::skill::SKILL_MD_SUFFIX);
        let mut out = String::with_capacity(prefix.len() + escaped.len() + suffix.len());
        out.push_str(prefix);
        json_unescape_into(&mut out, escaped);
        out.push_str(suffix);
        out.into_boxed_str()
    })
}

impl Registry {
    #[doc(hidden)]
    pub const fn __from_parts(parts: &'static Parts) -> Self {
        Registry {
            parts,
            buckets: FastRem::new(parts.index_disps.rows),
            slots: FastRem::new(parts.index_slots.rows),
        }
    }

    /// Number of skills (each counted once, however many versions it has).
    pub fn len(&self) -> usize {
        self.parts.index_slots.rows
    }

    /// Number of rows of the skill table: every version of every skill.
    fn rows(&self) -> usize {
        self.parts.skills.rows
    }

    /// True when no skill is embedded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The generated tables (for the other serve modules).
    #[cfg(feature = "route")]
    pub(crate) fn __parts(&self) -> &'static Parts {
        self.parts
    }

    /// The pack at row `row` of the skill table (by name, then version).
    pub(crate) fn skill(&self, row: usize) -> Option<Skill<'_>> {
        (row < self.rows()).then_some(Skill { reg: self, row })
    }

    /// The default row of the skill whose name in lower case ([`skillbake_format::name::fold`])
    /// is `key`: one `phf` probe, whose slot holds the row's hit run, and one comparison.
    #[inline]
    fn probe(&self, key: &str) -> Option<Probed> {
        let p = self.parts;
        // An empty index needs no test of its own: both remainders are 0, row 0 of an empty
        // table reads `NONE`, and so does the key range, which matches nothing.
        let h = phf_shared::hash(key, &p.index_key);
        let bucket = self.buckets.rem(h.g) as usize;
        let (d1, d2) = p.index_disps.range(
            p.data,
            layout::index::disps::WIDTH,
            bucket,
            layout::index::disps::D1,
        );
        let slot = self.slots.rem(phf_shared::displace(h.f1, h.f2, d1, d2)) as usize;
        // Outside the table every cell reads `NONE`, and so does the key range: no match.
        let [row, start, end, flags, path_start, path_end, reply_start, reply_end] =
            p.index_slots.cells(
                p.data,
                layout::index::slots::WIDTH,
                slot,
                layout::index::slots::SKILL,
            );
        // Compared as bytes: equal bytes are the same text, with no character boundary to check.
        let stored = p.text.bytes(start, end);
        (stored == Some(key.as_bytes())).then_some(Probed {
            row: row as usize,
            cells: [flags, path_start, path_end, reply_start, reply_end],
        })
    }

    /// The `n`-th skill in name order, at the version an agent gets by name (what
    /// [`Registry::iter`] yields `n`-th; the routing index numbers skills this way). Without
    /// several versions of a skill that is record `n`; otherwise the records are walked.
    #[cfg(feature = "route")]
    pub(crate) fn nth_default(&self, n: usize) -> Option<Skill<'_>> {
        if self.rows() == self.len() {
            return self.skill(n);
        }
        self.iter().nth(n)
    }

    /// The skill with exactly this name (letter case included), at the version an agent gets by
    /// name.
    pub fn get_exact(&self, name: &str) -> Option<Skill<'_>> {
        self.get_name(name).filter(|s| s.name() == name)
    }

    /// The skill a request names: `name` (the version an agent gets: the newest, or the newest
    /// the agent's `[requires]` allows), or `name@range` with a Cargo-style range (`name@1`,
    /// `name@^1.2`, `name@~1.2.0`, `name@=1.2.0`, `name@>=1, <3`): the newest version in range.
    /// The name ignores letter case, as DB-GPT does.
    pub fn get(&self, request: &str) -> Option<Skill<'_>> {
        self.lookup(request).ok()
    }

    /// [`Registry::get`], saying why nothing was found.
    pub fn lookup(&self, request: &str) -> Result<Skill<'_>, LookupError<'_>> {
        self.lookup_probed(request, self.probe(request))
    }

    /// [`Registry::lookup`] once the request has been probed as it is written.
    fn lookup_probed(
        &self,
        request: &str,
        probed: Option<Probed>,
    ) -> Result<Skill<'_>, LookupError<'_>> {
        // A name may hold an `@` where `name-charset` was lowered: the whole request is tried as
        // a name first, and a range follows the last `@` (ranges never hold one).
        if let Some(skill) = self.name_probed(request, probed) {
            return Ok(skill);
        }
        let (name, range) = match request.rsplit_once('@') {
            Some((name, range)) => (name, Some(range)),
            None => (request, None),
        };
        let skill = self.get_name(name).ok_or(LookupError::UnknownSkill)?;
        match range {
            None => Ok(skill),
            Some(range) => {
                let req = Req::parse(range).map_err(LookupError::InvalidRange)?;
                skill
                    .version_matching(&req)
                    .ok_or(LookupError::NoMatchingVersion(skill))
            }
        }
    }

    /// The newest version of skill `name` (letter case ignored) in `range`.
    pub fn get_version(&self, name: &str, range: &Req<'_>) -> Option<Skill<'_>> {
        self.get_name(name)?.version_matching(range)
    }

    /// The signature the build made over the registry's manifest (every embedded file's
    /// SHA-256 under its skill path, `skillbake_format::manifest`), when it was given a signing
    /// key; the runtime only carries it (checking it is `skillbake verify`'s job).
    pub fn signature(&self) -> Option<ManifestSignature> {
        let p = self.parts;
        (!p.signature.is_empty() && !p.signing_key.is_empty()).then_some(ManifestSignature {
            public_key: p.signing_key,
            signature: p.signature,
        })
    }

    /// Every embedded pack: each version of each skill, by name, then oldest version first.
    pub fn all_versions(&self) -> impl ExactSizeIterator<Item = Skill<'_>> + '_ {
        (0..self.rows()).map(move |row| Skill { reg: self, row })
    }

    /// The default version of the skill named `name`, ignoring letter case (as DB-GPT does:
    /// `PDF-Tools` answers `pdf-tools`); the skill keeps the name as written. The index holds
    /// every name in lower case ([`skillbake_format::name::fold`]), and no two names fold alike.
    fn get_name(&self, name: &str) -> Option<Skill<'_>> {
        self.name_probed(name, self.probe(name))
    }

    /// [`Registry::get_name`] once `name` has been probed as it is written.
    fn name_probed(&self, name: &str, probed: Option<Probed>) -> Option<Skill<'_>> {
        match probed {
            Some(probed) => self.skill(probed.row),
            None => self.get_folded(name),
        }
    }

    /// [`Registry::get_name`] for a name not in the index as written: probed again in lower
    /// case, when that differs.
    fn get_folded(&self, name: &str) -> Option<Skill<'_>> {
        // ASCII names up to 64 bytes are lower-cased on the stack.
        let bytes = name.as_bytes();
        let mut buf = [0u8; 64];
        if name.is_ascii() && bytes.len() <= buf.len() {
            if !bytes.iter().any(u8::is_ascii_uppercase) {
                return None;
            }
            let lower = buf.get_mut(..bytes.len())?;
            lower.copy_from_slice(bytes);
            lower.make_ascii_lowercase();
            return self.skill(self.probe(std::str::from_utf8(lower).ok()?)?.row);
        }
        let folded = skillbake_format::name::fold(name);
        self.skill(self.probe(folded.as_ref())?.row)
    }

    /// Every skill once, in name order, at the version an agent gets by name (see
    /// [`Registry::all_versions`] for every version).
    pub fn iter(&self) -> impl Iterator<Item = Skill<'_>> + Clone + '_ {
        (0..self.rows())
            .map(move |row| Skill { reg: self, row })
            .filter(|s| s.is_default())
    }

    /// Every skill name, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.iter().map(|s| s.name())
    }

    /// The catalog of every skill for a system prompt, in `format`, fitted into `budget`
    /// characters when given (see `skillbake_format::catalog`). Rendered on each call from the
    /// skills' names, descriptions, locations and tags (it is a few bytes per skill that a
    /// process asks for once; storing it for every format would grow the binary by several
    /// percent of the packs).
    pub fn catalog(&self, format: catalog::Format, budget: Option<usize>) -> Catalog {
        let skills: Vec<Skill<'_>> = self.iter().collect();
        catalog::render(format, skills, budget)
    }

    /// The tool definitions (`load_skill`, plus one tool per pack with a `schema.json`) as JSON in
    /// `format`, precomputed at build time.
    pub fn tools_json(&self, format: ToolsFormat) -> &'static str {
        self.parts
            .tools
            .get(format.index())
            .map_or("", |&s| slice(self.parts.text, s))
    }

    /// Resolves a `load_skill` request without building the reply.
    ///
    /// `file_path` selects what is served: empty, or a path whose last component is `SKILL.md`,
    /// gives the body (unless it names a `SKILL.md` the pack ships under `assets/` and the like,
    /// which is a file); a path naming another file of the pack (relative to the pack, or with the
    /// pack's location or any trailing part of it in front, `/` or `\\` separated) gives that
    /// file; a path with `..`, an absolute path or an unknown file gives [`Resolution::FileNotFound`].
    pub fn resolve(&self, skill_name: &str, file_path: &str) -> Resolution<'_> {
        let Some(skill) = self.get(skill_name) else {
            return Resolution::SkillNotFound;
        };
        skill.resolve(file_path)
    }

    /// The body of skill `name` rendered with `vars` (see [`Skill::render`]).
    pub fn render(&self, name: &str, vars: &[(&str, &str)]) -> Result<String, RenderError> {
        self.get(name)
            .ok_or(RenderError::SkillNotFound)?
            .render(vars)
    }

    /// DB-GPT's `load_skill(skill_name, file_path)`: the reply as a JSON string of chunks, byte
    /// for byte what DB-GPT returns (see the crate docs).
    #[inline]
    pub fn load_skill(&self, skill_name: &str, file_path: &str) -> String {
        // The hit is one exact-size copy of the precomputed reply (what `String::clone` does),
        // not an empty string grown through `push_str`'s out-of-line reserve.
        match self.own_skill_md_hit(skill_name, file_path) {
            Ok(reply) => reply.to_owned(),
            Err(probed) => {
                let mut out = String::new();
                self.load_skill_resolved(skill_name, file_path, probed, &mut out);
                out
            }
        }
    }

    /// [`Registry::load_skill`] appending to `out` (reuse one buffer across calls to avoid
    /// allocating). For the pack's own `SKILL.md` path the reply was precomputed whole: one copy.
    #[inline]
    pub fn load_skill_into(&self, skill_name: &str, file_path: &str, out: &mut String) {
        match self.own_skill_md_hit(skill_name, file_path) {
            Ok(reply) => out.push_str(reply),
            Err(probed) => self.load_skill_resolved(skill_name, file_path, probed, out),
        }
    }

    /// The hit agents make most, inlined where it is called: the name as indexed and the pack's
    /// own `SKILL.md` path, answered from the cells the probe read. Otherwise what the probe
    /// found, for [`Registry::load_skill_resolved`].
    #[inline]
    fn own_skill_md_hit(
        &self,
        skill_name: &str,
        file_path: &str,
    ) -> Result<&'static str, Option<Probed>> {
        let probed = self.probe(skill_name);
        probed
            .and_then(|h| h.own_skill_md_reply(self.parts, file_path))
            .ok_or(probed)
    }

    /// Every other request of [`Registry::load_skill_into`], once the name was probed as written.
    #[inline(never)]
    fn load_skill_resolved(
        &self,
        skill_name: &str,
        file_path: &str,
        probed: Option<Probed>,
        out: &mut String,
    ) {
        if let Ok(skill) = self.lookup_probed(skill_name, probed) {
            if let Some(reply) = skill.own_skill_md_reply(file_path) {
                out.push_str(reply);
                return;
            }
            skill
                .resolve(file_path)
                .write_reply(skill_name, file_path, out);
            return;
        }
        Resolution::SkillNotFound.write_reply(skill_name, file_path, out);
    }
}

/// One embedded skill.
#[derive(Debug, Clone, Copy)]
pub struct Skill<'r> {
    reg: &'r Registry,
    row: usize,
}

impl<'r> Skill<'r> {
    fn parts(&self) -> &'static Parts {
        self.reg.parts
    }

    /// The registry holding the skill.
    #[cfg(feature = "route")]
    pub(crate) fn registry(&self) -> &'r Registry {
        self.reg
    }

    /// The skill's position among the skills in name order, each at its default version: what
    /// the routing index numbers documents by, and a dense slot in per-skill tables sized by
    /// [`Registry::len`] (every version of a skill has its skill's slot).
    pub fn index(&self) -> usize {
        let reg = self.reg;
        if reg.rows() == reg.len() {
            return self.row;
        }
        let default = reg.get_name(self.name()).map_or(self.row, |s| s.row);
        (0..default)
            .filter(|&row| Skill { reg, row }.is_default())
            .count()
    }

    fn cell(&self, col: usize) -> u32 {
        let p = self.parts();
        p.skills.cell(p.data, layout::skill::WIDTH, self.row, col)
    }

    fn range(&self, col: usize) -> (u32, u32) {
        let p = self.parts();
        p.skills.range(p.data, layout::skill::WIDTH, self.row, col)
    }

    fn s(&self, col: usize) -> &'static str {
        let (start, end) = self.range(col);
        text_at(self.parts(), start, end)
    }

    fn rows(&self, col: usize, table: &Table) -> std::ops::Range<usize> {
        let (start, end) = self.range(col);
        let end = (end as usize).min(table.rows);
        (start as usize).min(end)..end
    }

    fn list(&self, col: usize) -> impl ExactSizeIterator<Item = &'static str> + 'static {
        let p = self.parts();
        self.rows(col, &p.lists).map(move |row| {
            let start = p
                .lists
                .cell(p.data, layout::list::WIDTH, row, layout::list::ITEM);
            let end = p
                .lists
                .cell(p.data, layout::list::WIDTH, row, layout::list::ITEM + 1);
            text_at(p, start, end)
        })
    }

    /// The skill's name.
    pub fn name(&self) -> &'static str {
        self.s(layout::skill::NAME)
    }

    /// The `description` field.
    pub fn description(&self) -> &'static str {
        self.s(layout::skill::DESCRIPTION)
    }

    /// This skill's slot of decoded text.
    fn slot(&self) -> Option<&'static TextSlot> {
        self.parts().text_slots.get(self.row)
    }

    /// The body after the frontmatter, as `load_skill` serves it: line endings normalised to
    /// `\n`, leading and trailing whitespace stripped.
    pub fn body(&self) -> &'static str {
        match self.cell(layout::skill::BODY_FORM) {
            body_form::IN_SKILL_MD => {
                let (start, end) = self.range(layout::skill::BODY);
                decoded_skill_md(self.parts(), self.row)
                    .get(start as usize..end as usize)
                    .unwrap_or("")
            }
            body_form::UNESCAPE => match self.slot() {
                Some(slot) => slot.get_or_init(|| {
                    let mut out = String::new();
                    json_unescape_into(&mut out, self.s(layout::skill::ESCAPED_BODY));
                    out.into_boxed_str()
                }),
                None => "",
            },
            _ => self.s(layout::skill::BODY),
        }
    }

    /// The pack's folder as `load_skill` names it, e.g. `skills/csv-data-analysis`.
    pub fn location(&self) -> &'static str {
        self.s(layout::skill::LOCATION)
    }

    /// The path of the pack's `SKILL.md`, e.g. `skills/csv-data-analysis/SKILL.md`.
    pub fn skill_md_path(&self) -> &'static str {
        self.s(layout::skill::SKILL_MD_PATH)
    }

    /// `version`, as written in the frontmatter.
    pub fn version(&self) -> Option<&'static str> {
        let (start, end) = self.range(layout::skill::VERSION);
        (start != NONE).then(|| text_at(self.parts(), start, end))
    }

    /// `version` as a semantic version (`1.2` reads as 1.2.0 where the build allowed it); `None`
    /// without a version or when it is not one. Ranges match this.
    pub fn semver(&self) -> Option<Version<'static>> {
        Version::parse_lenient(self.version()?)
    }

    /// Whether this is the version of the skill an agent gets by name.
    pub fn is_default(&self) -> bool {
        self.cell(layout::skill::FLAGS) & layout::flags::DEFAULT != 0
    }

    /// The rows of every version of this skill (this one alone when the table says nothing).
    fn version_rows(&self) -> std::ops::Range<usize> {
        let rows = self.rows(layout::skill::VERSIONS, &self.parts().skills);
        if rows.contains(&self.row) {
            rows
        } else {
            self.row..self.row + 1
        }
    }

    /// Every embedded version of this skill, oldest first (this one included).
    pub fn versions(&self) -> impl ExactSizeIterator<Item = Skill<'r>> + 'r {
        let reg = self.reg;
        self.version_rows().map(move |row| Skill { reg, row })
    }

    /// The newest version of this skill that `range` matches.
    pub fn version_matching(&self, range: &Req<'_>) -> Option<Skill<'r>> {
        let reg = self.reg;
        self.version_rows()
            .rev()
            .map(|row| Skill { reg, row })
            .find(|s| s.semver().is_some_and(|v| range.matches(&v)))
    }

    /// `requires:`: the skills this pack relies on, as (name, version range), as written.
    pub fn requires(&self) -> impl ExactSizeIterator<Item = (&'static str, &'static str)> + '_ {
        let p = self.parts();
        let rows = self.rows(layout::skill::REQUIRES, &p.lists);
        let end = rows.end;
        rows.step_by(2).map(move |row| {
            let item = |row: usize| {
                let c = |col| p.lists.cell(p.data, layout::list::WIDTH, row, col);
                text_at(p, c(layout::list::ITEM), c(layout::list::ITEM + 1))
            };
            let range = if row + 1 < end { item(row + 1) } else { "" };
            (item(row), range)
        })
    }

    /// `tags` (a list, or a comma-separated string split as DB-GPT does).
    pub fn tags(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.list(layout::skill::TAGS)
    }

    /// `required_tools` (a list, or a comma-separated string split as DB-GPT does).
    pub fn required_tools(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.list(layout::skill::REQUIRED_TOOLS)
    }

    /// The whole frontmatter as compact JSON, keys in source order.
    pub fn frontmatter_json(&self) -> &'static str {
        self.s(layout::skill::FRONTMATTER)
    }

    /// Every top-level frontmatter field as (key, compact JSON value), in source order.
    pub fn fields(&self) -> impl ExactSizeIterator<Item = (&'static str, &'static str)> + '_ {
        let p = self.parts();
        self.rows(layout::skill::FIELDS, &p.fields).map(move |row| {
            let c = |col| p.fields.cell(p.data, layout::field::WIDTH, row, col);
            (
                text_at(p, c(layout::field::KEY), c(layout::field::KEY + 1)),
                text_at(p, c(layout::field::JSON), c(layout::field::JSON + 1)),
            )
        })
    }

    /// One frontmatter field's value as compact JSON (e.g. `"1.0.0"`, `["a","b"]`).
    pub fn field_json(&self, key: &str) -> Option<&'static str> {
        self.fields().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The pack's `SKILL.md` exactly as written (frontmatter, BOM and line endings included).
    pub fn skill_md(&self) -> Option<File> {
        self.file_at(self.cell(layout::skill::SKILL_MD) as usize)
    }

    /// The text of the pack's `schema.json`, if it has one.
    pub fn schema_json(&self) -> Option<&'static str> {
        let row = self.cell(layout::skill::SCHEMA);
        if row == NONE {
            return None;
        }
        self.file_at(row as usize)?.text()
    }

    fn file_at(&self, row: usize) -> Option<File> {
        let p = self.parts();
        (row < p.files.rows).then_some(File {
            parts: p,
            row,
            skill: self.row,
        })
    }

    /// Every embedded file of the pack (`SKILL.md` included), sorted by path.
    pub fn files(&self) -> impl ExactSizeIterator<Item = File> + '_ {
        let p = self.parts();
        let skill = self.row;
        self.rows(layout::skill::FILES, &p.files)
            .map(move |row| File {
                parts: p,
                row,
                skill,
            })
    }

    /// The embedded file at `path` (relative to the pack, `/`-separated).
    pub fn file(&self, path: &str) -> Option<File> {
        self.file_where(|f| f.path().as_bytes().cmp(path.as_bytes()))
    }

    /// The embedded file whose path is `parts` joined by `/`, compared without building it.
    fn file_of<'p>(&self, parts: impl Iterator<Item = &'p str> + Clone) -> Option<File> {
        let joined = move || {
            parts
                .clone()
                .enumerate()
                .flat_map(|(i, part)| (i > 0).then_some(b'/').into_iter().chain(part.bytes()))
        };
        self.file_where(|f| f.path().bytes().cmp(joined()))
    }

    /// Binary search of the pack's files (sorted by path bytes) with `cmp`.
    fn file_where(&self, mut cmp: impl FnMut(&File) -> std::cmp::Ordering) -> Option<File> {
        let p = self.parts();
        let rows = self.rows(layout::skill::FILES, &p.files);
        let (mut lo, mut hi) = (rows.start, rows.end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let file = File {
                parts: p,
                row: mid,
                skill: self.row,
            };
            match cmp(&file) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(file),
            }
        }
        None
    }

    /// The precomputed reply for [`Skill::skill_md_path`].
    pub(crate) fn reply(&self) -> &'static str {
        self.s(layout::skill::REPLY)
    }

    /// The reply's head (up to the echoed path) and tail (after it).
    pub(crate) fn chunk_parts(&self) -> (&'static str, &'static str) {
        let p = self.parts();
        let (start, end) = self.range(layout::skill::REPLY);
        let head_end = self.cell(layout::skill::HEAD_END);
        let tail_start = self.cell(layout::skill::TAIL_START);
        (text_at(p, start, head_end), text_at(p, tail_start, end))
    }

    /// The precomputed reply ([`Skill::reply`]) when `file_path` is the pack's own `SKILL.md`
    /// path (and no file of the pack has that path), read as [`Probed::own_skill_md_reply`]
    /// does (the hit `load_skill` answers most).
    pub(crate) fn own_skill_md_reply(&self, file_path: &str) -> Option<&'static str> {
        let p = self.parts();
        let cells = p
            .skills
            .cells(p.data, layout::skill::WIDTH, self.row, layout::skill::FLAGS);
        Probed {
            row: self.row,
            cells,
        }
        .own_skill_md_reply(p, file_path)
    }

    /// Resolves `file_path` against this skill (see [`Registry::resolve`]).
    pub fn resolve(self, file_path: &str) -> Resolution<'r> {
        let trimmed = file_path.trim();
        if trimmed.is_empty() {
            return Resolution::Body(self);
        }
        // A `SKILL.md` the pack ships as an example (`assets/example/SKILL.md`) is a file like
        // any other; any other path ending in `SKILL.md` asks for the body, as in DB-GPT.
        let found = self.find_file(trimmed);
        if let Some(f) = found.filter(|f| f.path() != "SKILL.md") {
            return Resolution::File(self, f);
        }
        let last = trimmed.rsplit(['/', '\\']).next().unwrap_or(trimmed);
        if last == "SKILL.md" {
            return Resolution::Body(self);
        }
        Resolution::FileNotFound(self)
    }

    /// The embedded file a request path names: relative to the pack, or with the pack's location
    /// (or a trailing part of it, such as the pack's folder name) in front; `/` or `\\`
    /// separated. Absolute paths, URLs and paths with `..` name nothing.
    pub fn find_file(&self, path: &str) -> Option<File> {
        let path = path.trim();
        let absolute = path.starts_with(['/', '\\'])
            || path.as_bytes().get(1) == Some(&b':')
            || path.contains("://");
        if absolute {
            return None;
        }
        let parts = path
            .split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".");
        // One pass: the number of parts, `..` (names nothing), and whether the path is written
        // the canonical way (`/`-separated, no empty or `.` parts): then it is compared as it
        // is, and so is every tail of it; any other spelling is compared part by part.
        let (mut count, mut canonical) = (0, true);
        for part in path.split(['/', '\\']) {
            match part {
                ".." => return None,
                "" | "." => canonical = false,
                _ => count += 1,
            }
        }
        if count == 0 {
            return None;
        }
        canonical &= !path.contains('\\');
        let lookup = |skip: usize| {
            if canonical {
                self.file(path.splitn(skip + 1, '/').nth(skip)?)
            } else {
                self.file_of(parts.clone().skip(skip))
            }
        };
        if let Some(f) = lookup(0) {
            return Some(f);
        }
        // The pack's location, or a trailing part of it, in front: longest first.
        let location = self.location().split('/').filter(|p| !p.is_empty());
        let depth = location.clone().count();
        (0..depth).find_map(|start| {
            let prefix = location.clone().skip(start);
            let len = depth - start;
            let matches = count > len && prefix.zip(parts.clone()).all(|(a, b)| a == b);
            if matches {
                lookup(len)
            } else {
                None
            }
        })
    }

    /// The variables the body reads when rendered as a Jinja2 template, sorted — what DB-GPT
    /// records as the prompt template's `input_variables` (listed at build time).
    pub fn template_vars(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.list(layout::skill::TEMPLATE_VARS)
    }

    /// The body rendered as DB-GPT renders prompt templates (Jinja2, undefined variables
    /// empty), with `vars` as string values. The template was precompiled at build time; this
    /// interprets its instruction table and parses nothing.
    pub fn render(&self, vars: &[(&str, &str)]) -> Result<String, RenderError> {
        let (start, end) = self.range(layout::skill::TEMPLATE);
        if start == NONE {
            return Err(RenderError::NotRenderable(
                self.s(layout::skill::TEMPLATE_NOTE),
            ));
        }
        let bytes = self
            .parts()
            .data
            .get(start as usize..end as usize)
            .ok_or(RenderError::Failed(template::RenderError::Corrupt))?;
        let program = template::Program::decode(bytes)
            .ok_or(RenderError::Failed(template::RenderError::Corrupt))?;
        template::render(&program, self.body(), vars).map_err(RenderError::Failed)
    }

    /// The skill's body in another activation shape (see [`Activation`]).
    pub fn activation(&self, shape: Activation) -> String {
        match shape {
            Activation::SkillTag => {
                skillbake_format::activation::skill_tag(self.name(), self.body())
            }
            Activation::SkillContent => skillbake_format::activation::skill_content(
                self.name(),
                self.body(),
                self.location(),
                self.files().map(|f| f.path()),
            ),
        }
    }

    /// `load_skill` for this skill (the registered name is used in the reply).
    pub fn load(&self, file_path: &str) -> String {
        let mut out = String::new();
        self.resolve(file_path)
            .write_reply(self.name(), file_path, &mut out);
        out
    }
}

impl CatalogEntry for Skill<'_> {
    fn name(&self) -> &str {
        Skill::name(self)
    }
    fn description(&self) -> &str {
        Skill::description(self)
    }
    fn location(&self) -> &str {
        self.skill_md_path()
    }
    fn tags(&self) -> impl Iterator<Item = &str> + '_ {
        // `Iterator::Item` is invariant: shorten `&'static str` to the trait's lifetime.
        Skill::tags(self).map(|t| -> &str { t })
    }
}

/// One embedded file of a pack.
#[derive(Clone, Copy)]
pub struct File {
    parts: &'static Parts,
    row: usize,
    /// The skill row the file belongs to (whose slot holds a spliced `SKILL.md`).
    skill: usize,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("path", &self.path())
            .field("kind", &self.kind())
            .field("size", &self.size())
            .finish()
    }
}

impl File {
    fn cell(&self, col: usize) -> u32 {
        self.parts
            .files
            .cell(self.parts.data, layout::file::WIDTH, self.row, col)
    }

    /// Path relative to the pack, `/`-separated.
    pub fn path(&self) -> &'static str {
        text_at(
            self.parts,
            self.cell(layout::file::PATH),
            self.cell(layout::file::PATH + 1),
        )
    }

    /// The exact bytes of the file.
    pub fn bytes(&self) -> &'static [u8] {
        let (start, end) = (
            self.cell(layout::file::DATA),
            self.cell(layout::file::DATA + 1),
        );
        let data = || {
            self.parts
                .data
                .get(start as usize..end as usize)
                .unwrap_or(&[])
        };
        match self.cell(layout::file::ENCODING) {
            encoding::TEXT => self.parts.text.bytes(start, end).unwrap_or(&[]),
            encoding::BYTES => data(),
            encoding::SPLICED => self.spliced().as_bytes(),
            encoding::DEFLATE => {
                let slot = self.cell(layout::file::SLOT) as usize;
                match self.parts.byte_slots.get(slot) {
                    Some(slot) => {
                        slot.get_or_init(|| crate::__private::inflate(data(), self.size()))
                    }
                    None => &[],
                }
            }
            _ => &[],
        }
    }

    fn spliced(&self) -> &'static str {
        decoded_skill_md(self.parts, self.skill)
    }

    /// The file as text, when it is UTF-8.
    pub fn text(&self) -> Option<&'static str> {
        match self.cell(layout::file::ENCODING) {
            encoding::TEXT => Some(text_at(
                self.parts,
                self.cell(layout::file::DATA),
                self.cell(layout::file::DATA + 1),
            )),
            encoding::SPLICED => Some(self.spliced()),
            _ => std::str::from_utf8(self.bytes()).ok(),
        }
    }

    /// The file's size in bytes (known without decoding a compressed file).
    pub fn size(&self) -> usize {
        self.cell(layout::file::LEN) as usize
    }

    /// The SHA-256 of the file's exact bytes ([`File::bytes`]), computed when the registry was
    /// built: reading it hashes nothing and decodes nothing.
    pub fn sha256(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (i, chunk) in out.chunks_exact_mut(4).enumerate() {
            chunk.copy_from_slice(&self.cell(layout::file::SHA256 + i).to_le_bytes());
        }
        out
    }

    /// The file's digest as the MCP Skills extension writes it: `sha256:` and 64 lower-case
    /// hexadecimal digits of [`File::sha256`].
    pub fn digest(&self) -> String {
        let mut out = String::with_capacity(7 + 64);
        out.push_str("sha256:");
        for b in self.sha256() {
            for nibble in [b >> 4, b & 15] {
                out.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
            }
        }
        out
    }

    /// True when the file is stored compressed (inflated on first access).
    pub fn is_compressed(&self) -> bool {
        self.cell(layout::file::ENCODING) == encoding::DEFLATE
    }

    /// How the file is served as a chunk.
    pub fn kind(&self) -> FileKind {
        match self.cell(layout::file::KIND) {
            layout::kind::MARKDOWN => FileKind::Markdown,
            layout::kind::CODE => FileKind::Code,
            layout::kind::TEXT => FileKind::Text,
            _ => FileKind::Binary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{layout, FastRem, Registry};
    use crate::__private::{Parts, Table, Texts};

    /// A registry of no skill: every table empty.
    static EMPTY: Parts = Parts {
        text: Texts {
            pieces: &[""],
            shift: 23,
        },
        data: &[],
        skills: Table { at: 0, rows: 0 },
        files: Table { at: 0, rows: 0 },
        fields: Table { at: 0, rows: 0 },
        lists: Table { at: 0, rows: 0 },
        index_key: 0,
        index_disps: Table { at: 0, rows: 0 },
        index_slots: Table { at: 0, rows: 0 },
        tools: [(0, 0); crate::ToolsFormat::ALL.len()],
        text_slots: &[],
        byte_slots: &[],
        route: &[],
        signing_key: "",
        signature: "",
    };

    /// A text offset names its piece by its high bits; a range that leaves its piece, starts
    /// past the last piece or runs backwards reads nothing.
    #[test]
    fn text_offsets_name_a_piece_and_a_byte_in_it() {
        let t = Texts {
            pieces: &["abcd", "ef", "ghij\u{e9}"],
            shift: 3,
        };
        assert_eq!(t.get(0, 4), Some("abcd"));
        assert_eq!(t.get(1, 3), Some("bc"));
        assert_eq!(t.get(8, 10), Some("ef"));
        assert_eq!(t.bytes(9, 10), Some(&b"f"[..]));
        assert_eq!(t.get(16, 22), Some("ghij\u{e9}"));
        assert_eq!(t.get(20, 22), Some("\u{e9}"));
        // Inside the character `é`, across pieces, past the end, backwards, absent.
        assert_eq!(t.get(20, 21), None);
        assert_eq!(t.bytes(20, 21), Some(&[0xc3][..]));
        assert_eq!(t.get(2, 9), None);
        assert_eq!(t.get(8, 11), None);
        assert_eq!(t.get(24, 24), None);
        assert_eq!(t.get(9, 8), None);
        assert_eq!(t.get(9, 7), None);
        assert_eq!(t.get(layout::NONE, layout::NONE), None);
        assert_eq!(t.len(), 12);
        // The largest shift: one piece spans every offset; a shift past it names no piece.
        let whole = Texts {
            pieces: &["abc"],
            shift: 31,
        };
        assert_eq!(whole.get(1, 3), Some("bc"));
        assert_eq!(Texts { shift: 32, ..whole }.get(1, 3), None);
    }

    #[test]
    fn an_empty_registry_finds_nothing_and_says_so() {
        let reg = Registry::__from_parts(&EMPTY);
        assert!(reg.is_empty());
        for name in ["", "pdf", "PDF", "pdf@1", "\u{e9}t\u{e9}"] {
            assert!(reg.get(name).is_none(), "{name}");
            let reply = reg.load_skill(name, "SKILL.md");
            assert!(reply.contains("not found"), "{name}: {reply}");
        }
    }

    /// Numerators to try: the edges and a spread of values (a fixed linear congruential walk).
    fn numerators() -> impl Iterator<Item = u32> {
        let edges = [
            0,
            1,
            2,
            3,
            7,
            8,
            255,
            256,
            65_535,
            65_536,
            u32::MAX - 1,
            u32::MAX,
        ];
        let walk = (0u64..20_000).map(|i| (i.wrapping_mul(6_364_136_223_846_793_005) >> 32) as u32);
        edges.into_iter().chain(walk)
    }

    #[test]
    fn fast_remainders_are_the_remainders() {
        let large = [
            1 << 16,
            (1 << 31) - 1,
            1 << 31,
            (1 << 31) + 1,
            u32::MAX - 1,
            u32::MAX,
        ];
        for d in (1..=2_000).chain(large) {
            let fast = FastRem::new(d as usize);
            for n in numerators() {
                assert_eq!(fast.rem(n), n % d, "{n} % {d}");
            }
        }
    }

    #[test]
    fn a_divisor_of_zero_or_beyond_u32_gives_zero() {
        for d in [0usize].into_iter().chain(usize::try_from(1u64 << 32).ok()) {
            let fast = FastRem::new(d);
            assert_eq!(fast.d, 0);
            assert!(numerators().all(|n| fast.rem(n) == 0));
        }
    }
}
