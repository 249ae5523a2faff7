#!/usr/bin/env python3
"""Profile a CSV file: column types, missing values, distributions and grouped aggregates.

Usage:
    python3 scripts/analyze_csv.py '{"path": "data.csv", "group_by": "region", "agg": ["revenue"]}'
    python3 scripts/analyze_csv.py data.csv
    python3 scripts/analyze_csv.py data.csv --format markdown
    python3 scripts/analyze_csv.py data.csv --group-by region --agg revenue --agg units

Standard library only (csv, statistics, json, argparse). Output is JSON by default
({"ok": true, ...}); on error {"ok": false, "error": {"code", "message"}} and exit code 1.

A single argument holding a JSON object is the parameters (schema.json; the skill contract of
`skillbake run` and DB-GPT's execute_skill_script_file, which pass them in sys.argv[1]); the
answer is then a unified result {"ok", "data", "error"} with the profile (or the markdown text)
under "data".
"""

import argparse
import csv
import datetime
import io
import json
import math
import os
import re
import statistics
import sys
from collections import Counter, OrderedDict

MISSING = {"", "na", "n/a", "nan", "null", "none", "-", "#n/a"}
TYPE_THRESHOLD = 0.95  # share of non-missing values that must parse for a type to win
INT_RE = re.compile(r"^[+-]?(\d+|\d{1,3}(,\d{3})+)$")
NUM_RE = re.compile(r"^[+-]?(\d+|\d{1,3}(,\d{3})+)?(\.\d+)?([eE][+-]?\d+)?$")
BOOL_VALUES = {"true": True, "false": False, "yes": True, "no": False, "y": True, "n": False,
               "t": True, "f": False}
DATE_FORMATS = ["%Y-%m-%d", "%Y/%m/%d", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
                "%Y/%m/%d %H:%M:%S", "%m/%d/%Y", "%d.%m.%Y", "%Y%m%d"]


class CliError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def is_missing(value):
    return value.strip().lower() in MISSING


def parse_number(text):
    text = text.strip()
    if not text or not NUM_RE.match(text) or not re.search(r"\d", text):
        return None
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_date(text, cache={}):  # noqa: B006 - deliberate memo
    text = text.strip()
    if text in cache:
        return cache[text]
    result = None
    if re.match(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|^\d{1,2}[/.]\d{1,2}[/.]\d{4}$|^\d{8}$", text):
        for fmt in DATE_FORMATS:
            try:
                result = datetime.datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    cache[text] = result
    return result


def clean(value, digits=6):
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = round(value, digits)
        return int(value) if value.is_integer() and abs(value) < 1e15 else value
    return value


def read_rows(path, encoding, delimiter, max_rows, warnings):
    with open(path, "rb") as handle:
        raw = handle.read()
    text = None
    for enc in [encoding] + [e for e in ("utf-8-sig", "gb18030", "latin-1") if e != encoding]:
        try:
            text = raw.decode(enc)
            if enc != encoding:
                warnings.append("file is not valid %s; decoded as %s" % (encoding, enc))
            encoding = enc
            break
        except (UnicodeDecodeError, LookupError):
            continue
    if not text or not text.strip():
        raise CliError("EMPTY_FILE", "the file is empty")
    if delimiter is None:
        if path.lower().endswith((".tsv", ".tab")):
            delimiter = "\t"
        else:
            try:
                delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|").delimiter
            except csv.Error:
                delimiter = ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if not header:
        raise CliError("EMPTY_FILE", "the file has no header row")
    names, seen = [], Counter()
    for index, name in enumerate(header):
        name = name.strip() or "column_%d" % (index + 1)
        seen[name] += 1
        names.append(name if seen[name] == 1 else "%s_%d" % (name, seen[name]))
    if len(set(h.strip() for h in header)) != len(header):
        warnings.append("header has blank or duplicate column names; renamed to keep them apart")
    rows, ragged, blank = [], 0, 0
    for row in reader:
        if not any(cell.strip() for cell in row):
            blank += 1
            continue
        if len(row) != len(names):
            ragged += 1
            row = (row + [""] * len(names))[:len(names)]
        rows.append(row)
        if max_rows and len(rows) >= max_rows:
            warnings.append("stopped after --max-rows %d rows; statistics describe that sample" % max_rows)
            break
    if ragged:
        warnings.append("%d row(s) had a different number of fields than the header (padded or cut)" % ragged)
    if blank:
        warnings.append("%d blank row(s) skipped" % blank)
    return names, rows, delimiter, encoding


def infer_type(values):
    """values: non-missing stripped strings. Returns (type, number of values that do not fit)."""
    n = len(values)
    if n == 0:
        return "empty", 0
    nums = sum(1 for v in values if parse_number(v) is not None)
    ints = sum(1 for v in values if INT_RE.match(v))
    leading_zero = any(len(v) > 1 and v[0] == "0" and v.isdigit() for v in values)
    if nums >= TYPE_THRESHOLD * n and not leading_zero:
        return ("integer" if ints == nums else "number"), n - nums
    bools = sum(1 for v in values if v.lower() in BOOL_VALUES)
    if bools >= TYPE_THRESHOLD * n:
        return "boolean", n - bools
    dates = sum(1 for v in values if parse_date(v) is not None)
    if dates >= TYPE_THRESHOLD * n:
        return "date", n - dates
    return "string", 0


def top_values(values, top):
    counts = Counter(values)
    total = len(values)
    return [{"value": v, "count": c, "pct": clean(100.0 * c / total, 2)} for v, c in counts.most_common(top)]


def numeric_stats(numbers):
    stats = OrderedDict()
    stats["min"] = clean(min(numbers))
    stats["max"] = clean(max(numbers))
    stats["sum"] = clean(math.fsum(numbers))
    stats["mean"] = clean(statistics.fmean(numbers) if hasattr(statistics, "fmean") else statistics.mean(numbers))
    stats["median"] = clean(float(statistics.median(numbers)))
    stats["stdev"] = clean(statistics.stdev(numbers)) if len(numbers) > 1 else None
    if len(numbers) > 1:
        q1, _, q3 = statistics.quantiles(numbers, n=4, method="inclusive")
        iqr = q3 - q1
        low, high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
        stats["q1"], stats["q3"] = clean(q1), clean(q3)
        stats["outliers"] = sum(1 for x in numbers if x < low or x > high)
    else:
        stats["q1"] = stats["q3"] = None
        stats["outliers"] = 0
    stats["zeros"] = sum(1 for x in numbers if x == 0)
    stats["negatives"] = sum(1 for x in numbers if x < 0)
    return stats


def profile_column(name, raw_values, top):
    total = len(raw_values)
    present = [v.strip() for v in raw_values if not is_missing(v)]
    col_type, invalid = infer_type(present)
    identifier = len(present) >= 10 and len(set(present)) == len(present)
    info = OrderedDict([("name", name), ("type", col_type), ("count", total),
                        ("missing", total - len(present)),
                        ("missing_pct", clean(100.0 * (total - len(present)) / total, 2) if total else 0.0),
                        ("unique", len(set(present)))])
    notes = []
    if col_type in ("integer", "number"):
        numbers = [x for x in (parse_number(v) for v in present) if x is not None]
        bad = [v for v in present if parse_number(v) is None]
        info.update(numeric_stats(numbers))
        if info["unique"] <= 10:
            info["top_values"] = top_values(present, top)
        if bad:
            info["invalid"] = invalid
            info["invalid_examples"] = sorted(set(bad))[:5]
            notes.append("%d non-numeric value(s) ignored" % len(bad))
    elif col_type == "date":
        parsed = [d for d in (parse_date(v) for v in present) if d is not None]
        info["min"] = min(parsed).isoformat(sep=" ").replace(" 00:00:00", "")
        info["max"] = max(parsed).isoformat(sep=" ").replace(" 00:00:00", "")
        info["span_days"] = (max(parsed) - min(parsed)).days
        if invalid:
            info["invalid"] = invalid
            info["invalid_examples"] = sorted(set(v for v in present if parse_date(v) is None))[:5]
    elif col_type in ("string", "boolean"):
        if identifier:
            info["examples"] = present[:3]
        else:
            info["top_values"] = top_values(present, top)
        if col_type == "string" and present:
            lengths = [len(v) for v in present]
            info["min_length"], info["max_length"] = min(lengths), max(lengths)
    if identifier and col_type in ("integer", "string"):
        notes.append("all values distinct: likely an identifier")
    if col_type == "string" and present and any(v[:1] == "0" and v.isdigit() and len(v) > 1 for v in present):
        notes.append("digit strings with leading zeros kept as text")
    if total and len(present) == 0:
        notes.append("column is entirely empty")
    elif col_type not in ("empty",) and info["unique"] == 1:
        notes.append("constant column")
    if notes:
        info["notes"] = notes
    return info


def group_by(names, rows, key, aggs, columns):
    index = {n: i for i, n in enumerate(names)}
    for col in [key] + aggs:
        if col not in index:
            raise CliError("UNKNOWN_COLUMN", "column %r not found; available: %s" % (col, ", ".join(names)))
    for col in aggs:
        if columns[col]["type"] not in ("integer", "number"):
            raise CliError("NOT_NUMERIC", "--agg column %r is %s, not numeric" % (col, columns[col]["type"]))
    groups = OrderedDict()
    for row in rows:
        raw = row[index[key]].strip()
        label = "(missing)" if is_missing(raw) else raw
        bucket = groups.setdefault(label, {"count": 0, "values": {c: [] for c in aggs}})
        bucket["count"] += 1
        for col in aggs:
            number = parse_number(row[index[col]]) if not is_missing(row[index[col]]) else None
            if number is not None:
                bucket["values"][col].append(number)
    result = []
    for label, bucket in groups.items():
        entry = OrderedDict([(key, label), ("count", bucket["count"])])
        for col in aggs:
            vals = bucket["values"][col]
            entry[col] = OrderedDict([
                ("n", len(vals)),
                ("sum", clean(math.fsum(vals)) if vals else None),
                ("mean", clean(math.fsum(vals) / len(vals)) if vals else None),
                ("min", clean(min(vals)) if vals else None),
                ("max", clean(max(vals)) if vals else None),
            ])
        result.append(entry)
    if aggs:
        first = aggs[0]
        result.sort(key=lambda e: (e[first]["sum"] is None, -(e[first]["sum"] or 0)))
    else:
        result.sort(key=lambda e: -e["count"])
    return result


def analyze(args):
    warnings = []
    if not os.path.isfile(args.path):
        raise CliError("FILE_NOT_FOUND", "no such file: %s" % args.path)
    names, rows, delimiter, encoding = read_rows(args.path, args.encoding, args.delimiter,
                                                 args.max_rows, warnings)
    columns = OrderedDict()
    for i, name in enumerate(names):
        columns[name] = profile_column(name, [row[i] for row in rows], args.top)
    duplicates = len(rows) - len(set(tuple(c.strip() for c in row) for row in rows))
    result = OrderedDict([
        ("ok", True),
        ("file", os.path.basename(args.path)),
        ("encoding", encoding),
        ("delimiter", delimiter),
        ("rows", len(rows)),
        ("columns", len(names)),
        ("duplicate_rows", duplicates),
        ("column_types", OrderedDict((n, c["type"]) for n, c in columns.items())),
        ("profile", list(columns.values())),
    ])
    if args.group_by:
        groups = group_by(names, rows, args.group_by, args.agg or [], columns)
        result["group_by"] = OrderedDict([("key", args.group_by), ("agg", args.agg or []),
                                          ("groups_total", len(groups)),
                                          ("groups", groups[:args.max_groups])])
        if len(groups) > args.max_groups:
            warnings.append("showing %d of %d groups (--max-groups)" % (args.max_groups, len(groups)))
    elif args.agg:
        raise CliError("BAD_ARGS", "--agg needs --group-by")
    result["warnings"] = warnings
    return result


def fmt(value):
    if value is None:
        return "—"
    if isinstance(value, float):
        return ("%.4f" % value).rstrip("0").rstrip(".")
    return str(value)


def md_cell(value):
    return fmt(value).replace("|", "\\|").replace("\n", " ")


def to_markdown(result):
    out = ["# CSV profile: %s" % result["file"], "",
           "Rows: %d · Columns: %d · Duplicate rows: %d · Delimiter: `%s` · Encoding: %s"
           % (result["rows"], result["columns"], result["duplicate_rows"],
              "\\t" if result["delimiter"] == "\t" else result["delimiter"], result["encoding"]), "",
           "## Columns", "", "| column | type | missing | missing % | unique | notes |", "|---|---|---|---|---|---|"]
    for c in result["profile"]:
        out.append("| %s | %s | %d | %s | %d | %s |" % (md_cell(c["name"]), c["type"], c["missing"],
                                                      fmt(c["missing_pct"]), c["unique"],
                                                      md_cell("; ".join(c.get("notes", [])) or "")))
    numeric = [c for c in result["profile"] if c["type"] in ("integer", "number")]
    if numeric:
        out += ["", "## Numeric columns", "",
                "| column | min | q1 | median | mean | q3 | max | stdev | sum | outliers |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for c in numeric:
            out.append("| %s | %s |" % (md_cell(c["name"]), " | ".join(
                fmt(c[k]) for k in ("min", "q1", "median", "mean", "q3", "max", "stdev", "sum", "outliers"))))
    dates = [c for c in result["profile"] if c["type"] == "date"]
    if dates:
        out += ["", "## Date columns", "", "| column | min | max | span (days) |", "|---|---|---|---|"]
        for c in dates:
            out.append("| %s | %s | %s | %d |" % (md_cell(c["name"]), c["min"], c["max"], c["span_days"]))
    cats = [c for c in result["profile"] if c["type"] in ("string", "boolean")]
    if cats:
        out += ["", "## Categorical columns", ""]
        for c in cats:
            tops = ", ".join("%s %d (%s%%)" % (md_cell(t["value"]), t["count"], fmt(t["pct"]))
                             for t in c.get("top_values", []))
            if not tops and c.get("examples"):
                tops = "all distinct, e.g. " + ", ".join(md_cell(v) for v in c["examples"])
            out.append("- **%s** (%d unique): %s" % (md_cell(c["name"]), c["unique"], tops or "—"))
    if "group_by" in result:
        g = result["group_by"]
        heading = "## Group by %s" % g["key"] + (" → %s" % ", ".join(g["agg"]) if g["agg"] else "")
        out += ["", heading, ""]
        cols = [g["key"], "count"]
        for a in g["agg"]:
            cols += ["%s sum" % a, "%s mean" % a, "%s min" % a, "%s max" % a]
        out += ["| %s |" % " | ".join(md_cell(c) for c in cols), "|%s" % ("---|" * len(cols))]
        for e in g["groups"]:
            cells = [md_cell(e[g["key"]]), str(e["count"])]
            for a in g["agg"]:
                cells += [fmt(e[a][k]) for k in ("sum", "mean", "min", "max")]
            out.append("| %s |" % " | ".join(cells))
    if result["warnings"]:
        out += ["", "## Warnings", ""] + ["- %s" % w for w in result["warnings"]]
    return "\n".join(out) + "\n"


def build_parser(exit_on_error=True):
    parser = argparse.ArgumentParser(description="Profile a CSV file (types, missing values, stats, group-by).",
                                     exit_on_error=exit_on_error)
    parser.add_argument("path", help="CSV/TSV file")
    parser.add_argument("--format", choices=["json", "markdown"], default="json")
    parser.add_argument("--delimiter", help="field delimiter (default: sniffed from the file)")
    parser.add_argument("--encoding", default="utf-8-sig", help="text encoding (default utf-8-sig)")
    parser.add_argument("--top", type=int, default=5, help="top values to list per categorical column")
    parser.add_argument("--group-by", dest="group_by", help="column to group rows by")
    parser.add_argument("--agg", action="append", help="numeric column to aggregate per group (repeatable)")
    parser.add_argument("--max-groups", dest="max_groups", type=int, default=50)
    parser.add_argument("--max-rows", dest="max_rows", type=int, default=0, help="only read the first N rows")
    parser.add_argument("--output", help="also write the result to this file")
    return parser


CONTRACT_KEYS = {"path", "format", "delimiter", "encoding", "top", "group_by", "agg", "max_groups", "max_rows"}


def contract_main(text):
    """The skill contract: the parameters (schema.json) as one JSON object; prints a unified
    result {"ok", "data", "error"}."""
    try:
        try:
            params = json.loads(text)
        except ValueError as exc:
            raise CliError("BAD_ARGS", "the parameters are not valid JSON: %s" % exc)
        if not isinstance(params, dict):
            raise CliError("BAD_ARGS", "the parameters must be a JSON object")
        unknown = sorted(set(params) - CONTRACT_KEYS)
        if unknown:
            raise CliError("BAD_ARGS", "unknown parameter(s): %s" % ", ".join(unknown))
        if not isinstance(params.get("path"), str) or not params["path"]:
            raise CliError("BAD_ARGS", "missing required parameter: path")
        argv = []
        for key in ("format", "delimiter", "encoding", "top", "group_by", "max_groups", "max_rows"):
            if params.get(key) is not None:
                argv += ["--" + key.replace("_", "-"), str(params[key])]
        agg = params.get("agg") or []
        for column in [agg] if isinstance(agg, str) else agg:
            argv += ["--agg", str(column)]
        args = build_parser(exit_on_error=False).parse_args(argv + ["--", params["path"]])
        if args.delimiter == "\\t":
            args.delimiter = "\t"
        result = analyze(args)
        data = to_markdown(result) if args.format == "markdown" else \
            {k: v for k, v in result.items() if k != "ok"}
        out = {"ok": True, "data": data, "error": None}
    except argparse.ArgumentError as exc:
        out = {"ok": False, "data": None, "error": {"code": "BAD_ARGS", "message": str(exc)}}
    except CliError as exc:
        out = {"ok": False, "data": None, "error": {"code": exc.code, "message": str(exc)}}
    except (OSError, csv.Error) as exc:
        out = {"ok": False, "data": None, "error": {"code": "READ_ERROR", "message": str(exc)}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0 if out["ok"] else 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 1 and argv[0].lstrip().startswith("{"):
        return contract_main(argv[0])
    args = build_parser().parse_args(argv)
    if args.delimiter == "\\t":
        args.delimiter = "\t"
    try:
        result = analyze(args)
        text = to_markdown(result) if args.format == "markdown" else \
            json.dumps(result, ensure_ascii=False, indent=2) + "\n"
        code = 0
    except CliError as exc:
        result = {"ok": False, "error": {"code": exc.code, "message": str(exc)}}
        text = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
        code = 1
    except (OSError, csv.Error) as exc:
        result = {"ok": False, "error": {"code": "READ_ERROR", "message": str(exc)}}
        text = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
        code = 1
    if args.output and code == 0:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    sys.stdout.write(text)
    return code


if __name__ == "__main__":
    sys.exit(main())
