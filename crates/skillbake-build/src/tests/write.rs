//! `write_if_changed` and `write_pieces_if_changed`, which write the registry's files: the
//! result is always the new bytes, and a file that holds them already is not written (its
//! modification time stays, so rustc does not rebuild), whatever the lengths, wherever the first
//! difference is and however the new bytes are split into pieces.

use crate::{write_if_changed, write_pieces_if_changed};
use std::time::{Duration, SystemTime};

/// A time long past, set on the file so that any write shows in its modification time.
fn backdate(path: &std::path::Path) -> SystemTime {
    let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(past).unwrap();
    past
}

fn modified(path: &std::path::Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn the_file_ends_with_the_new_bytes_and_is_untouched_when_they_are_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    // Over two of the chunks it compares, so differences fall in the first, a middle and the
    // last one.
    let base: Vec<u8> = (0..(2 << 20) + 12_345).map(|i| (i % 251) as u8).collect();
    write_if_changed(&path, &base).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), base);

    let past = backdate(&path);
    write_if_changed(&path, &base).unwrap();
    assert_eq!(
        modified(&path),
        past,
        "a file holding the bytes already was written"
    );

    let mut cases: Vec<Vec<u8>> = Vec::new();
    for at in [0, 1 << 20, (1 << 20) + 7, base.len() - 1] {
        let mut v = base.clone();
        v[at] ^= 0xff;
        cases.push(v);
    }
    cases.push([base.as_slice(), b"longer"].concat()); // the old bytes, then more
    cases.push(base[..base.len() - 5].to_vec()); // a prefix of the old bytes
    cases.push(base[..100].to_vec()); // a prefix shorter than a chunk
    cases.push(Vec::new());
    cases.push(base[1..].to_vec()); // everything shifted by one
    for (i, case) in cases.iter().enumerate() {
        write_if_changed(&path, &base).unwrap();
        let past = backdate(&path);
        write_if_changed(&path, case).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), *case, "case {i}");
        assert_ne!(modified(&path), past, "case {i}: a change was not written");
        // The same bytes in pieces (an empty one, a short one, one across chunk boundaries).
        write_if_changed(&path, &base).unwrap();
        let past = backdate(&path);
        let (a, rest) = case.split_at(7.min(case.len()));
        let (b, c) = rest.split_at(rest.len() / 2);
        write_pieces_if_changed(&path, &[a, &[], b, c]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), *case, "case {i} in pieces");
        assert_ne!(modified(&path), past, "case {i} in pieces: not written");
    }
    // Unchanged bytes in pieces leave the file as it is.
    write_if_changed(&path, &base).unwrap();
    let past = backdate(&path);
    let (a, b) = base.split_at(1 << 19);
    write_pieces_if_changed(&path, &[a, b, &[]]).unwrap();
    assert_eq!(
        modified(&path),
        past,
        "a file holding the pieces already was written"
    );
}
