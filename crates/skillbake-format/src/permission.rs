//! The permission vocabulary: the names a pack may list in its `permission` frontmatter field and
//! an executor may grant. One table, read by the build-time rule (`unknown-permission`), by the
//! executor's policy check (`PERMISSION_DENIED`) and by the sandbox that enforces each name.
//!
//! The default policy grants nothing: no network, writes only to the run's output folder, reads
//! only the pack, the output folder and what the interpreter needs. A pack runs only when every
//! permission it declares is covered by the granted ones ([`Set::covers`]).
//!
//! | name | allows |
//! |---|---|
//! | `network` | any outbound network connection (covers `smtp`) |
//! | `smtp` | outbound TCP connections to the mail ports 25, 465, 587 and 2525 only |
//! | `filesystem:read` | reading files outside the pack, the run's output folder and the system's runtime paths |
//! | `filesystem:write` | writing files outside the run's output folder |
//! | `filesystem` | both `filesystem:read` and `filesystem:write` |
//! | `subprocess` | starting other programs, or many processes |

/// The TCP ports `smtp` allows connecting to.
pub const SMTP_PORTS: [u16; 4] = [25, 465, 587, 2525];

/// One name of the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Permission {
    /// The name as written in `permission:` and `--allow`.
    pub name: &'static str,
    /// What it allows, one sentence.
    pub summary: &'static str,
    /// What a pack declaring this name needs granted.
    pub needs: Set,
    /// What granting this name allows.
    pub grants: Set,
}

/// A set of elementary capabilities (the atoms behind the names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Set(u8);

const NETWORK: u8 = 1;
const SMTP: u8 = 1 << 1;
const READ: u8 = 1 << 2;
const WRITE: u8 = 1 << 3;
const SUBPROCESS: u8 = 1 << 4;

impl Set {
    /// Nothing: the default policy.
    pub const NONE: Set = Set(0);
    /// Any outbound connection.
    pub const NETWORK: Set = Set(NETWORK);
    /// Outbound TCP to [`SMTP_PORTS`].
    pub const SMTP: Set = Set(SMTP);
    /// Reading outside the pack, the output folder and the runtime paths.
    pub const FILESYSTEM_READ: Set = Set(READ);
    /// Writing outside the output folder.
    pub const FILESYSTEM_WRITE: Set = Set(WRITE);
    /// Starting other programs.
    pub const SUBPROCESS: Set = Set(SUBPROCESS);

    /// Both sets.
    pub const fn union(self, other: Set) -> Set {
        Set(self.0 | other.0)
    }

    /// True when every capability of `needed` is in `self`.
    pub const fn covers(self, needed: Set) -> bool {
        needed.0 & !self.0 == 0
    }

    /// True when `other` shares a capability with `self`.
    pub const fn intersects(self, other: Set) -> bool {
        self.0 & other.0 != 0
    }

    /// True when empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The capabilities of `needed` that `self` lacks.
    pub const fn missing(self, needed: Set) -> Set {
        Set(needed.0 & !self.0)
    }

    /// What granting every name of `names` allows; unknown names grant nothing.
    pub fn granted_by<'a>(names: impl IntoIterator<Item = &'a str>) -> Set {
        names
            .into_iter()
            .filter_map(lookup)
            .fold(Set::NONE, |s, p| s.union(p.grants))
    }
}

/// The vocabulary, in documentation order.
pub const ALL: &[Permission] = &[
    Permission {
        name: "network",
        summary: "Any outbound network connection (includes `smtp`).",
        needs: Set::NETWORK,
        grants: Set::NETWORK.union(Set::SMTP),
    },
    Permission {
        name: "smtp",
        summary: "Outbound TCP connections to the mail ports 25, 465, 587 and 2525 only.",
        needs: Set::SMTP,
        grants: Set::SMTP,
    },
    Permission {
        name: "filesystem:read",
        summary: "Reading files outside the pack, the run's output folder and the system's runtime paths.",
        needs: Set::FILESYSTEM_READ,
        grants: Set::FILESYSTEM_READ,
    },
    Permission {
        name: "filesystem:write",
        summary: "Writing files outside the run's output folder.",
        needs: Set::FILESYSTEM_WRITE,
        grants: Set::FILESYSTEM_WRITE,
    },
    Permission {
        name: "filesystem",
        summary: "Both `filesystem:read` and `filesystem:write`.",
        needs: Set::FILESYSTEM_READ.union(Set::FILESYSTEM_WRITE),
        grants: Set::FILESYSTEM_READ.union(Set::FILESYSTEM_WRITE),
    },
    Permission {
        name: "subprocess",
        summary: "Starting other programs, or many processes.",
        needs: Set::SUBPROCESS,
        grants: Set::SUBPROCESS,
    },
];

/// The permission called `name` (exact, case-sensitive).
pub fn lookup(name: &str) -> Option<&'static Permission> {
    ALL.iter().find(|p| p.name == name)
}

/// Every name, in documentation order.
pub fn names() -> impl ExactSizeIterator<Item = &'static str> {
    ALL.iter().map(|p| p.name)
}

/// The narrowest names that together grant `set` (for messages: "grant `filesystem:write`").
pub fn names_for(set: Set) -> Vec<&'static str> {
    [
        ("network", Set::NETWORK),
        ("smtp", Set::SMTP),
        ("filesystem:read", Set::FILESYSTEM_READ),
        ("filesystem:write", Set::FILESYSTEM_WRITE),
        ("subprocess", Set::SUBPROCESS),
    ]
    .into_iter()
    .filter(|(_, atom)| set.intersects(*atom))
    .map(|(name, _)| name)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(name: &str) -> Set {
        lookup(name).map_or(Set::NONE, |p| p.needs)
    }

    #[test]
    fn network_covers_smtp_but_not_the_reverse() {
        assert!(Set::granted_by(["network"]).covers(needs("smtp")));
        assert!(!Set::granted_by(["smtp"]).covers(needs("network")));
    }

    #[test]
    fn filesystem_needs_read_and_write() {
        let read = Set::granted_by(["filesystem:read"]);
        assert!(read.covers(needs("filesystem:read")));
        assert!(!read.covers(needs("filesystem")));
        assert_eq!(
            names_for(read.missing(needs("filesystem"))),
            ["filesystem:write"]
        );
        let both = Set::granted_by(["filesystem:read", "filesystem:write"]);
        assert!(both.covers(needs("filesystem")));
        assert!(Set::granted_by(["filesystem"]).covers(needs("filesystem:write")));
    }

    #[test]
    fn nothing_is_granted_by_default_and_unknown_names_grant_nothing() {
        for p in ALL {
            assert!(!Set::NONE.covers(p.needs), "{}", p.name);
        }
        assert_eq!(Set::granted_by(["Network", "fs", ""]), Set::NONE);
        assert!(Set::NONE.covers(Set::NONE));
    }

    #[test]
    fn names_are_unique_and_documented() {
        let mut seen = std::collections::BTreeSet::new();
        for p in ALL {
            assert!(seen.insert(p.name), "{}", p.name);
            assert!(p.summary.ends_with('.'), "{}", p.name);
            assert!(
                !p.needs.is_empty() && p.grants.covers(p.needs),
                "{}",
                p.name
            );
        }
        assert_eq!(names().len(), ALL.len());
    }
}
