//! Semantic versions and version ranges, shared by the compiler (which validates `version` and
//! resolves requirements) and the runtime (which answers `name@range` lookups), so both sides
//! agree on every comparison. No dependency, no allocation: a [`Version`] and a [`Req`] borrow
//! the text they were parsed from.
//!
//! * Versions are [SemVer 2.0.0](https://semver.org): `MAJOR.MINOR.PATCH`, an optional
//!   `-pre.release` and `+build` metadata; no leading zeros, numbers up to `u64::MAX`.
//!   Precedence ignores build metadata ([`Version::precedence`]).
//! * Ranges ([`Req`]) follow Cargo's syntax and meaning (the `semver` crate's `VersionReq`):
//!   comma-separated comparators that must all match; `=`, `>`, `>=`, `<`, `<=`, `~`, `^`;
//!   a bare version means `^` (`1.2` = `^1.2` = `>=1.2.0, <2.0.0`); wildcards `*`, `1.*`,
//!   `1.2.*` (`x`/`X` too). A pre-release version matches only a range with a comparator that
//!   names a pre-release of the same `MAJOR.MINOR.PATCH` (`>=1.2.0-beta` matches
//!   `1.2.0-rc.1` but not `1.3.0-rc.1`).
//!
//! ```
//! use skillbake_format::semver::{Req, Version};
//! let v = Version::parse("1.4.2").unwrap();
//! assert!(Req::parse("^1.2").unwrap().matches(&v));
//! assert!(Req::parse("1").unwrap().matches(&v));
//! assert!(!Req::parse("=1.2.0").unwrap().matches(&v));
//! assert!(!Req::parse(">=1, <1.4").unwrap().matches(&v));
//! ```

use std::cmp::Ordering;
use std::fmt;

/// Most comparators one range may hold (as in Cargo).
pub const MAX_COMPARATORS: usize = 32;

/// Which part of a version or range a parse error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// The major number.
    Major,
    /// The minor number.
    Minor,
    /// The patch number.
    Patch,
    /// The pre-release identifiers after `-`.
    Pre,
    /// The build metadata after `+`.
    Build,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Major => "major version number",
            Part::Minor => "minor version number",
            Part::Patch => "patch version number",
            Part::Pre => "pre-release identifier",
            Part::Build => "build metadata",
        }
    }
}

/// Why a text is not a version or not a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The text is empty.
    Empty,
    /// The text ends where `Part` was expected.
    UnexpectedEnd(Part),
    /// A character that cannot start `Part`.
    UnexpectedChar(Part, char),
    /// A character that cannot follow `Part`.
    UnexpectedCharAfter(Part, char),
    /// Two comparators without a comma between them.
    ExpectedComma(Part, char),
    /// A number (or numeric pre-release identifier) with a leading zero.
    LeadingZero(Part),
    /// A number above `u64::MAX`.
    Overflow(Part),
    /// An empty identifier (`1.0.0-`, `1.0.0-a..b`).
    EmptySegment(Part),
    /// `*` combined with other comparators.
    WildcardNotAlone,
    /// Something after a wildcard (`1.*.3`).
    AfterWildcard,
    /// More than [`MAX_COMPARATORS`] comparators.
    TooManyComparators,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Empty => f.write_str("it is empty"),
            Error::UnexpectedEnd(p) => write!(f, "it ends where the {} should be", p.name()),
            Error::UnexpectedChar(p, c) => {
                write!(f, "unexpected character {c:?} in the {}", p.name())
            }
            Error::UnexpectedCharAfter(p, c) => {
                write!(f, "unexpected character {c:?} after the {}", p.name())
            }
            Error::ExpectedComma(p, c) => write!(
                f,
                "expected a comma between comparators after the {}, found {c:?}",
                p.name()
            ),
            Error::LeadingZero(p) => write!(f, "the {} has a leading zero", p.name()),
            Error::Overflow(p) => write!(f, "the {} is larger than {}", p.name(), u64::MAX),
            Error::EmptySegment(p) => write!(f, "an identifier of the {} is empty", p.name()),
            Error::WildcardNotAlone => {
                f.write_str("a wildcard (`*`) must be the only comparator of a range")
            }
            Error::AfterWildcard => f.write_str("unexpected character after a wildcard"),
            Error::TooManyComparators => {
                write!(f, "it has more than {MAX_COMPARATORS} comparators")
            }
        }
    }
}

impl std::error::Error for Error {}

/// A semantic version, borrowing its pre-release and build text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version<'a> {
    /// Incompatible changes.
    pub major: u64,
    /// Compatible additions.
    pub minor: u64,
    /// Compatible fixes.
    pub patch: u64,
    /// Pre-release identifiers without the `-` (empty for a release).
    pub pre: &'a str,
    /// Build metadata without the `+` (empty when absent).
    pub build: &'a str,
}

impl<'a> Version<'a> {
    /// A release version.
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Version {
            major,
            minor,
            patch,
            pre: "",
            build: "",
        }
    }

    /// Parses a SemVer 2.0.0 version exactly (no `v` prefix, no spaces, three numbers).
    pub fn parse(text: &'a str) -> Result<Self, Error> {
        if text.is_empty() {
            return Err(Error::Empty);
        }
        let (major, rest) = number(text, Part::Major)?;
        let rest = dot(rest, Part::Major)?;
        let (minor, rest) = number(rest, Part::Minor)?;
        let rest = dot(rest, Part::Minor)?;
        let (patch, rest) = number(rest, Part::Patch)?;
        let (pre, build, rest, last) = suffix(rest, Part::Patch)?;
        if let Some(c) = rest.chars().next() {
            return Err(Error::UnexpectedCharAfter(last, c));
        }
        Ok(Version {
            major,
            minor,
            patch,
            pre,
            build,
        })
    }

    /// Reads a version as written in packs that predate SemVer: an exact version, or one
    /// with a `v` prefix and/or missing numbers (`v1.2.3`, `1.2`, `1` read as `1.2.3`,
    /// `1.2.0`, `1.0.0`). `None` for anything else.
    pub fn parse_lenient(text: &'a str) -> Option<Self> {
        let text = text.strip_prefix(['v', 'V']).unwrap_or(text);
        if let Ok(v) = Version::parse(text) {
            return Some(v);
        }
        let (major, rest) = number(text, Part::Major).ok()?;
        if rest.is_empty() {
            return Some(Version::new(major, 0, 0));
        }
        let (minor, rest) = number(dot(rest, Part::Major).ok()?, Part::Minor).ok()?;
        rest.is_empty().then_some(Version::new(major, minor, 0))
    }

    /// True for a pre-release (`1.0.0-rc.1`).
    pub fn is_prerelease(&self) -> bool {
        !self.pre.is_empty()
    }

    /// SemVer precedence: numbers, then pre-release (a release is newer than its
    /// pre-releases); build metadata is ignored.
    pub fn precedence(&self, other: &Version<'_>) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| cmp_pre(self.pre, other.pre))
    }

    /// The same version without build metadata.
    pub fn without_build(self) -> Self {
        Version { build: "", ..self }
    }
}

impl fmt::Display for Version<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.build.is_empty() {
            write!(f, "+{}", self.build)?;
        }
        Ok(())
    }
}

/// Compares pre-release texts by SemVer precedence; the empty text (a release) is highest.
pub fn cmp_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    let mut right = b.split('.');
    for l in a.split('.') {
        let Some(r) = right.next() else {
            // More identifiers, all earlier ones equal: higher precedence.
            return Ordering::Greater;
        };
        let digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
        let order = match (digits(l), digits(r)) {
            // No leading zeros: a longer number is larger.
            (true, true) => l.len().cmp(&r.len()).then_with(|| l.cmp(r)),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => l.cmp(r),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    if right.next().is_some() {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// A comparison operator of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `=1.2.3`: exactly (missing numbers match anything).
    Exact,
    /// `>1.2.3`.
    Greater,
    /// `>=1.2.3`.
    GreaterEq,
    /// `<1.2.3`.
    Less,
    /// `<=1.2.3`.
    LessEq,
    /// `~1.2.3`: at least 1.2.3, same minor (`~1` = same major).
    Tilde,
    /// `^1.2.3` or `1.2.3`: at least 1.2.3, compatible by SemVer (same major; in 0.x the same
    /// minor; in 0.0.x exactly).
    Caret,
    /// `1.*`, `1.2.*`.
    Wildcard,
}

/// One comparator of a range: an operator and a possibly partial version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Comparator<'a> {
    /// The operator.
    pub op: Op,
    /// Major number.
    pub major: u64,
    /// Minor number, when given.
    pub minor: Option<u64>,
    /// Patch number, when given.
    pub patch: Option<u64>,
    /// Pre-release identifiers (only with all three numbers).
    pub pre: &'a str,
}

impl Comparator<'_> {
    fn matches_numbers(&self, v: &Version<'_>) -> bool {
        match self.op {
            Op::Exact | Op::Wildcard => self.exact(v),
            Op::Greater => self.greater(v),
            Op::GreaterEq => self.exact(v) || self.greater(v),
            Op::Less => self.less(v),
            Op::LessEq => self.exact(v) || self.less(v),
            Op::Tilde => self.tilde(v),
            Op::Caret => self.caret(v),
        }
    }

    fn exact(&self, v: &Version<'_>) -> bool {
        v.major == self.major
            && self.minor.is_none_or(|m| v.minor == m)
            && self.patch.is_none_or(|p| v.patch == p)
            && v.pre == self.pre
    }

    /// Whether `v` compares as `want` (greater or less) against the comparator's version; a
    /// missing number stops the comparison there, as equal (so neither greater nor less).
    fn beyond(&self, v: &Version<'_>, want: Ordering) -> bool {
        if v.major != self.major {
            return v.major.cmp(&self.major) == want;
        }
        let Some(minor) = self.minor else {
            return false;
        };
        if v.minor != minor {
            return v.minor.cmp(&minor) == want;
        }
        let Some(patch) = self.patch else {
            return false;
        };
        if v.patch != patch {
            return v.patch.cmp(&patch) == want;
        }
        cmp_pre(v.pre, self.pre) == want
    }

    fn greater(&self, v: &Version<'_>) -> bool {
        self.beyond(v, Ordering::Greater)
    }

    fn less(&self, v: &Version<'_>) -> bool {
        self.beyond(v, Ordering::Less)
    }

    fn tilde(&self, v: &Version<'_>) -> bool {
        if v.major != self.major || self.minor.is_some_and(|m| v.minor != m) {
            return false;
        }
        if let Some(p) = self.patch {
            if v.patch != p {
                return v.patch > p;
            }
        }
        cmp_pre(v.pre, self.pre) != Ordering::Less
    }

    fn caret(&self, v: &Version<'_>) -> bool {
        if v.major != self.major {
            return false;
        }
        let Some(minor) = self.minor else {
            return true;
        };
        let Some(patch) = self.patch else {
            return if self.major > 0 {
                v.minor >= minor
            } else {
                v.minor == minor
            };
        };
        if self.major > 0 {
            if v.minor != minor {
                return v.minor > minor;
            }
            if v.patch != patch {
                return v.patch > patch;
            }
        } else if minor > 0 {
            if v.minor != minor {
                return false;
            }
            if v.patch != patch {
                return v.patch > patch;
            }
        } else if v.minor != minor || v.patch != patch {
            return false;
        }
        cmp_pre(v.pre, self.pre) != Ordering::Less
    }

    /// Whether this comparator lets pre-releases of `v`'s numbers through.
    fn admits_pre_of(&self, v: &Version<'_>) -> bool {
        !self.pre.is_empty()
            && self.major == v.major
            && self.minor == Some(v.minor)
            && self.patch == Some(v.patch)
    }
}

impl fmt::Display for Comparator<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            Op::Exact => "=",
            Op::Greater => ">",
            Op::GreaterEq => ">=",
            Op::Less => "<",
            Op::LessEq => "<=",
            Op::Tilde => "~",
            Op::Caret => "^",
            Op::Wildcard => "",
        };
        write!(f, "{op}{}", self.major)?;
        let star = if self.op == Op::Wildcard { ".*" } else { "" };
        match (self.minor, self.patch) {
            (None, _) => f.write_str(star)?,
            (Some(m), None) => write!(f, ".{m}{star}")?,
            (Some(m), Some(p)) => write!(f, ".{m}.{p}")?,
        }
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        Ok(())
    }
}

/// A version range (Cargo's syntax), borrowing its text. Parsed once by [`Req::parse`];
/// matching walks the text again, without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Req<'a> {
    text: &'a str,
    /// `*` alone: any release.
    star: bool,
}

impl<'a> Req<'a> {
    /// Any release version (`*`).
    pub const STAR: Req<'static> = Req {
        text: "*",
        star: true,
    };

    /// Parses a range such as `^1.2`, `~1.2.3`, `=1.2.0`, `>=1, <3`, `1.*` or `*`.
    pub fn parse(text: &'a str) -> Result<Self, Error> {
        let trimmed = text.trim_start_matches(' ');
        if let Some(rest) = trimmed.strip_prefix(['*', 'x', 'X']) {
            let rest = rest.trim_start_matches(' ');
            return match rest.chars().next() {
                None => Ok(Req { text, star: true }),
                Some(',') => Err(Error::WildcardNotAlone),
                Some(_) => Err(Error::AfterWildcard),
            };
        }
        let mut rest = trimmed;
        let mut count = 0;
        loop {
            let (_, part, after) = match comparator(rest) {
                Ok(c) => c,
                Err(e) => {
                    // `1.2, *` is a wildcard that is not alone rather than a bad number.
                    let alone = rest
                        .strip_prefix(['*', 'x', 'X'])
                        .map(|r| r.trim_start_matches(' '));
                    if alone.is_some_and(|r| r.is_empty() || r.starts_with(',')) {
                        return Err(Error::WildcardNotAlone);
                    }
                    return Err(e);
                }
            };
            count += 1;
            if after.is_empty() {
                return Ok(Req { text, star: false });
            }
            let Some(next) = after.strip_prefix(',') else {
                let c = after.chars().next().unwrap_or(' ');
                return Err(Error::ExpectedComma(part, c));
            };
            if count == MAX_COMPARATORS {
                return Err(Error::TooManyComparators);
            }
            rest = next.trim_start_matches(' ');
        }
    }

    /// Whether the range is `*` alone: any release, and any version at all (a pack that
    /// declares none included).
    pub fn is_star(&self) -> bool {
        self.star
    }

    /// The text the range was parsed from.
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The comparators, in order (none for `*`).
    pub fn comparators(&self) -> impl Iterator<Item = Comparator<'a>> + 'a {
        let mut rest = if self.star {
            ""
        } else {
            self.text.trim_start_matches(' ')
        };
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let (c, _, after) = comparator(rest).ok()?;
            rest = after
                .strip_prefix(',')
                .map_or("", |r| r.trim_start_matches(' '));
            Some(c)
        })
    }

    /// Whether `v` satisfies every comparator (build metadata is ignored; a pre-release only
    /// matches when a comparator names a pre-release of the same numbers).
    pub fn matches(&self, v: &Version<'_>) -> bool {
        if !self.comparators().all(|c| c.matches_numbers(v)) {
            return false;
        }
        !v.is_prerelease() || self.comparators().any(|c| c.admits_pre_of(v))
    }
}

impl fmt::Display for Req<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.star {
            return f.write_str("*");
        }
        for (i, c) in self.comparators().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// A decimal number without a leading zero, and the rest of the text.
fn number(text: &str, part: Part) -> Result<(u64, &str), Error> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(match text.chars().next() {
            Some(c) => Error::UnexpectedChar(part, c),
            None => Error::UnexpectedEnd(part),
        });
    }
    let (num, rest) = (
        text.get(..digits).unwrap_or(""),
        text.get(digits..).unwrap_or(""),
    );
    if digits > 1 && num.starts_with('0') {
        return Err(Error::LeadingZero(part));
    }
    let value = num.parse::<u64>().map_err(|_| Error::Overflow(part))?;
    Ok((value, rest))
}

fn dot(text: &str, part: Part) -> Result<&str, Error> {
    match text.strip_prefix('.') {
        Some(rest) => Ok(rest),
        None => Err(match text.chars().next() {
            Some(c) => Error::UnexpectedCharAfter(part, c),
            None => Error::UnexpectedEnd(part),
        }),
    }
}

/// Dot-separated identifiers of `[0-9A-Za-z-]` (numeric pre-release identifiers without
/// leading zeros), and the rest of the text.
fn identifiers(text: &str, part: Part) -> Result<(&str, &str), Error> {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'-';
    let mut end = 0;
    loop {
        let tail = text.get(end..).unwrap_or("");
        let seg = tail.bytes().take_while(|&c| is_ident(c)).count();
        let ident = tail.get(..seg).unwrap_or("");
        if ident.is_empty() {
            return Err(Error::EmptySegment(part));
        }
        if part == Part::Pre
            && ident.len() > 1
            && ident.starts_with('0')
            && ident.bytes().all(|c| c.is_ascii_digit())
        {
            return Err(Error::LeadingZero(part));
        }
        end += seg;
        if text.as_bytes().get(end) == Some(&b'.') {
            end += 1;
        } else {
            return Ok((text.get(..end).unwrap_or(""), text.get(end..).unwrap_or("")));
        }
    }
}

/// The optional `-pre` and `+build` after the patch number: (pre, build, rest, last part read).
fn suffix(text: &str, mut last: Part) -> Result<(&str, &str, &str, Part), Error> {
    let (pre, text) = match text.strip_prefix('-') {
        Some(rest) => {
            last = Part::Pre;
            identifiers(rest, Part::Pre)?
        }
        None => ("", text),
    };
    let (build, text) = match text.strip_prefix('+') {
        Some(rest) => {
            last = Part::Build;
            identifiers(rest, Part::Build)?
        }
        None => ("", text),
    };
    Ok((pre, build, text, last))
}

fn is_wildcard(text: &str) -> Option<&str> {
    text.strip_prefix(['*', 'x', 'X'])
}

/// One comparator at the start of `text`: the comparator, the last part read, and the rest
/// (leading spaces skipped).
fn comparator(text: &str) -> Result<(Comparator<'_>, Part, &str), Error> {
    const OPS: [(&str, Op); 7] = [
        (">=", Op::GreaterEq),
        ("<=", Op::LessEq),
        ("=", Op::Exact),
        (">", Op::Greater),
        ("<", Op::Less),
        ("~", Op::Tilde),
        ("^", Op::Caret),
    ];
    let (mut op, rest, explicit) = OPS
        .iter()
        .find_map(|(s, op)| text.strip_prefix(s).map(|r| (*op, r, true)))
        .unwrap_or((Op::Caret, text, false));
    let rest = rest.trim_start_matches(' ');
    let mut part = Part::Major;
    let (major, mut rest) = number(rest, part)?;
    let mut starred = false;
    let mut minor = None;
    if let Some(after) = rest.strip_prefix('.') {
        part = Part::Minor;
        if let Some(after) = is_wildcard(after) {
            starred = true;
            if !explicit {
                op = Op::Wildcard;
            }
            rest = after;
        } else {
            let (m, after) = number(after, part)?;
            minor = Some(m);
            rest = after;
        }
    }
    let mut patch = None;
    if let Some(after) = rest.strip_prefix('.') {
        part = Part::Patch;
        if let Some(after) = is_wildcard(after) {
            if !explicit {
                op = Op::Wildcard;
            }
            rest = after;
        } else if starred {
            return Err(Error::AfterWildcard);
        } else {
            let (p, after) = number(after, part)?;
            patch = Some(p);
            rest = after;
        }
    }
    let mut pre = "";
    if patch.is_some() {
        let (p, _, after, last) = suffix(rest, part)?;
        pre = p;
        part = last;
        rest = after;
    }
    Ok((
        Comparator {
            op,
            major,
            minor,
            patch,
            pre,
        },
        part,
        rest.trim_start_matches(' '),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version<'_> {
        Version::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn m(req: &str, ver: &str) -> bool {
        Req::parse(req)
            .unwrap_or_else(|e| panic!("{req}: {e}"))
            .matches(&v(ver))
    }

    #[test]
    fn parses_versions_strictly() {
        assert_eq!(v("1.2.3"), Version::new(1, 2, 3));
        let pre = v("1.0.0-rc.1+build.5");
        assert_eq!((pre.pre, pre.build), ("rc.1", "build.5"));
        for bad in [
            "",
            "1",
            "1.2",
            "v1.2.3",
            "01.2.3",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3+",
            "1.2.3 ",
            " 1.2.3",
            "1.2.3-a..b",
            "1.2.3.4",
            "1.2.x",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
        assert!(
            Version::parse("1.2.3+001").is_ok(),
            "build may have leading zeros"
        );
        assert_eq!(
            Version::parse("99999999999999999999.0.0"),
            Err(Error::Overflow(Part::Major))
        );
    }

    #[test]
    fn lenient_reads_old_spellings() {
        assert_eq!(Version::parse_lenient("1"), Some(Version::new(1, 0, 0)));
        assert_eq!(Version::parse_lenient("1.10"), Some(Version::new(1, 10, 0)));
        assert_eq!(
            Version::parse_lenient("v2.0.1"),
            Some(Version::new(2, 0, 1))
        );
        assert_eq!(Version::parse_lenient("latest"), None);
        assert_eq!(Version::parse_lenient("1.2.3.4"), None);
    }

    #[test]
    fn precedence_follows_the_spec_example() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.1.0",
            "2.0.0",
        ];
        for w in order.windows(2) {
            assert_eq!(v(w[0]).precedence(&v(w[1])), Ordering::Less, "{w:?}");
        }
        assert_eq!(v("1.0.0+a").precedence(&v("1.0.0+b")), Ordering::Equal);
    }

    #[test]
    fn ranges_match_like_cargo() {
        assert!(m("1", "1.9.0") && !m("1", "2.0.0") && !m("1", "0.9.0"));
        assert!(m("^1.2", "1.2.0") && m("^1.2", "1.9.9") && !m("^1.2", "1.1.9"));
        assert!(m("^0.2.3", "0.2.9") && !m("^0.2.3", "0.3.0"));
        assert!(m("^0.0.3", "0.0.3") && !m("^0.0.3", "0.0.4"));
        assert!(m("=1.2.0", "1.2.0") && !m("=1.2.0", "1.2.1"));
        assert!(m("~1.2.3", "1.2.9") && !m("~1.2.3", "1.3.0"));
        assert!(m(">=1, <3", "2.5.0") && !m(">=1, <3", "3.0.0"));
        assert!(m("1.*", "1.7.0") && !m("1.*", "2.0.0"));
        assert!(m("*", "7.0.0") && !m("*", "7.0.0-beta"));
        assert!(m(">=1.2.0-beta", "1.2.0-rc.1") && !m(">=1.2.0-beta", "1.3.0-rc.1"));
        assert!(m("=1.2.0", "1.2.0+build"));
    }

    #[test]
    fn range_errors_say_what_is_wrong() {
        assert_eq!(Req::parse(""), Err(Error::UnexpectedEnd(Part::Major)));
        assert_eq!(
            Req::parse("^x1"),
            Err(Error::UnexpectedChar(Part::Major, 'x'))
        );
        assert_eq!(
            Req::parse("1.2 3"),
            Err(Error::ExpectedComma(Part::Minor, '3'))
        );
        assert_eq!(Req::parse("1, *"), Err(Error::WildcardNotAlone));
        assert_eq!(Req::parse("1.*.3"), Err(Error::AfterWildcard));
        let many = vec!["1"; 33].join(", ");
        assert_eq!(Req::parse(&many), Err(Error::TooManyComparators));
        assert!(Req::parse(&vec!["1"; 32].join(", ")).is_ok());
    }

    #[test]
    fn display_normalises() {
        let r = Req::parse(">=1.2,<2 ").unwrap_or(Req::STAR);
        assert_eq!(r.to_string(), ">=1.2, <2");
        assert_eq!(
            Req::parse("1.2.*").map(|r| r.to_string()),
            Ok("1.2.*".into())
        );
        assert_eq!(v("1.0.0-rc.1+b").to_string(), "1.0.0-rc.1+b");
    }
}
