//! The rule table of `skillbake diff`: every kind of change it recognises, with the version bump
//! the change needs and where it is detected. The table is data ([`Rule::ALL`]); README's
//! "Change rules" table is generated from it and checked by a tidy test, and every rule has a
//! fixture pair under `tests/fixtures/diff/<rule>/{old,new}` whose report is snapshotted.
//!
//! A *major* change can make a call that worked fail or behave differently (a parameter removed,
//! renamed, newly required or narrowed; a permission or tool the agent must now grant; a file
//! or entrypoint gone). A *minor* change keeps every call working and offers or promises
//! something new (an optional parameter, a constraint relaxed, a new file). A *patch* change
//! alters no contract (instructions, descriptions, annotations, file contents). Where skillbake
//! cannot prove a change compatible, it says major and explains what to check.

use std::fmt;

/// How much a change needs the version to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bump {
    /// Nothing to bump (a new skill, a new version beside the others).
    None,
    /// Compatible, no contract changed.
    Patch,
    /// Compatible, the contract grew.
    Minor,
    /// Breaking.
    Major,
}

impl Bump {
    /// `none`, `patch`, `minor` or `major`.
    pub fn as_str(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What part of a pack a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Area {
    /// The parameters (`schema.json`).
    Schema,
    /// `permission`.
    Permissions,
    /// `required_tools`.
    Tools,
    /// `description`, `when_to_use`, `when_not_to_use`: what routing and the model read to
    /// choose the skill.
    Routing,
    /// The SKILL.md body.
    Instructions,
    /// Other frontmatter fields (`output`, `entrypoint`, `requires`, ...).
    Frontmatter,
    /// Embedded files.
    Files,
    /// Skills and versions added or removed.
    Registry,
}

impl Area {
    /// Lower-case name, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Schema => "schema",
            Area::Permissions => "permissions",
            Area::Tools => "tools",
            Area::Routing => "routing",
            Area::Instructions => "instructions",
            Area::Frontmatter => "frontmatter",
            Area::Files => "files",
            Area::Registry => "registry",
        }
    }
}

macro_rules! rules {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $id:literal, $bump:ident, $area:ident, $summary:literal;
    )*) => {
        /// A kind of change between two versions of a pack.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Rule {
            $( $(#[$doc])* $variant, )*
        }

        impl Rule {
            /// Every rule, in documentation order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable kebab-case id, e.g. `property-removed`.
            pub fn as_str(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// The bump a change of this kind needs.
            pub fn bump(self) -> Bump {
                match self { $(Rule::$variant => Bump::$bump,)* }
            }

            /// What part of the pack it concerns.
            pub fn area(self) -> Area {
                match self { $(Rule::$variant => Area::$area,)* }
            }

            /// One sentence: what the rule recognises and why it needs its bump.
            pub fn summary(self) -> &'static str {
                match self { $(Rule::$variant => $summary,)* }
            }

            /// Looks a rule up by its id.
            pub fn from_name(name: &str) -> Option<Rule> {
                match name { $($id => Some(Rule::$variant),)* _ => None }
            }
        }
    };
}

rules! {
    /// schema.json appeared.
    SchemaAdded = "schema-added", Minor, Schema, "A `schema.json` was added: the pack now declares its parameters (and becomes a tool).";
    /// schema.json disappeared.
    SchemaRemoved = "schema-removed", Major, Schema, "The `schema.json` was removed: its tool disappears and calls lose their validation.";
    /// A property is gone.
    PropertyRemoved = "property-removed", Major, Schema, "A property was removed: calls that pass it are rejected or silently ignored.";
    /// A property got another name.
    PropertyRenamed = "property-renamed", Major, Schema, "A property was renamed (removed, and one with the same schema added): calls with the old name break.";
    /// A new optional property.
    OptionalPropertyAdded = "optional-property-added", Minor, Schema, "An optional property was added: every existing call stays valid.";
    /// A new required property.
    RequiredPropertyAdded = "required-property-added", Major, Schema, "A required property was added: existing calls lack it.";
    /// An optional property became required.
    PropertyNowRequired = "property-now-required", Major, Schema, "An optional property became required: calls that leave it out are rejected.";
    /// A required property became optional.
    PropertyNowOptional = "property-now-optional", Minor, Schema, "A required property became optional: every existing call stays valid.";
    /// `type` accepts less.
    TypeNarrowed = "type-narrowed", Major, Schema, "`type` accepts fewer types (a type removed, `number` to `integer`, a type set where there was none).";
    /// `type` accepts more.
    TypeWidened = "type-widened", Minor, Schema, "`type` accepts more types.";
    /// An enum value is gone.
    EnumValueRemoved = "enum-value-removed", Major, Schema, "A value was removed from `enum`: calls that use it are rejected.";
    /// An enum value was added.
    EnumValueAdded = "enum-value-added", Minor, Schema, "A value was added to `enum`.";
    /// A constraint accepts less.
    ConstraintTightened = "constraint-tightened", Major, Schema, "A constraint accepts less: a bound, `pattern`, `format`, `const`, `enum`, `multipleOf`, `uniqueItems`, `allOf` branch or `dependentRequired` added or narrowed, an `anyOf`/`oneOf` alternative removed.";
    /// A constraint accepts more.
    ConstraintRelaxed = "constraint-relaxed", Minor, Schema, "A constraint accepts more: one of the above removed or widened, an `anyOf`/`oneOf` alternative added.";
    /// `additionalProperties: false` appeared.
    AdditionalPropertiesClosed = "additional-properties-closed", Major, Schema, "`additionalProperties` became `false`: calls with extra properties are rejected.";
    /// `additionalProperties: false` disappeared.
    AdditionalPropertiesOpened = "additional-properties-opened", Minor, Schema, "`additionalProperties` is no longer `false`: extra properties are accepted.";
    /// `default` changed.
    DefaultChanged = "default-changed", Minor, Schema, "A `default` was added, changed or removed: calls that leave the property out get another value.";
    /// Documentation inside the schema.
    AnnotationChanged = "annotation-changed", Patch, Schema, "An annotation changed (`description`, `title`, `examples`, `$comment`, `deprecated`, or a keyword validators ignore).";
    /// A keyword whose effect skillbake cannot classify.
    SchemaKeywordChanged = "schema-keyword-changed", Major, Schema, "A keyword changed whose effect skillbake cannot prove compatible (`not`, `if`/`then`/`else`, `patternProperties`, `$schema`, ...): review it.";
    /// A new permission.
    PermissionAdded = "permission-added", Major, Permissions, "A permission was added (an escalation): a policy that ran the pack now refuses it, and a reviewer must agree to the new access.";
    /// A permission dropped.
    PermissionRemoved = "permission-removed", Minor, Permissions, "A permission was removed: the pack needs less.";
    /// A new required tool.
    RequiredToolAdded = "required-tool-added", Major, Tools, "A tool was added to `required_tools`: agents that do not provide it cannot follow the pack.";
    /// A required tool dropped.
    RequiredToolRemoved = "required-tool-removed", Minor, Tools, "A tool was removed from `required_tools`.";
    /// The description changed.
    DescriptionChanged = "description-changed", Patch, Routing, "`description` changed: it decides which requests select the skill (routing and the model's choice).";
    /// When to use it changed.
    WhenToUseChanged = "when-to-use-changed", Patch, Routing, "`when_to_use` or `when_not_to_use` changed: it decides which requests select the skill.";
    /// The instructions changed.
    InstructionsChanged = "instructions-changed", Patch, Instructions, "The body of SKILL.md (the instructions the agent follows) changed; shown as a unified diff.";
    /// The described result changed.
    OutputChanged = "output-changed", Minor, Frontmatter, "`output` (the described result) changed: if the result's structure changed, that is breaking and needs a major version.";
    /// The entrypoint appeared.
    EntrypointAdded = "entrypoint-added", Minor, Frontmatter, "An `entrypoint` was added: the pack can be run.";
    /// The entrypoint disappeared.
    EntrypointRemoved = "entrypoint-removed", Major, Frontmatter, "The `entrypoint` was removed: runs fail with NOT_RUNNABLE.";
    /// Another script takes the parameters.
    EntrypointChanged = "entrypoint-changed", Major, Frontmatter, "`entrypoint` names another script: runs execute different code with the same parameters.";
    /// A new skill requirement, or a changed range.
    RequirementAdded = "requirement-added", Major, Frontmatter, "A `requires:` entry was added, or its range changed: agents must embed a matching version (skillbake does not prove that one range contains another).";
    /// A skill requirement dropped.
    RequirementRemoved = "requirement-removed", Minor, Frontmatter, "A `requires:` entry was removed.";
    /// Any other frontmatter field.
    FieldChanged = "field-changed", Patch, Frontmatter, "Another frontmatter field changed (`input`, `tags`, `timeout`, `author`, ...).";
    /// A new file.
    FileAdded = "file-added", Minor, Files, "A file was added to the pack.";
    /// A file is gone.
    FileRemoved = "file-removed", Major, Files, "A file was removed: instructions, agents or scripts that load it by path break.";
    /// A file's bytes changed.
    FileChanged = "file-changed", Patch, Files, "A file's bytes changed (for text files, with the lines added and removed).";
    /// A skill that was not there.
    SkillAdded = "skill-added", None, Registry, "A skill was added.";
    /// A version beside the others.
    VersionAdded = "version-added", None, Registry, "A version was added beside the existing ones (older than all of them, or with nothing to compare against).";
    /// A skill is gone.
    SkillRemoved = "skill-removed", Major, Registry, "A skill was removed: agents and packs that require it break.";
    /// One version of a skill is gone.
    VersionRemoved = "version-removed", Major, Registry, "A version of a skill is no longer embedded: agents and packs whose range only it matched break.";
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &r in Rule::ALL {
            assert!(seen.insert(r.as_str()), "duplicate rule {r}");
            assert!(r
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-'));
            assert_eq!(Rule::from_name(r.as_str()), Some(r));
        }
    }
}
