//! Which interpreter runs a pack's script: one table, read by the build-time rule
//! (`unknown-interpreter`) and by the executor.
//!
//! The shebang wins when it names a known interpreter (`#!/usr/bin/env python3`,
//! `#!/bin/bash -e`, `#!/usr/bin/env -S node --no-warnings`); its arguments are kept and passed
//! before the script. Otherwise the extension decides: `.py` → `python3`, `.sh` and `.bash` →
//! `bash`, `.js`, `.mjs` and `.cjs` → `node`. Every Python (`python`, `python3`, `python3.12`) runs
//! as `python3`; `sh` and `dash` as `sh`; `nodejs` as `node`.

/// An interpreter skillbake knows how to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Interpreter {
    /// `python3`.
    Python,
    /// `bash`.
    Bash,
    /// `sh`.
    Sh,
    /// `node`.
    Node,
}

impl Interpreter {
    /// Every interpreter, in documentation order.
    pub const ALL: [Interpreter; 4] = [
        Interpreter::Python,
        Interpreter::Bash,
        Interpreter::Sh,
        Interpreter::Node,
    ];

    /// The program looked up on `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Interpreter::Python => "python3",
            Interpreter::Bash => "bash",
            Interpreter::Sh => "sh",
            Interpreter::Node => "node",
        }
    }

    /// The extensions (without the dot, lower case) that select this interpreter.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Interpreter::Python => &["py"],
            Interpreter::Bash => &["sh", "bash"],
            Interpreter::Sh => &[],
            Interpreter::Node => &["js", "mjs", "cjs"],
        }
    }

    /// The interpreter a program name stands for (`python3.12`, `/usr/bin/bash` → its last
    /// component), if known.
    pub fn from_program(program: &str) -> Option<Interpreter> {
        let base = program.rsplit('/').next().unwrap_or(program);
        match base {
            "python" | "python3" => Some(Interpreter::Python),
            b if b
                .strip_prefix("python3.")
                .is_some_and(|v| !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit())) =>
            {
                Some(Interpreter::Python)
            }
            "bash" => Some(Interpreter::Bash),
            "sh" | "dash" => Some(Interpreter::Sh),
            "node" | "nodejs" => Some(Interpreter::Node),
            _ => None,
        }
    }

    /// The interpreter an extension selects.
    pub fn from_extension(ext: &str) -> Option<Interpreter> {
        let ext = ext.to_ascii_lowercase();
        Interpreter::ALL
            .into_iter()
            .find(|i| i.extensions().contains(&ext.as_str()))
    }
}

/// How a script is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch<'a> {
    /// The interpreter.
    pub interpreter: Interpreter,
    /// Arguments from the shebang, passed before the script's path.
    pub args: Vec<&'a str>,
    /// Whether the shebang (true) or the extension (false) decided.
    pub from_shebang: bool,
}

/// Why no interpreter was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unknown<'a> {
    /// The shebang names a program that is not a known interpreter, and the extension does not
    /// help either.
    Shebang(&'a str),
    /// No shebang, and the extension is not a known one (`None`: no extension at all).
    Extension(Option<&'a str>),
}

/// The shebang line's program and arguments: `#!/usr/bin/env -S python3 -u` → `("python3",
/// ["-u"])`. `None` without a `#!` first line.
pub fn shebang(bytes: &[u8]) -> Option<(&str, Vec<&str>)> {
    let rest = bytes.strip_prefix(b"#!")?;
    let line = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let mut program = words.next()?;
    if program.rsplit('/').next() == Some("env") {
        // `env [-S] [-i] [NAME=VALUE]... PROGRAM [ARGS]...`
        program = loop {
            let w = words.next()?;
            if w.starts_with('-') || w.contains('=') {
                continue;
            }
            break w;
        };
    }
    Some((program, words.collect()))
}

/// The interpreter of the script at `path` (relative to its pack) with content `bytes`.
pub fn detect<'a>(path: &'a str, bytes: &'a [u8]) -> Result<Launch<'a>, Unknown<'a>> {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let ext = match file_name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => Some(ext),
        _ => None,
    };
    let from_ext = ext.and_then(Interpreter::from_extension);
    match shebang(bytes) {
        Some((program, args)) => match Interpreter::from_program(program) {
            Some(interpreter) => Ok(Launch {
                interpreter,
                args,
                from_shebang: true,
            }),
            None => from_ext
                .map(|interpreter| Launch {
                    interpreter,
                    args: Vec::new(),
                    from_shebang: false,
                })
                .ok_or(Unknown::Shebang(program)),
        },
        None => from_ext
            .map(|interpreter| Launch {
                interpreter,
                args: Vec::new(),
                from_shebang: false,
            })
            .ok_or(Unknown::Extension(ext)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(path: &str, text: &str) -> Result<(Interpreter, Vec<String>), String> {
        detect(path, text.as_bytes())
            .map(|l| {
                (
                    l.interpreter,
                    l.args.iter().map(|s| s.to_string()).collect(),
                )
            })
            .map_err(|e| format!("{e:?}"))
    }

    #[test]
    fn shebang_wins_and_keeps_its_arguments() {
        assert_eq!(
            of("scripts/run", "#!/usr/bin/env python3\nprint(1)\n"),
            Ok((Interpreter::Python, vec![]))
        );
        assert_eq!(
            of("scripts/run.py", "#!/bin/bash -e\r\necho hi\n"),
            Ok((Interpreter::Bash, vec!["-e".into()]))
        );
        assert_eq!(
            of("x.js", "#!/usr/bin/env -S NODE_ENV=x node --no-warnings\n"),
            Ok((Interpreter::Node, vec!["--no-warnings".into()]))
        );
        assert_eq!(
            of("x", "#!/opt/py/bin/python3.12 -u"),
            Ok((Interpreter::Python, vec!["-u".into()]))
        );
        assert_eq!(of("x", "#!/bin/dash\n"), Ok((Interpreter::Sh, vec![])));
    }

    #[test]
    fn extension_decides_without_a_known_shebang() {
        assert_eq!(of("a.PY", "print(1)"), Ok((Interpreter::Python, vec![])));
        assert_eq!(of("a.sh", "echo"), Ok((Interpreter::Bash, vec![])));
        assert_eq!(of("a.mjs", ""), Ok((Interpreter::Node, vec![])));
        assert_eq!(
            of("a.py", "#!/usr/bin/env -S uv run --script\n"),
            Ok((Interpreter::Python, vec![]))
        );
    }

    #[test]
    fn unknown_interpreters_say_why() {
        assert_eq!(
            detect("a.rb", b"#!/usr/bin/env ruby\n"),
            Err(Unknown::Shebang("ruby"))
        );
        assert_eq!(
            detect("a.rb", b"puts 1"),
            Err(Unknown::Extension(Some("rb")))
        );
        assert_eq!(detect("run", b"echo"), Err(Unknown::Extension(None)));
        assert_eq!(detect(".py", b""), Err(Unknown::Extension(None)));
        assert_eq!(detect("a.py.", b""), Err(Unknown::Extension(None)));
        assert_eq!(detect("a", b"#!"), Err(Unknown::Extension(None)));
        assert_eq!(
            detect("a", b"#!/usr/bin/env\n"),
            Err(Unknown::Extension(None))
        );
        assert_eq!(Interpreter::from_program("python3."), None);
        assert_eq!(Interpreter::from_program("python2"), None);
    }
}
