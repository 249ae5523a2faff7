//! The plan of a run's view of the file system ([`plan`]), made in the parent from a [`Spec`]:
//! which trees to bind where, which folders to make private, which of the host's symbolic links
//! to recreate. The child carries it out ([`crate::pre_exec::MountView`]) with no decision
//! left.
//!
//! Without a grant to read or write anywhere the view's root is empty: everything the run may
//! reach is bound in, so nothing else of the host exists for it. With one, the root is the
//! host's tree, and only the private folders and the writable trees need mounts of their own.

use crate::pre_exec::{MountView, Root, Step, StepKind, MAX_BINDS, STAGE};
use crate::resolve::Resolver;
use crate::{Error, Spec};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The most a private temporary folder holds (each one; bounded further by the file-size
/// limit).
const TMP_SIZE: u64 = 256 << 20;

/// The most links followed from one granted path to the tree it names.
const MAX_HOPS: usize = 40;

/// A host symbolic link to recreate: where it is, and what it holds.
type Link = (PathBuf, PathBuf);

/// A granted tree: its resolved place, and whether it is writable.
#[derive(Debug)]
struct Tree {
    real: PathBuf,
    dir: bool,
    writable: bool,
}

fn c(p: &Path) -> Result<CString, Error> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Error::Path {
        path: p.to_path_buf(),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })
}

/// The view of `spec` for a run that may execute `executables` and starts in `cwd` (the
/// parent's working folder when `None`).
/// The granted paths are taken as `paths` resolved them.
pub(crate) fn plan(
    spec: &Spec,
    paths: &mut Resolver,
    executables: &[PathBuf],
    cwd: Option<&Path>,
) -> Result<MountView, Error> {
    let (trees, links) = granted(spec, paths, executables)?;
    // Reading or writing anywhere (or the whole tree granted): the host's tree.
    let whole = trees.iter().find(|t| t.real == Path::new("/"));
    let root = if spec.read_anywhere || spec.write_anywhere || whole.is_some() {
        Root::Host {
            writable: spec.write_anywhere || whole.is_some_and(|t| t.writable),
        }
    } else {
        Root::Empty
    };
    let private = private_folders(spec, paths, root == Root::Empty);
    let kept = needed(&trees, &private, root);
    if kept.len() > MAX_BINDS {
        return Err(Error::Path {
            path: PathBuf::from("/"),
            source: std::io::Error::other(format!(
                "more than {MAX_BINDS} separate trees to show the run"
            )),
        });
    }
    let kept_paths: Vec<&Path> = kept.iter().map(|k| k.real.as_path()).collect();
    let private_paths: Vec<&Path> = private.iter().map(PathBuf::as_path).collect();
    let under = |p: &Path, dirs: &[&Path]| dirs.iter().any(|d| p.starts_with(d));
    let b = Builder { root };
    let mut steps: Vec<(PathBuf, u8, Step)> = Vec::new();
    for d in &private {
        steps.push(b.step(d, 0, StepKind::Private)?);
    }
    for t in &kept {
        let kind = StepKind::Bind {
            source: c(&t.real)?,
            dir: t.dir,
            writable: t.writable,
        };
        steps.push(b.step(&t.real, 1, kind)?);
    }
    // A link where no bound tree holds its place: in an empty root, or in a private folder.
    for (l, target) in &links {
        let missing = root == Root::Empty || under(l, &private_paths);
        if missing && !under(l, &kept_paths) {
            steps.push(b.step(l, 2, StepKind::Symlink { target: c(target)? })?);
        }
    }
    // Without a working folder of its own, the child starts in the parent's; it exists in the
    // view, empty unless a granted tree holds it.
    let cwd = match cwd {
        Some(d) => std::path::absolute(d).ok(),
        None => std::env::current_dir().ok(),
    };
    let cwd = match cwd {
        Some(d) => Some(paths.real(&d)?.path.clone()),
        None => None,
    };
    if let Some(d) = cwd
        .as_deref()
        .filter(|d| root == Root::Empty && *d != Path::new("/") && !under(d, &kept_paths))
    {
        steps.push(b.step(d, 3, StepKind::Folder)?);
    }
    // Parents before children; at one place, the private folder first.
    steps.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let size = spec.limits.file_size.unwrap_or(TMP_SIZE).min(TMP_SIZE);
    Ok(MountView {
        root,
        steps: steps.into_iter().map(|(_, _, s)| s).collect(),
        tmpfs_options: c(Path::new(&format!("mode=1777,size={size},nr_inodes=16384")))?,
        cwd: cwd.as_deref().map(c).transpose()?,
    })
}

/// Every granted tree, resolved (a path granted both read-only and writable is writable),
/// sorted, and the host's symbolic links on the way to them (`/bin` to `usr/bin`,
/// `/etc/localtime`, a virtual environment's `bin/python`), hop by hop.
fn granted(
    spec: &Spec,
    resolved: &mut Resolver,
    executables: &[PathBuf],
) -> Result<(Vec<Tree>, Vec<Link>), Error> {
    let devices = crate::spec::system_devices();
    let mut paths: Vec<(&PathBuf, bool)> = Vec::new();
    for p in &spec.read_write {
        // Device files stay usable on a read-only mount.
        paths.push((p, !devices.contains(p)));
    }
    for p in spec.read_only.iter().chain(executables).chain(&devices) {
        paths.push((p, false));
    }
    let mut trees: Vec<Tree> = Vec::new();
    let mut links: Vec<Link> = Vec::new();
    for (p, writable) in paths {
        let found = resolved.real(p)?;
        let real = found.path.clone();
        let dir = found.is_dir();
        match trees.iter_mut().find(|t| t.real == real) {
            Some(t) => t.writable |= writable,
            None => trees.push(Tree {
                real: real.clone(),
                dir,
                writable,
            }),
        }
        let mut at = std::path::absolute(p).unwrap_or_else(|_| p.clone());
        for _ in 0..MAX_HOPS {
            if at == real {
                break;
            }
            let (Some(parent), Some(target)) = (at.parent(), resolved.link(&at)) else {
                break;
            };
            // Only a link whose folder is a real one can be recreated at its place.
            if resolved.canonical(parent).as_deref() != Some(parent) {
                break;
            }
            let next = parent.join(&target);
            if !links.iter().any(|(l, _)| *l == at) {
                links.push((at.clone(), target));
            }
            at = next;
        }
    }
    trees.sort_by(|a, b| a.real.cmp(&b.real));
    Ok((trees, links))
}

/// The folders a view replaces by private ones, resolved: [`Spec::private`], and for an empty
/// root `/tmp` and `/dev/shm` (where they exist).
fn private_folders(spec: &Spec, paths: &mut Resolver, empty_root: bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let system = [PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
    let system = if empty_root { &system[..] } else { &[] };
    for p in system.iter().chain(&spec.private) {
        if let Some(real) = paths.canonical(p) {
            if paths.folder(&real).is_some_and(std::fs::Metadata::is_dir)
                && real != Path::new("/")
                && !out.contains(&real)
            {
                out.push(real);
            }
        }
    }
    out
}

/// The trees (sorted) that need a mount of their own: every one in an empty root, but one
/// inside a bound tree of the same writability; in the host's tree, those in a private folder
/// and the writable ones of a read-only tree.
fn needed<'t>(trees: &'t [Tree], private: &[PathBuf], root: Root) -> Vec<&'t Tree> {
    let mut kept: Vec<&Tree> = Vec::new();
    for t in trees {
        let covering = kept
            .iter()
            .filter(|k| t.real.starts_with(&k.real))
            .max_by_key(|k| k.real.components().count());
        // A private folder between the tree and what holds it hides the tree.
        let hidden = private
            .iter()
            .any(|d| t.real.starts_with(d) && covering.is_none_or(|k| !k.real.starts_with(d)));
        let need = match (covering, root) {
            (Some(k), _) => hidden || k.writable != t.writable,
            (None, Root::Empty) => true,
            (None, Root::Host { writable }) => hidden || (t.writable && !writable),
        };
        if need {
            kept.push(t);
        }
    }
    kept
}

/// Makes the [`Step`]s of one view.
struct Builder {
    root: Root,
}

impl Builder {
    /// Where `p` is while the view is built: under the stage for an empty root.
    fn at(&self, p: &Path) -> PathBuf {
        match self.root {
            Root::Empty => {
                let stage = Path::new(OsStr::from_bytes(STAGE.to_bytes()));
                stage.join(p.strip_prefix("/").unwrap_or(p))
            }
            Root::Host { .. } => p.to_path_buf(),
        }
    }

    /// The step making `kind` at `p`, with the folders on its way, keyed for sorting.
    fn step(&self, p: &Path, order: u8, kind: StepKind) -> Result<(PathBuf, u8, Step), Error> {
        let mut parents: Vec<&Path> = p
            .ancestors()
            .skip(1)
            .filter(|a| a.parent().is_some())
            .collect();
        parents.reverse();
        let step = Step {
            path: c(p)?,
            at: c(&self.at(p))?,
            parents: parents
                .into_iter()
                .map(|a| c(&self.at(a)))
                .collect::<Result<_, _>>()?,
            kind,
        };
        Ok((p.to_path_buf(), order, step))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// The steps of a view in words: `<kind> <path>` (and where it is made).
    fn describe(v: &MountView) -> Vec<String> {
        let s = |c: &CString| c.to_string_lossy().into_owned();
        v.steps
            .iter()
            .map(|st| {
                let what = match &st.kind {
                    StepKind::Private => "private".to_string(),
                    StepKind::Bind { writable, .. } => {
                        if *writable { "bind-rw" } else { "bind-ro" }.to_string()
                    }
                    StepKind::Symlink { target } => format!("link->{}", s(target)),
                    StepKind::Folder => "folder".to_string(),
                };
                format!("{what} {} at {}", s(&st.path), s(&st.at))
            })
            .collect()
    }

    #[test]
    fn an_empty_root_holds_the_granted_trees_their_links_and_private_folders() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let (ro, rw, real) = (base.join("ro"), base.join("ro/out"), base.join("real"));
        std::fs::create_dir_all(&rw).unwrap();
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("python3.12"), "").unwrap();
        // bin/python -> python3 -> ../real/python3.12, as in a virtual environment.
        std::fs::create_dir(base.join("bin")).unwrap();
        symlink("python3", base.join("bin/python")).unwrap();
        symlink("../real/python3.12", base.join("bin/python3")).unwrap();
        let spec = Spec::new().read_only(&ro).read_write(&rw);
        let v = plan(
            &spec,
            &mut Resolver::new(),
            &[base.join("bin/python")],
            Some(&rw),
        )
        .unwrap();
        assert_eq!(v.root, Root::Empty);
        let b = base.display();
        let stage = "/tmp";
        let mut want = Vec::new();
        let steps = describe(&v);
        for needle in [
            format!("bind-ro {b}/ro at {stage}{b}/ro"),
            format!("bind-rw {b}/ro/out at {stage}{b}/ro/out"),
            format!("bind-ro {b}/real/python3.12 at {stage}{b}/real/python3.12"),
            format!("link->python3 {b}/bin/python at {stage}{b}/bin/python"),
            format!("link->../real/python3.12 {b}/bin/python3 at {stage}{b}/bin/python3"),
            "private /tmp at /tmp/tmp".to_string(),
        ] {
            want.push(needle.clone());
            assert!(steps.contains(&needle), "{needle} not in {steps:#?}");
        }
        // Parents come before what is in them.
        let pos = |n: &str| steps.iter().position(|s| s.contains(n)).unwrap();
        assert!(pos(&format!(" {b}/ro at")) < pos(&format!(" {b}/ro/out at")));
        // The system devices are bound; nothing else is.
        let others: Vec<&String> = steps
            .iter()
            .filter(|s| !want.contains(s) && !s.contains(" /dev/"))
            .collect();
        assert!(others.is_empty(), "{others:#?}");
        assert_eq!(v.cwd.as_deref(), Some(c(&rw).unwrap().as_c_str()));
    }

    #[test]
    fn the_hosts_tree_gets_mounts_only_for_private_folders_and_what_they_hide() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let runs = base.join("runs");
        let (mine, outside) = (runs.join("mine"), base.join("outside"));
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let mut spec = Spec::new()
            .read_only(&outside)
            .read_write(&mine)
            .private(&runs);
        spec.read_anywhere = true;
        let v = plan(&spec, &mut Resolver::new(), &[], Some(&mine)).unwrap();
        assert_eq!(v.root, Root::Host { writable: false });
        let b = base.display();
        assert_eq!(
            describe(&v),
            [
                format!("private {b}/runs at {b}/runs"),
                format!("bind-rw {b}/runs/mine at {b}/runs/mine"),
            ]
        );
        spec.write_anywhere = true;
        let v = plan(&spec, &mut Resolver::new(), &[], Some(&mine)).unwrap();
        assert_eq!(v.root, Root::Host { writable: true });
        assert_eq!(v.steps.len(), 2);
    }
}
