#!/usr/bin/env python3
"""Read a slice of a local text file and print a unified result: {"ok", "data", "error"}.

    python3 scripts/read_file.py '{"path": "data.txt", "encoding": "gb18030"}'
    python3 scripts/read_file.py notes/todo.md
    python3 scripts/read_file.py --path logs/app.log --max-length 5000 --offset 5000
    python3 scripts/read_file.py --json '{"path": "data.txt", "encoding": "gb18030"}'

A single argument holding a JSON object is the parameters (the skill contract of
`skillbake run` and DB-GPT's execute_skill_script_file, which pass them in sys.argv[1]).

Parameters follow schema.json: path (required), max_length (1..200000, default 20000),
offset (default 0, in characters), encoding (default utf-8). Set READ_FILE_ROOT (or pass
--root) to refuse paths outside one directory. Exit code 0 when ok is true, 1 otherwise.
Standard library only.
"""

import argparse
import json
import os
import stat
import sys

ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "gb18030", "gbk", "big5", "shift_jis", "latin-1", "ascii"]
ALIASES = {"utf8": "utf-8", "utf-8-bom": "utf-8-sig", "latin1": "latin-1", "iso-8859-1": "latin-1",
           "sjis": "shift_jis", "gb2312": "gbk"}
DEFAULT_MAX_LENGTH = 20000
MAX_MAX_LENGTH = 200000
SKIP_CHUNK = 65536


class SkillError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def result(ok, data=None, code=None, message=None):
    return {"ok": ok, "data": data if ok else None,
            "error": None if ok else {"code": code, "message": message}}


def int_param(params, key, default, low, high=None):
    value = params.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int):
        raise SkillError("INVALID_PARAMS", "%s must be an integer" % key)
    if value < low or (high is not None and value > high):
        bound = ">= %d" % low if high is None else "between %d and %d" % (low, high)
        raise SkillError("INVALID_PARAMS", "%s must be %s (got %d)" % (key, bound, value))
    return value


def validate(params):
    if not isinstance(params, dict):
        raise SkillError("INVALID_PARAMS", "parameters must be a JSON object")
    unknown = sorted(set(params) - {"path", "max_length", "offset", "encoding"})
    if unknown:
        raise SkillError("INVALID_PARAMS", "unknown parameter(s): %s" % ", ".join(unknown))
    path = params.get("path")
    if path is None or (isinstance(path, str) and not path.strip()):
        raise SkillError("MISSING_PATH", "missing required parameter: path")
    if not isinstance(path, str):
        raise SkillError("INVALID_PARAMS", "path must be a string")
    encoding = str(params.get("encoding") or "utf-8").strip().lower().replace("_", "-")
    encoding = ALIASES.get(encoding, encoding)
    if encoding == "shift-jis":
        encoding = "shift_jis"
    if encoding not in ENCODINGS:
        raise SkillError("INVALID_PARAMS", "encoding must be one of: %s" % ", ".join(ENCODINGS))
    return {
        "path": path,
        "max_length": int_param(params, "max_length", DEFAULT_MAX_LENGTH, 1, MAX_MAX_LENGTH),
        "offset": int_param(params, "offset", 0, 0),
        "encoding": encoding,
    }


def check_access(path, root):
    full = os.path.abspath(os.path.expanduser(path))
    if root:
        real_root = os.path.realpath(root)
        real = os.path.realpath(full)
        if os.path.commonpath([real_root, real]) != real_root:
            raise SkillError("PERMISSION_DENIED", "path is outside the allowed directory %s" % real_root)
    try:
        info = os.stat(full)
    except FileNotFoundError:
        raise SkillError("FILE_NOT_FOUND", "file does not exist: %s" % path)
    except NotADirectoryError:
        raise SkillError("FILE_NOT_FOUND", "file does not exist (a parent is not a directory): %s" % path)
    except PermissionError:
        raise SkillError("PERMISSION_DENIED", "no permission to access: %s" % path)
    if stat.S_ISDIR(info.st_mode):
        raise SkillError("NOT_A_FILE", "path is a directory, not a file: %s" % path)
    if not stat.S_ISREG(info.st_mode):
        raise SkillError("NOT_A_FILE", "path is not a regular file (device, socket or pipe): %s" % path)
    return full, info.st_size


def decode_error(p, exc):
    others = [e for e in ("utf-8", "gb18030", "utf-16", "latin-1") if e != p["encoding"]]
    bad = exc.object[exc.start:exc.start + 4]
    return SkillError("DECODE_ERROR", "cannot decode %s as %s (invalid bytes 0x%s); try encoding %s"
                      % (p["path"], p["encoding"], bad.hex() if isinstance(bad, bytes) else "?",
                         " / ".join(others)))


def read_slice(full, p):
    with open(full, "rb") as raw:
        head = raw.read(8192)
    if b"\x00" in head and not p["encoding"].startswith("utf-16"):
        raise SkillError("DECODE_ERROR", "%s looks like a binary file (contains NUL bytes); "
                         "it cannot be read as text" % p["path"])
    with open(full, "r", encoding=p["encoding"], errors="strict", newline="") as handle:
        try:
            skipped = 0
            while skipped < p["offset"]:
                chunk = handle.read(min(SKIP_CHUNK, p["offset"] - skipped))
                if not chunk:
                    break
                skipped += len(chunk)
            content = handle.read(p["max_length"]) if skipped == p["offset"] else ""
        except UnicodeDecodeError as exc:
            raise decode_error(p, exc)
        try:
            more = bool(handle.read(1))
        except UnicodeDecodeError:
            more = True  # undecodable bytes lie after this slice; the next page will report them
    return skipped, content, more


def run(params, root):
    p = validate(params)
    full, size = check_access(p["path"], root)
    try:
        skipped, content, more = read_slice(full, p)
    except PermissionError:
        raise SkillError("PERMISSION_DENIED", "no permission to read: %s" % p["path"])
    except IsADirectoryError:
        raise SkillError("NOT_A_FILE", "path is a directory, not a file: %s" % p["path"])
    data = {
        "path": full,
        "encoding": p["encoding"],
        "size_bytes": size,
        "offset": p["offset"],
        "returned_chars": len(content),
        "truncated": more,
        "next_offset": p["offset"] + len(content) if more else None,
        "content": content,
    }
    if skipped < p["offset"]:
        data["note"] = "offset %d is past the end of the file (%d characters)" % (p["offset"], skipped)
    return result(True, data)


def contract_params(argv):
    """The parameters when the only argument is a JSON object (the skill contract), else None."""
    if len(argv) == 1 and argv[0].lstrip().startswith("{"):
        return argv[0]
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    contract = contract_params(argv)
    if contract is not None:
        argv = ["--json", contract]
    parser = argparse.ArgumentParser(description="Read a local text file (unified JSON result).")
    parser.add_argument("file", nargs="?", help="path of the file (same as --path)")
    parser.add_argument("--path")
    parser.add_argument("--max-length", dest="max_length", type=int)
    parser.add_argument("--offset", type=int)
    parser.add_argument("--encoding")
    parser.add_argument("--json", help="parameters as a JSON object (see schema.json)")
    parser.add_argument("--root", default=os.environ.get("READ_FILE_ROOT") or None,
                        help="only allow files inside this directory (default: $READ_FILE_ROOT)")
    args = parser.parse_args(argv)
    try:
        params = json.loads(args.json) if args.json else {}
        if not isinstance(params, dict):
            raise SkillError("INVALID_PARAMS", "--json must be a JSON object")
        for key in ("max_length", "offset", "encoding"):
            if getattr(args, key) is not None:
                params[key] = getattr(args, key)
        if args.path or args.file:
            params["path"] = args.path or args.file
        out = run(params, args.root)
    except SkillError as exc:
        out = result(False, code=exc.code, message=str(exc))
    except ValueError as exc:
        out = result(False, code="INVALID_PARAMS", message="--json is not valid JSON: %s" % exc)
    except OSError as exc:
        out = result(False, code="READ_ERROR", message="cannot read %s: %s" % (args.path or args.file, exc.strerror))
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
