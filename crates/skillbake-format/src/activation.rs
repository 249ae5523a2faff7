//! Other shapes of a loaded skill, for agents that do not speak DB-GPT's chunk protocol:
//!
//! * learn-claude-code: `<skill name="{name}">\n{body}\n</skill>`;
//! * the Agent Skills client guide: a `<skill_content name="{name}">` block with the body, the
//!   skill's folder, and its resource files listed in `<skill_resources>`.

use crate::escape::html_into;

crate::named_enum! {
    /// Shapes of a loaded skill besides DB-GPT's chunks.
    pub enum Shape {
        /// learn-claude-code: `<skill name="…">\nbody\n</skill>` ([`skill_tag`]).
        SkillTag = "skill-tag",
        /// Agent Skills client guide: `<skill_content name="…">` with the resource list
        /// ([`skill_content`]).
        SkillContent = "skill-content",
    }
}

/// `<skill name="{name}">\n{body}\n</skill>` (learn-claude-code's `load_skill`).
pub fn skill_tag(name: &str, body: &str) -> String {
    let mut s = String::with_capacity(body.len() + name.len() + 32);
    s.push_str("<skill name=\"");
    html_into(&mut s, name);
    s.push_str("\">\n");
    s.push_str(body);
    s.push_str("\n</skill>");
    s
}

/// The `<skill_content>` block: body, folder, and every file but `SKILL.md` as a resource.
pub fn skill_content<'a>(
    name: &str,
    body: &str,
    location: &str,
    files: impl IntoIterator<Item = &'a str>,
) -> String {
    let mut s = String::with_capacity(body.len() + 256);
    s.push_str("<skill_content name=\"");
    html_into(&mut s, name);
    s.push_str("\">\n");
    s.push_str(body);
    s.push_str("\n\nSkill directory: ");
    s.push_str(location);
    s.push_str("\nRelative paths in this skill are relative to the skill directory.\n");
    let mut resources = files.into_iter().filter(|f| *f != "SKILL.md").peekable();
    if resources.peek().is_some() {
        s.push_str("\n<skill_resources>\n");
        for f in resources {
            s.push_str("<file>");
            html_into(&mut s, f);
            s.push_str("</file>\n");
        }
        s.push_str("</skill_resources>\n");
    }
    s.push_str("</skill_content>");
    s
}
