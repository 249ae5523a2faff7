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

use crate::escape::html_into;

/// Catalog formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Agent Skills `<available_skills>` XML.
    Xml,
    /// DB-GPT's list.
    Dbgpt,
    /// Codex's `## Skills` section.
    Codex,
    /// A markdown list with tags.
    Markdown,
}

impl Format {
    /// Every format, in documentation order.
    pub const ALL: [Format; 4] = [Format::Xml, Format::Dbgpt, Format::Codex, Format::Markdown];

    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Xml => "xml",
            Format::Dbgpt => "dbgpt",
            Format::Codex => "codex",
            Format::Markdown => "markdown",
        }
    }

    /// Parses a format name.
    pub fn from_name(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// Shortest description left after shortening (characters, ellipsis included).
pub const MIN_DESCRIPTION: usize = 24;

/// Codex's explanation under `## Skills`.
pub const CODEX_INTRO: &str = "A skill is a set of instructions stored in a `SKILL.md` file. Below is the list of skills that can be used. Each entry includes a name, a description and the file path, so you can open the file for the full instructions when a task matches.";

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

fn truncate(s: &str, cap: Option<usize>) -> std::borrow::Cow<'_, str> {
    match cap {
        Some(cap) if s.chars().count() > cap => {
            let kept: String = s.chars().take(cap.saturating_sub(1)).collect();
            format!("{}…", kept.trim_end()).into()
        }
        _ => s.into(),
    }
}

fn entry(format: Format, e: &Entry<'_>, cap: Option<usize>) -> String {
    let desc = truncate(e.description, cap);
    let mut s = String::new();
    match format {
        Format::Xml => {
            s.push_str("<skill>\n<name>\n");
            html_into(&mut s, e.name);
            s.push_str("\n</name>\n<description>\n");
            html_into(&mut s, &desc);
            s.push_str("\n</description>\n<location>\n");
            s.push_str(e.location);
            s.push_str("\n</location>\n</skill>");
        }
        Format::Dbgpt => {
            s.push_str("- ");
            s.push_str(e.name);
            s.push_str(": ");
            s.push_str(&desc);
        }
        Format::Codex => {
            s.push_str("- ");
            s.push_str(e.name);
            s.push_str(": ");
            s.push_str(&desc);
            s.push_str(" (file: ");
            s.push_str(e.location);
            s.push(')');
        }
        Format::Markdown => {
            s.push_str("- **");
            s.push_str(e.name);
            s.push_str("**: ");
            s.push_str(&desc.split_whitespace().collect::<Vec<_>>().join(" "));
            if !e.tags.is_empty() {
                s.push_str(" _(tags: ");
                s.push_str(&e.tags.join(", "));
                s.push_str(")_");
            }
        }
    }
    s
}

fn omission(format: Format, n: usize) -> String {
    let skills = if n == 1 { "skill" } else { "skills" };
    match format {
        Format::Xml => format!("<!-- {n} more {skills} omitted to fit the budget -->"),
        Format::Dbgpt | Format::Codex | Format::Markdown => {
            format!("- … and {n} more {skills} omitted to fit the budget")
        }
    }
}

/// Header lines before the entries, and footer lines after them.
fn frame(format: Format) -> (&'static str, &'static str) {
    match format {
        Format::Xml => ("<available_skills>\n", "\n</available_skills>"),
        Format::Dbgpt => ("", ""),
        Format::Codex => ("", ""),
        Format::Markdown => ("# Available skills\n\n", ""),
    }
}

fn assemble(format: Format, lines: &[String], omitted: usize, total: usize) -> String {
    if total == 0 {
        return match format {
            Format::Xml => "<available_skills>\n</available_skills>".into(),
            Format::Dbgpt | Format::Markdown => "No skills available.".into(),
            Format::Codex => String::new(),
        };
    }
    let (head, foot) = frame(format);
    let mut s = String::from(head);
    if format == Format::Codex {
        s.push_str("## Skills\n");
        s.push_str(CODEX_INTRO);
        s.push_str("\n### Available skills\n");
    }
    let mut all: Vec<&str> = lines.iter().map(String::as_str).collect();
    let note = (omitted > 0).then(|| omission(format, omitted));
    if let Some(n) = &note {
        all.push(n);
    }
    s.push_str(&all.join("\n"));
    s.push_str(foot);
    s
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Renders the catalog, fitting it into `budget` characters when one is given. The text never
/// exceeds the budget, except when the budget is smaller than the format's fixed frame plus the
/// omission line: then that frame and line are all that is returned.
pub fn render(format: Format, entries: &[Entry<'_>], budget: Option<usize>) -> Catalog {
    let full: Vec<String> = entries.iter().map(|e| entry(format, e, None)).collect();
    let text = assemble(format, &full, 0, entries.len());
    let Some(budget) = budget else {
        return Catalog {
            text,
            shortened: false,
            omitted: 0,
        };
    };
    if chars(&text) <= budget {
        return Catalog {
            text,
            shortened: false,
            omitted: 0,
        };
    }
    // Fixed cost of everything but the entries (frame, separators) for `n` kept entries.
    let base = |kept: usize, omitted: usize| {
        let empty: Vec<String> = vec![String::new(); kept];
        chars(&assemble(format, &empty, omitted, entries.len()))
    };
    let cost = |cap: usize| -> Vec<usize> {
        entries
            .iter()
            .map(|e| chars(&entry(format, e, Some(cap))))
            .collect()
    };
    // Largest common cap on description length that fits (binary search, monotone).
    let longest = entries
        .iter()
        .map(|e| chars(e.description))
        .max()
        .unwrap_or(0);
    let fixed = base(entries.len(), 0);
    let fits = |cap: usize| fixed + cost(cap).iter().sum::<usize>() <= budget;
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
        let lines: Vec<String> = entries.iter().map(|e| entry(format, e, Some(lo))).collect();
        return Catalog {
            text: assemble(format, &lines, 0, entries.len()),
            shortened: true,
            omitted: 0,
        };
    }
    // Shortest descriptions everywhere, then drop entries from the end.
    let costs = cost(MIN_DESCRIPTION);
    let mut kept = entries.len();
    let mut sum: usize = costs.iter().sum();
    while kept > 0 && base(kept, entries.len() - kept) + sum > budget {
        kept -= 1;
        sum -= costs[kept];
    }
    let lines: Vec<String> = entries[..kept]
        .iter()
        .map(|e| entry(format, e, Some(MIN_DESCRIPTION)))
        .collect();
    Catalog {
        text: assemble(format, &lines, entries.len() - kept, entries.len()),
        shortened: entries
            .iter()
            .any(|e| chars(e.description) > MIN_DESCRIPTION),
        omitted: entries.len() - kept,
    }
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
        let c = render(Format::Xml, &entries()[..1], None);
        assert_eq!(
            c.text,
            "<available_skills>\n<skill>\n<name>\na-skill\n</name>\n<description>\nDoes &lt;a&gt; &amp; &quot;b&quot; for &#x27;you&#x27; — 中文描述也可以。\n</description>\n<location>\nskills/a-skill/SKILL.md\n</location>\n</skill>\n</available_skills>"
        );
        assert_eq!(
            render(Format::Xml, &[], None).text,
            "<available_skills>\n</available_skills>"
        );
        assert_eq!(
            render(Format::Dbgpt, &[], None).text,
            "No skills available."
        );
    }

    #[test]
    fn budgets_shorten_then_drop_and_never_exceed() {
        let many: Vec<Entry<'_>> = (0..40)
            .map(|i| Entry {
                name: ["alpha", "beta", "gamma", "delta"][i % 4],
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
