//! The skill catalog an agent puts in its system prompt, in four formats:
//!
//! * [`Format::Xml`] — the Agent Skills `<available_skills>` block, exactly as the reference
//!   `skills-ref to-prompt` writes it (one element per line, name and description HTML-escaped);
//! * [`Format::Dbgpt`] — DB-GPT's `- {name}: {description}` lines, `No skills available.` when
//!   empty;
//! * [`Format::Codex`] — Codex's `## Skills` / `### Available skills` /
//!   `- {name}: {description} (file: {path})`;
//! * [`Format::Markdown`] — a readable list with tags.
//!
//! A budget (in characters) is met the way Codex meets it: descriptions are shortened
//! round-robin, longest first (every description is cut to the same largest length that fits,
//! never below [`MIN_DESCRIPTION`] characters), then entries are dropped from the end and one
//! line says how many were left out. Cuts happen on characters of the raw text, before escaping,
//! so no UTF-8 character or XML escape is ever split. The result is deterministic.

use crate::escape::{html_to, Count, Sink};

crate::named_enum! {
    /// Catalog formats.
    pub enum Format {
        /// Agent Skills `<available_skills>` XML.
        Xml = "xml",
        /// DB-GPT's list.
        Dbgpt = "dbgpt",
        /// Codex's `## Skills` section.
        Codex = "codex",
        /// A markdown list with tags.
        Markdown = "markdown",
    }
}

/// Shortest description left after shortening (characters, ellipsis included).
pub const MIN_DESCRIPTION: usize = 24;

/// Codex's explanation under `## Skills`.
pub const CODEX_INTRO: &str = "A skill is a set of instructions stored in a `SKILL.md` file. Below is the list of skills that can be used. Each entry includes a name, a description and the file path, so you can open the file for the full instructions when a task matches.";

/// What the catalog shows of one skill. [`Entry`] is the plain form; the runtime implements it
/// on its embedded skills, so a budgeted catalog needs no copy of the registry.
pub trait CatalogEntry {
    /// The skill's name.
    fn name(&self) -> &str;
    /// Its description.
    fn description(&self) -> &str;
    /// The path of its `SKILL.md`, as the agent should open or load it.
    fn location(&self) -> &str;
    /// Its tags (markdown format only).
    fn tags(&self) -> impl Iterator<Item = &str> + '_;
}

/// One skill as the catalog shows it.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// The path of its `SKILL.md`, as the agent should open or load it.
    pub location: &'a str,
    /// Its tags (markdown format only).
    pub tags: &'a [&'a str],
}

impl CatalogEntry for Entry<'_> {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn location(&self) -> &str {
        self.location
    }
    fn tags(&self) -> impl Iterator<Item = &str> + '_ {
        self.tags.iter().copied()
    }
}

impl<E: CatalogEntry> CatalogEntry for &E {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn description(&self) -> &str {
        (**self).description()
    }
    fn location(&self) -> &str {
        (**self).location()
    }
    fn tags(&self) -> impl Iterator<Item = &str> + '_ {
        (**self).tags()
    }
}

/// A rendered catalog and what the budget cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// The text.
    pub text: String,
    /// Whether descriptions were shortened.
    pub shortened: bool,
    /// How many entries were left out.
    pub omitted: usize,
}

/// A description cut to `cap` characters: the first `cap - 1` characters, trailing whitespace
/// removed, then `…`. `None` for the description as it is.
fn cut(description: &str, cap: Option<usize>) -> Option<&str> {
    let cap = cap?;
    description.chars().nth(cap)?;
    let end = description
        .char_indices()
        .nth(cap.saturating_sub(1))
        .map_or(description.len(), |(i, _)| i);
    Some(description.get(..end).unwrap_or("").trim_end())
}

/// Writes `text` with every run of whitespace turned into one space, ends trimmed.
fn put_words(out: &mut impl Sink, text: &str) {
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.put(" ");
        }
        out.put(word);
    }
}

/// Writes one entry, its description cut to `cap` characters when given.
fn entry(out: &mut impl Sink, format: Format, e: &impl CatalogEntry, cap: Option<usize>) {
    let cut = cut(e.description(), cap);
    let desc = cut.unwrap_or(e.description());
    let ellipsis = if cut.is_some() { "…" } else { "" };
    match format {
        Format::Xml => {
            out.put("<skill>\n<name>\n");
            html_to(out, e.name());
            out.put("\n</name>\n<description>\n");
            html_to(out, desc);
            out.put(ellipsis);
            out.put("\n</description>\n<location>\n");
            out.put(e.location());
            out.put("\n</location>\n</skill>");
        }
        Format::Dbgpt | Format::Codex => {
            out.put("- ");
            out.put(e.name());
            out.put(": ");
            out.put(desc);
            out.put(ellipsis);
            if format == Format::Codex {
                out.put(" (file: ");
                out.put(e.location());
                out.put(")");
            }
        }
        Format::Markdown => {
            out.put("- **");
            out.put(e.name());
            out.put("**: ");
            put_words(out, desc);
            out.put(ellipsis);
            let mut tags = e.tags().peekable();
            if tags.peek().is_some() {
                out.put(" _(tags: ");
                for (i, tag) in tags.enumerate() {
                    if i > 0 {
                        out.put(", ");
                    }
                    out.put(tag);
                }
                out.put(")_");
            }
        }
    }
}

/// The characters of one entry with its description cut to `cap`.
fn entry_chars(format: Format, e: &impl CatalogEntry, cap: Option<usize>) -> usize {
    let mut c = Count::default();
    entry(&mut c, format, e, cap);
    c.chars
}

/// The line saying how many entries were left out.
fn omission(out: &mut impl Sink, format: Format, n: usize) {
    let skills = if n == 1 { "skill" } else { "skills" };
    let _ = match format {
        Format::Xml => write!(out, "<!-- {n} more {skills} omitted to fit the budget -->"),
        Format::Dbgpt | Format::Codex | Format::Markdown => {
            write!(out, "- … and {n} more {skills} omitted to fit the budget")
        }
    };
}

/// Header lines before the entries, and footer lines after them.
fn frame(format: Format) -> (&'static str, &'static str) {
    match format {
        Format::Xml => ("<available_skills>\n", "\n</available_skills>"),
        Format::Codex => ("## Skills\n", ""),
        Format::Dbgpt => ("", ""),
        Format::Markdown => ("# Available skills\n\n", ""),
    }
}

/// The catalog of no skill at all.
fn empty(format: Format) -> &'static str {
    match format {
        Format::Xml => "<available_skills>\n</available_skills>",
        Format::Dbgpt | Format::Markdown => "No skills available.",
        Format::Codex => "",
    }
}

/// Writes the catalog of the first `kept` entries, cut to `cap`, then the omission line when
/// entries are left out. The sink gets everything but the entries when `entries` is `None`.
fn assemble<I>(
    out: &mut impl Sink,
    format: Format,
    entries: I,
    kept: usize,
    omitted: usize,
    cap: Option<usize>,
) where
    I: Iterator,
    I::Item: CatalogEntry,
{
    let (head, foot) = frame(format);
    out.put(head);
    if format == Format::Codex {
        out.put(CODEX_INTRO);
        out.put("\n### Available skills\n");
    }
    for (i, e) in entries.take(kept).enumerate() {
        if i > 0 {
            out.put("\n");
        }
        entry(out, format, &e, cap);
    }
    if omitted > 0 {
        if kept > 0 {
            out.put("\n");
        }
        omission(out, format, omitted);
    }
    out.put(foot);
}

/// The characters of everything but the entries: frame, separators and omission line.
fn fixed_chars(format: Format, kept: usize, omitted: usize) -> usize {
    let mut c = Count::default();
    assemble(
        &mut c,
        format,
        core::iter::empty::<Entry<'_>>(),
        0,
        omitted,
        None,
    );
    c.chars + kept.saturating_sub(1) + usize::from(kept > 0 && omitted > 0)
}

/// Renders the catalog, fitting it into `budget` characters when one is given. The text never
/// exceeds the budget, except when the budget is smaller than the format's fixed frame plus the
/// omission line: then that frame and line are all that is returned.
///
/// The budget search measures text without building it: the only allocation is the returned
/// text, sized exactly, and the work is linear in the entries' size (times the logarithm of the
/// longest description).
pub fn render<I>(format: Format, entries: I, budget: Option<usize>) -> Catalog
where
    I: IntoIterator,
    I::IntoIter: Clone + ExactSizeIterator,
    I::Item: CatalogEntry,
{
    let entries = entries.into_iter();
    let total = entries.len();
    let build = |kept: usize, cap: Option<usize>| {
        let omitted = total - kept.min(total);
        let mut size = Count::default();
        assemble(&mut size, format, entries.clone(), kept, omitted, cap);
        let mut text = String::with_capacity(size.bytes);
        assemble(&mut text, format, entries.clone(), kept, omitted, cap);
        text
    };
    let done = |text: String, shortened: bool, omitted: usize| Catalog {
        text,
        shortened,
        omitted,
    };
    if total == 0 {
        return done(empty(format).to_string(), false, 0);
    }
    let sum = |cap: Option<usize>| -> usize {
        entries.clone().map(|e| entry_chars(format, &e, cap)).sum()
    };
    let fixed = fixed_chars(format, total, 0);
    let Some(budget) = budget.filter(|&b| fixed + sum(None) > b) else {
        return done(build(total, None), false, 0);
    };
    // Largest common cap on description length that fits (binary search, monotone).
    let longest = entries
        .clone()
        .map(|e| e.description().chars().count())
        .max()
        .unwrap_or(0);
    let fits = |cap: usize| fixed + sum(Some(cap)) <= budget;
    if longest > MIN_DESCRIPTION && fits(MIN_DESCRIPTION) {
        let (mut lo, mut hi) = (MIN_DESCRIPTION, longest);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return done(build(total, Some(lo)), true, 0);
    }
    // Shortest descriptions everywhere, then drop entries from the end: keep the most entries
    // whose text, with the omission line, fits.
    let mut kept = 0;
    let mut prefix = 0;
    for (i, e) in entries.clone().enumerate() {
        prefix += entry_chars(format, &e, Some(MIN_DESCRIPTION));
        if fixed_chars(format, i + 1, total - i - 1) + prefix <= budget {
            kept = i + 1;
        }
    }
    let shortened = entries
        .clone()
        .any(|e| e.description().chars().nth(MIN_DESCRIPTION).is_some());
    done(build(kept, Some(MIN_DESCRIPTION)), shortened, total - kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<Entry<'static>> {
        vec![
            Entry {
                name: "a-skill",
                description: "Does <a> & \"b\" for 'you' — 中文描述也可以。",
                location: "skills/a-skill/SKILL.md",
                tags: &["x", "y"],
            },
            Entry {
                name: "b-skill",
                description: "long description ",
                location: "skills/b-skill/SKILL.md",
                tags: &[],
            },
        ]
    }

    #[test]
    fn xml_matches_skills_ref() {
        let c = render(Format::Xml, entries().get(..1).unwrap_or(&[]), None);
        assert_eq!(
            c.text,
            "<available_skills>\n<skill>\n<name>\na-skill\n</name>\n<description>\nDoes &lt;a&gt; &amp; &quot;b&quot; for &#x27;you&#x27; — 中文描述也可以。\n</description>\n<location>\nskills/a-skill/SKILL.md\n</location>\n</skill>\n</available_skills>"
        );
        assert_eq!(
            render(Format::Xml, &[] as &[Entry<'_>], None).text,
            "<available_skills>\n</available_skills>"
        );
        assert_eq!(
            render(Format::Dbgpt, &[] as &[Entry<'_>], None).text,
            "No skills available."
        );
    }

    #[test]
    fn budgets_shorten_then_drop_and_never_exceed() {
        let many: Vec<Entry<'_>> = (0..40)
            .map(|i| Entry {
                name: ["alpha", "beta", "gamma", "delta"].get(i % 4).copied().unwrap_or(""),
                description: "An honest description with <xml> & ünïcödé characters that goes on for a while to be shortened.",
                location: "skills/x/SKILL.md",
                tags: &[],
            })
            .collect();
        for format in Format::ALL {
            let full = render(format, &many, None).text.chars().count();
            // Below the frame and the omission line nothing fits; that is all that is shown.
            let floor = render(format, &many, Some(0));
            assert_eq!(floor.omitted, many.len());
            let floor = floor.text.chars().count();
            for budget in [full, full - 1, full / 2, full / 5, 400, 120] {
                let c = render(format, &many, Some(budget));
                assert!(
                    c.text.chars().count() <= budget.max(floor),
                    "{format:?} {budget}"
                );
                assert_eq!(c, render(format, &many, Some(budget)), "deterministic");
                if format == Format::Xml {
                    // Escapes are whole: every `&` starts a complete entity.
                    for (i, _) in c.text.match_indices('&') {
                        let rest = &c.text[i..];
                        assert!(["&lt;", "&gt;", "&amp;", "&quot;", "&#x27;"]
                            .iter()
                            .any(|e| rest.starts_with(e)));
                    }
                }
            }
            let half = render(format, &many, Some(full * 4 / 5));
            assert!(
                half.shortened && half.omitted == 0,
                "{format:?}: shortening comes first"
            );
            let tiny = render(format, &many, Some(400));
            assert!(
                tiny.omitted > 0 && tiny.text.contains("more skills omitted"),
                "{format:?}"
            );
        }
    }
}
