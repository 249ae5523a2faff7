//! The serve layer: a [`Registry`] of skills compiled into the binary, looked up through a `phf`
//! perfect hash. Nothing here reads the file system, allocates beyond the reply it returns, or
//! panics on any input.

use crate::__private::{FieldRecord, FileRecord, Parts, SkillRecord, Str};
use crate::chunk;
use skillbake_format::activation::Shape as Activation;
use skillbake_format::catalog::{self, Catalog, CatalogEntry};
use skillbake_format::file_type::FileKind;
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

/// The skills compiled into a binary. Build one with `skillbake::include_skills!()` (or use
/// `skillbake::BUNDLED`, the packs shipped with skillbake itself).
#[derive(Debug, Clone, Copy)]
pub struct Registry {
    parts: Parts,
}

/// Why [`Registry::lookup`] found no skill.
#[derive(Debug, Clone, Copy)]
pub enum LookupError<'r> {
    /// No skill has this name, even ignoring ASCII case.
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
            Resolution::Body(s) => chunk::body_reply(out, s, file_path),
            Resolution::File(s, f) => chunk::file_reply(out, s, file_path, f),
            Resolution::FileNotFound(s) => chunk::file_not_found(out, s, file_path),
            Resolution::SkillNotFound => chunk::skill_not_found(out, skill_name),
        }
    }

    /// True when the reply carries content (the body or a file).
    pub fn is_found(&self) -> bool {
        matches!(self, Resolution::Body(_) | Resolution::File(..))
    }
}

fn slice(text: &'static str, s: Str) -> &'static str {
    text.get(s.0 as usize..s.1 as usize).unwrap_or("")
}

impl Registry {
    #[doc(hidden)]
    pub const fn __from_parts(parts: Parts) -> Self {
        Registry { parts }
    }

    /// Number of skills (each counted once, however many versions it has).
    pub fn len(&self) -> usize {
        self.parts.index.len()
    }

    /// True when no skill is embedded.
    pub fn is_empty(&self) -> bool {
        self.parts.skills.is_empty()
    }

    /// The generated tables (for the other serve modules).
    pub(crate) fn __parts(&self) -> &Parts {
        &self.parts
    }

    /// The skill at position `index` in name order.
    pub(crate) fn skill(&self, index: usize) -> Option<Skill<'_>> {
        self.parts
            .skills
            .get(index)
            .map(|rec| Skill { reg: self, rec })
    }

    /// The `n`-th skill in name order, at the version an agent gets by name (what
    /// [`Registry::iter`] yields `n`-th; the routing index numbers skills this way). Without
    /// several versions of a skill that is record `n`; otherwise the records are walked.
    #[cfg(feature = "route")]
    pub(crate) fn nth_default(&self, n: usize) -> Option<Skill<'_>> {
        if self.parts.skills.len() == self.len() {
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
        // A name may hold an `@` where `name-charset` was lowered: the whole request is tried as
        // a name first, and a range follows the last `@` (ranges never hold one).
        if let Some(skill) = self.get_name(request) {
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

    /// Every embedded pack: each version of each skill, by name, then oldest version first.
    pub fn all_versions(&self) -> impl ExactSizeIterator<Item = Skill<'_>> + '_ {
        self.parts
            .skills
            .iter()
            .map(move |rec| Skill { reg: self, rec })
    }

    /// The default version of the skill named `name`, ignoring letter case (as DB-GPT does:
    /// `PDF-Tools` answers `pdf-tools`); the skill keeps the name as written. The index holds
    /// every name in lower case ([`skillbake_format::name::fold`]), and no two names fold alike.
    fn get_name(&self, name: &str) -> Option<Skill<'_>> {
        if let Some(&index) = self.parts.index.get(name) {
            return self.skill(index as usize);
        }
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
            let index = *self.parts.index.get(std::str::from_utf8(lower).ok()?)?;
            return self.skill(index as usize);
        }
        let folded = skillbake_format::name::fold(name);
        let index = *self.parts.index.get(folded.as_ref())?;
        self.skill(index as usize)
    }

    /// Every skill once, in name order, at the version an agent gets by name (see
    /// [`Registry::all_versions`] for every version).
    pub fn iter(&self) -> impl Iterator<Item = Skill<'_>> + '_ {
        self.parts
            .skills
            .iter()
            .filter(|rec| rec.default)
            .map(move |rec| Skill { reg: self, rec })
    }

    /// Every skill name, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.iter().map(|s| s.name())
    }

    /// The catalog of every skill for a system prompt, in `format`, fitted into `budget`
    /// characters when given (see `skillbake_format::catalog`). Without a budget the text was
    /// precomputed at build time.
    pub fn catalog(&self, format: catalog::Format, budget: Option<usize>) -> Catalog {
        let full = self
            .parts
            .catalogs
            .get(format.index())
            .map_or("", |&s| slice(self.parts.text, s));
        if budget.is_none_or(|b| full.chars().nth(b).is_none()) {
            return Catalog {
                text: full.to_string(),
                shortened: false,
                omitted: 0,
            };
        }
        let skills = self
            .parts
            .skills
            .iter()
            .map(move |rec| Skill { reg: self, rec });
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
    /// pack's location or any trailing part of it in front, `/` or `\` separated) gives that
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
    pub fn load_skill(&self, skill_name: &str, file_path: &str) -> String {
        let mut out = String::new();
        self.load_skill_into(skill_name, file_path, &mut out);
        out
    }

    /// [`Registry::load_skill`] appending to `out` (reuse one buffer across calls to avoid
    /// allocating).
    pub fn load_skill_into(&self, skill_name: &str, file_path: &str, out: &mut String) {
        self.resolve(skill_name, file_path)
            .write_reply(skill_name, file_path, out);
    }
}

impl Registry {
    /// The records of every version of `skill`'s skill.
    fn skills_named(&self, skill: &Skill<'_>) -> &'static [SkillRecord] {
        let skills: &'static [SkillRecord] = self.parts.skills;
        let (start, end) = skill.rec.versions;
        skills
            .get(start as usize..end as usize)
            .filter(|run| !run.is_empty())
            .unwrap_or(std::slice::from_ref(skill.rec))
    }
}

/// One embedded skill.
#[derive(Debug, Clone, Copy)]
pub struct Skill<'r> {
    reg: &'r Registry,
    rec: &'static SkillRecord,
}

impl<'r> Skill<'r> {
    /// The registry holding the skill.
    #[cfg(feature = "route")]
    pub(crate) fn registry(&self) -> &'r Registry {
        self.reg
    }

    /// The skill's position in name order.
    #[cfg(feature = "route")]
    pub(crate) fn index(&self) -> usize {
        self.reg
            .parts
            .index
            .get(self.name())
            .map_or(usize::MAX, |&i| i as usize)
    }

    fn s(&self, s: Str) -> &'static str {
        slice(self.reg.parts.text, s)
    }

    fn list(&self, range: Str) -> impl ExactSizeIterator<Item = &'static str> + 'static {
        let text = self.reg.parts.text;
        let lists: &'static [Str] = self.reg.parts.lists;
        let items = lists.get(range.0 as usize..range.1 as usize).unwrap_or(&[]);
        items.iter().map(move |&s| slice(text, s))
    }

    /// The skill's name.
    pub fn name(&self) -> &'static str {
        self.s(self.rec.name)
    }

    /// The `description` field.
    pub fn description(&self) -> &'static str {
        self.s(self.rec.description)
    }

    /// The body after the frontmatter, as `load_skill` serves it: line endings normalised to
    /// `\n`, leading and trailing whitespace stripped.
    pub fn body(&self) -> &'static str {
        self.s(self.rec.body)
    }

    /// The pack's folder as `load_skill` names it, e.g. `skills/csv-data-analysis`.
    pub fn location(&self) -> &'static str {
        self.s(self.rec.location)
    }

    /// The path of the pack's `SKILL.md`, e.g. `skills/csv-data-analysis/SKILL.md`.
    pub fn skill_md_path(&self) -> &'static str {
        self.s(self.rec.skill_md_path)
    }

    /// `version`, as written in the frontmatter.
    pub fn version(&self) -> Option<&'static str> {
        self.rec.version.map(|v| self.s(v))
    }

    /// `version` as a semantic version (`1.2` reads as 1.2.0 where the build allowed it); `None`
    /// without a version or when it is not one. Ranges match this.
    pub fn semver(&self) -> Option<Version<'static>> {
        Version::parse_lenient(self.version()?)
    }

    /// Whether this is the version of the skill an agent gets by name.
    pub fn is_default(&self) -> bool {
        self.rec.default
    }

    /// Every embedded version of this skill, oldest first (this one included).
    pub fn versions(&self) -> impl ExactSizeIterator<Item = Skill<'r>> + 'r {
        let reg = self.reg;
        reg.skills_named(self)
            .iter()
            .map(move |rec| Skill { reg, rec })
    }

    /// The newest version of this skill that `range` matches.
    pub fn version_matching(&self, range: &Req<'_>) -> Option<Skill<'r>> {
        let reg = self.reg;
        reg.skills_named(self)
            .iter()
            .rev()
            .find(|rec| {
                let s = Skill { reg, rec };
                s.semver().is_some_and(|v| range.matches(&v))
            })
            .map(|rec| Skill { reg, rec })
    }

    /// `requires:`: the skills this pack relies on, as (name, version range), as written.
    pub fn requires(&self) -> impl ExactSizeIterator<Item = (&'static str, &'static str)> + '_ {
        let items = self
            .reg
            .parts
            .lists
            .get(self.rec.requires.0 as usize..self.rec.requires.1 as usize)
            .unwrap_or(&[]);
        items.chunks_exact(2).map(move |pair| match pair {
            [name, range] => (self.s(*name), self.s(*range)),
            _ => ("", ""),
        })
    }

    /// `tags` (a list, or a comma-separated string split as DB-GPT does).
    pub fn tags(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.list(self.rec.tags)
    }

    /// `required_tools` (a list, or a comma-separated string split as DB-GPT does).
    pub fn required_tools(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.list(self.rec.required_tools)
    }

    /// The whole frontmatter as compact JSON, keys in source order.
    pub fn frontmatter_json(&self) -> &'static str {
        self.s(self.rec.frontmatter)
    }

    fn field_records(&self) -> &'static [FieldRecord] {
        let fields: &'static [FieldRecord] = self.reg.parts.fields;
        fields
            .get(self.rec.fields.0 as usize..self.rec.fields.1 as usize)
            .unwrap_or(&[])
    }

    /// Every top-level frontmatter field as (key, compact JSON value), in source order.
    pub fn fields(&self) -> impl ExactSizeIterator<Item = (&'static str, &'static str)> + '_ {
        self.field_records()
            .iter()
            .map(move |f| (self.s(f.key), self.s(f.json)))
    }

    /// One frontmatter field's value as compact JSON (e.g. `"1.0.0"`, `["a","b"]`).
    pub fn field_json(&self, key: &str) -> Option<&'static str> {
        self.fields().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The pack's `SKILL.md` exactly as written (frontmatter, BOM and line endings included).
    pub fn skill_md(&self) -> Option<File> {
        self.file_at(self.rec.skill_md as usize)
    }

    /// The text of the pack's `schema.json`, if it has one.
    pub fn schema_json(&self) -> Option<&'static str> {
        let file = self.file_at(self.rec.schema? as usize)?;
        file.text()
    }

    fn file_records(&self) -> &'static [FileRecord] {
        let files: &'static [FileRecord] = self.reg.parts.files;
        files
            .get(self.rec.files.0 as usize..self.rec.files.1 as usize)
            .unwrap_or(&[])
    }

    fn file_at(&self, index: usize) -> Option<File> {
        self.reg.parts.files.get(index).map(|rec| File {
            rec,
            text: self.reg.parts.text,
            bytes: self.reg.parts.bytes,
        })
    }

    /// Every embedded file of the pack (`SKILL.md` included), sorted by path.
    pub fn files(&self) -> impl ExactSizeIterator<Item = File> + '_ {
        let (text, bytes) = (self.reg.parts.text, self.reg.parts.bytes);
        self.file_records()
            .iter()
            .map(move |rec| File { rec, text, bytes })
    }

    /// The embedded file at `path` (relative to the pack, `/`-separated).
    pub fn file(&self, path: &str) -> Option<File> {
        let text = self.reg.parts.text;
        self.file_where(|r| slice(text, r.path).as_bytes().cmp(path.as_bytes()))
    }

    /// The embedded file whose path is `parts` joined by `/`, compared without building it.
    fn file_of<'p>(&self, parts: impl Iterator<Item = &'p str> + Clone) -> Option<File> {
        let text = self.reg.parts.text;
        let joined = move || {
            parts
                .clone()
                .enumerate()
                .flat_map(|(i, part)| (i > 0).then_some(b'/').into_iter().chain(part.bytes()))
        };
        self.file_where(|r| slice(text, r.path).bytes().cmp(joined()))
    }

    /// Binary search of the pack's files (sorted by path bytes) with `cmp`.
    fn file_where(&self, cmp: impl FnMut(&FileRecord) -> std::cmp::Ordering) -> Option<File> {
        let recs = self.file_records();
        let i = recs.binary_search_by(cmp).ok()?;
        Some(File {
            rec: recs.get(i)?,
            text: self.reg.parts.text,
            bytes: self.reg.parts.bytes,
        })
    }

    /// The skill's row in the registry's tables (its position in name order).
    #[cfg(feature = "exec")]
    pub(crate) fn ordinal(&self) -> usize {
        self.reg
            .parts
            .index
            .get(self.name())
            .map_or(usize::MAX, |&i| i as usize)
    }

    pub(crate) fn chunk_parts(&self) -> (&'static str, &'static str) {
        (self.s(self.rec.head), self.s(self.rec.tail))
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
    /// (or a trailing part of it, such as the pack's folder name) in front; `/` or `\`
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
        self.list(self.rec.template_vars)
    }

    /// The body rendered as DB-GPT renders prompt templates (Jinja2, undefined variables
    /// empty), with `vars` as string values. The template was precompiled at build time; this
    /// interprets its instruction table and parses nothing.
    pub fn render(&self, vars: &[(&str, &str)]) -> Result<String, RenderError> {
        let Some(range) = self.rec.template else {
            return Err(RenderError::NotRenderable(self.s(self.rec.template_note)));
        };
        let bytes = self
            .reg
            .parts
            .bytes
            .get(range.0 as usize..range.1 as usize)
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
#[derive(Debug, Clone, Copy)]
pub struct File {
    rec: &'static FileRecord,
    text: &'static str,
    bytes: &'static [u8],
}

impl File {
    /// Path relative to the pack, `/`-separated.
    pub fn path(&self) -> &'static str {
        slice(self.text, self.rec.path)
    }

    /// The exact bytes of the file.
    pub fn bytes(&self) -> &'static [u8] {
        self.bytes
            .get(self.rec.data.0 as usize..self.rec.data.1 as usize)
            .unwrap_or(&[])
    }

    /// The file as text, when it is UTF-8.
    pub fn text(&self) -> Option<&'static str> {
        std::str::from_utf8(self.bytes()).ok()
    }

    /// How the file is served as a chunk.
    pub fn kind(&self) -> FileKind {
        self.rec.kind
    }
}
