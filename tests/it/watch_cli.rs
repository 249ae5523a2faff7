//! `skillbake check --watch` through the real binary: it reports a broken edit, then the fix,
//! then only the pack that changed; a bad edit never ends it, and SIGINT ends it with exit 0.
//! Every wait is bounded, and the process is killed however the test ends.

use crate::binary::command;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// Longest wait for one expected line.
const WAIT: Duration = Duration::from_secs(30);

/// The watch process; killed when dropped.
struct Watch {
    child: Child,
    lines: Receiver<(char, String)>,
    seen: Vec<(char, String)>,
    /// Per stream, how many of its lines in `seen` earlier waits have consumed: stdout and
    /// stderr are read by two threads, so their lines reach `seen` in either order.
    consumed: [usize; 2],
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Watch {
    fn start(dir: &Path) -> Watch {
        let mut child = command(dir)
            .args(["check", "skills", "--watch", "--color", "never"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(('o', l));
            }
        });
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx2.send(('e', l));
            }
        });
        Watch {
            child,
            lines,
            seen: Vec::new(),
            consumed: [0, 0],
        }
    }

    /// The lines of stream `stream` (`o`ut or `e`rr) after those earlier waits on it returned,
    /// up to and including the first that contains `needle`; fails after [`WAIT`].
    fn until(&mut self, stream: char, needle: &str) -> Vec<String> {
        let slot = usize::from(stream == 'e');
        let deadline = Instant::now() + WAIT;
        loop {
            let mine: Vec<&String> = self
                .seen
                .iter()
                .filter(|(s, _)| *s == stream)
                .map(|(_, l)| l)
                .collect();
            let start = self.consumed[slot];
            if let Some(i) = mine.iter().skip(start).position(|l| l.contains(needle)) {
                let got: Vec<String> = mine[start..=start + i]
                    .iter()
                    .map(|l| l.to_string())
                    .collect();
                self.consumed[slot] = start + i + 1;
                return got;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(next) = self.lines.recv_timeout(left) else {
                panic!(
                    "no line with {needle:?} within {WAIT:?}; seen: {:#?}",
                    self.seen
                );
            };
            self.seen.push(next);
        }
    }
}

fn pack(root: &Path, name: &str) {
    let dir = root.join("skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Summarise the {name} reports of the finance team. \
             Use when asked about {name} numbers.\n---\n# {name}\n\nSteps.\n"
        ),
    )
    .unwrap();
}

#[test]
fn watch_reports_each_save_of_the_changed_pack_only() {
    let tmp = tempfile::tempdir().unwrap();
    pack(tmp.path(), "alpha");
    pack(tmp.path(), "beta");
    let mut w = Watch::start(tmp.path());
    let first = w.until('o', "checked 2 packs");
    assert!(
        first.iter().any(|l| l.contains("0 errors, 0 warnings")),
        "{first:?}"
    );
    w.until('e', "watching for changes");

    // A bad edit: a name with a capital letter.
    let skill = tmp.path().join("skills/alpha/SKILL.md");
    let good = std::fs::read_to_string(&skill).unwrap();
    let bad = good.replace("name: alpha", "name: Alpha");
    std::fs::write(&skill, &bad).unwrap();
    w.until('e', "re-checked alpha");
    let broken = w.until('o', "checked 1 pack");
    let text = broken.join("\n");
    assert!(text.contains("error[name-charset]"), "{text}");
    assert!(text.contains("--> alpha/SKILL.md:2:7"), "{text}");
    assert!(text.contains("1 pack: 2 errors"), "{text}");
    assert!(!text.contains("beta"), "{text}");

    // Still running: the fix is seen, and the pack is clean again.
    std::fs::write(&skill, &good).unwrap();
    w.until('e', "re-checked alpha");
    let fixed = w.until('o', "checked 1 pack");
    assert_eq!(fixed, ["checked 1 pack: 0 errors, 0 warnings"]);

    // Another pack's file: only that pack is checked again.
    std::fs::write(tmp.path().join("skills/beta/notes.md"), "# notes\n").unwrap();
    let which = w.until('e', "re-checked");
    assert_eq!(which.last().unwrap(), "skillbake: re-checked beta");
    assert_eq!(w.until('o', "checked 1 pack").len(), 1);

    // A second pack named like the first: the cross-pack rule is reported when it appears.
    let gamma = tmp.path().join("skills/gamma");
    std::fs::create_dir_all(&gamma).unwrap();
    std::fs::write(gamma.join("SKILL.md"), good.replace("Summarise", "Sum up")).unwrap();
    let which = w.until('e', "re-checked");
    assert_eq!(
        which.last().unwrap(),
        "skillbake: re-checked gamma, cross-pack rules"
    );
    let text = w.until('o', "checked").join("\n");
    assert!(text.contains("error[duplicate-name]"), "{text}");

    // Ctrl-C: a clean exit.
    let pid = w.child.id().to_string();
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    w.until('e', "stopped watching");
    let deadline = Instant::now() + WAIT;
    let code = loop {
        if let Some(s) = w.child.try_wait().unwrap() {
            break s.code();
        }
        assert!(Instant::now() < deadline, "still running after SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0));
}
