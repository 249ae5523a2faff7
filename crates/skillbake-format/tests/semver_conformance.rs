//! `skillbake_format::semver` must accept, reject, order and match exactly as the `semver` crate
//! (Cargo's own) does: the compiler resolves requirements and the runtime answers `name@range`
//! lookups with this module, and users read ranges with Cargo's meaning. Random versions and
//! ranges are built from the pieces where parsers disagree most (leading zeros, wildcards,
//! pre-releases, spaces, commas, partial versions, huge numbers), and a table of fixed cases
//! covers each operator.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use proptest::prelude::*;
use skillbake_format::semver::{Req, Version};

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        40 => (0u64..4).prop_map(|n| n.to_string()),
        1 => Just("01".to_string()),
        1 => Just("18446744073709551615".to_string()),
        1 => Just("18446744073709551616".to_string()),
        1 => Just(String::new()),
    ]
}

fn pre() -> impl Strategy<Value = String> {
    prop_oneof![
        24 => Just(String::new()),
        1 => Just("-alpha".to_string()),
        1 => Just("-alpha.1".to_string()),
        1 => Just("-beta.2".to_string()),
        1 => Just("-beta.11".to_string()),
        1 => Just("-rc.1".to_string()),
        1 => Just("-0".to_string()),
        1 => Just("-01".to_string()),
        1 => Just("-".to_string()),
        1 => Just("-a..b".to_string()),
        1 => Just("+build.7".to_string()),
        1 => Just("-rc.1+001".to_string()),
    ]
}

fn version_text() -> impl Strategy<Value = String> {
    (
        number(),
        number(),
        number(),
        pre(),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(a, b, c, p, junk)| {
            let mut s = format!("{a}.{b}.{c}{p}");
            if junk {
                s.push(' ');
            }
            s
        })
}

fn comparator_text() -> impl Strategy<Value = String> {
    let op = prop::sample::select(vec!["", "=", ">", ">=", "<", "<=", "~", "^", "= ", ">= "]);
    let shape = prop::sample::select(vec![1, 1, 2, 2, 3, 3, 3, 4, 5, 6, 7]);
    (op, number(), number(), number(), pre(), shape).prop_map(|(op, a, b, c, p, shape)| {
        let body = match shape {
            1 => a,
            2 => format!("{a}.{b}"),
            3 => format!("{a}.{b}.{c}{p}"),
            4 => format!("{a}.*"),
            5 => format!("{a}.{b}.x"),
            6 => format!("{a}.*.{c}"),
            _ => format!("{a}.{b}{p}"),
        };
        format!("{op}{body}")
    })
}

fn req_text() -> impl Strategy<Value = String> {
    prop_oneof![
        30 => prop::collection::vec(comparator_text(), 1..4).prop_map(|c| c.join(", ")),
        1 => prop::collection::vec(comparator_text(), 2..3).prop_map(|c| c.join(" ")),
        1 => prop::collection::vec(comparator_text(), 1..3).prop_map(|c| c.join(",")),
        1 => prop::sample::select(vec!["*", "x", " * ", "*, 1", "1, *", "", " ", "1,"])
            .prop_map(str::to_string),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn versions_parse_and_order_like_the_semver_crate(a in version_text(), b in version_text()) {
        let ours = Version::parse(&a);
        let theirs = semver::Version::parse(&a);
        prop_assert_eq!(ours.is_ok(), theirs.is_ok(), "{:?}: {:?} vs {:?}", a, ours, theirs);
        if let (Ok(x), Ok(tx), Ok(y), Ok(ty)) =
            (Version::parse(&a), semver::Version::parse(&a), Version::parse(&b), semver::Version::parse(&b))
        {
            prop_assert_eq!(x.to_string(), tx.to_string());
            prop_assert_eq!(x.precedence(&y), tx.cmp_precedence(&ty), "{} vs {}", a, b);
        }
    }

    #[test]
    fn ranges_parse_and_match_like_the_semver_crate(r in req_text(), v in version_text()) {
        let ours = Req::parse(&r);
        let theirs = semver::VersionReq::parse(&r);
        prop_assert_eq!(ours.is_ok(), theirs.is_ok(), "{:?}: {:?} vs {:?}", r, ours, theirs);
        if let (Ok(req), Ok(treq), Ok(ver), Ok(tver)) =
            (ours, theirs, Version::parse(&v), semver::Version::parse(&v))
        {
            prop_assert_eq!(req.matches(&ver), treq.matches(&tver), "{:?} on {:?}", r, v);
        }
    }
}

#[test]
fn fixed_cases_agree() {
    let reqs = [
        "1",
        "1.2",
        "1.2.3",
        "^0",
        "^0.0",
        "^0.0.3",
        "^0.2",
        "^0.2.3",
        "~1",
        "~1.2",
        "~1.2.3",
        "=1",
        "=1.2",
        "=1.2.3",
        ">1",
        ">1.2",
        ">1.2.3",
        ">=1.2.3-beta",
        "<2",
        "<=1.2",
        "1.*",
        "1.2.*",
        "=1.*",
        "*",
        ">=1, <2",
        ">=1.2.3-alpha.1, <1.2.3",
        "~1.2.3-rc.1",
    ];
    let versions = [
        "0.0.3",
        "0.0.4",
        "0.2.3",
        "0.2.9",
        "0.3.0",
        "1.0.0",
        "1.1.9",
        "1.2.0",
        "1.2.3-alpha.1",
        "1.2.3-beta",
        "1.2.3-rc.1",
        "1.2.3",
        "1.2.4",
        "1.3.0-rc.1",
        "1.3.3-rc.1",
        "1.9.9",
        "2.0.0-rc.1",
        "2.0.0",
        "10.0.0",
    ];
    for r in reqs {
        let (req, treq) = (
            Req::parse(r).unwrap(),
            semver::VersionReq::parse(r).unwrap(),
        );
        for v in versions {
            let (ver, tver) = (
                Version::parse(v).unwrap(),
                semver::Version::parse(v).unwrap(),
            );
            assert_eq!(req.matches(&ver), treq.matches(&tver), "{r} on {v}");
        }
    }
}
