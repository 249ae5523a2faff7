#!/usr/bin/env python3
"""Inspect an .xlsx/.xlsm workbook without third-party packages.

    python3 scripts/inspect_xlsx.py book.xlsx [--rows 5] [--cols 12] [--sheet NAME]
    python3 scripts/inspect_xlsx.py '{"path": "book.xlsx", "rows": 5, "cols": 12, "sheet": "Data"}'

Prints JSON: sheets (name, state, used range), per-sheet counts of values, formulas,
formulas WITHOUT a cached value (never calculated, e.g. written by openpyxl), merged ranges,
data validations, plus a preview of the first rows with shared strings resolved and
date-formatted numbers shown as ISO dates; uncalculated formulas appear as their formula
text. Standard library only (zipfile + ElementTree).

A single argument holding a JSON object is the parameters (schema.json; the skill contract of
`skillbake run` and DB-GPT's execute_skill_script_file, which pass them in sys.argv[1]); the
answer is then a unified result {"ok", "data", "error"}.
"""

import argparse
import datetime
import json
import os
import posixpath
import re
import sys
import zipfile
import xml.etree.ElementTree as ET

BUILTIN_DATE_FORMATS = set(range(14, 23)) | {45, 46, 47}
CELL_RE = re.compile(r"^([A-Z]+)(\d+)$")


def local(tag):
    return tag.rsplit("}", 1)[-1]


def children(node, name):
    return [c for c in node if local(c.tag) == name]


def find(node, name):
    for c in node.iter():
        if local(c.tag) == name:
            return c
    return None


def attr(node, name):
    for key, value in node.attrib.items():
        if local(key) == name:
            return value
    return None


def col_index(letters):
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def is_date_format(code):
    code = re.sub(r'"[^"]*"|\[[^\]]*\]|\\.', "", code or "").lower()
    return bool(re.search(r"[dmyhs]", code)) and "general" not in code


def serial_to_iso(value, date1904):
    base = datetime.datetime(1904, 1, 1) if date1904 else datetime.datetime(1899, 12, 30)
    moment = base + datetime.timedelta(days=value)
    if moment.time() == datetime.time(0, 0):
        return moment.date().isoformat()
    return moment.replace(microsecond=0).isoformat(sep=" ")


def load_xml(zf, path):
    try:
        return ET.fromstring(zf.read(path))
    except KeyError:
        return None


def shared_strings(zf):
    root = load_xml(zf, "xl/sharedStrings.xml")
    if root is None:
        return []
    return ["".join(t.text or "" for t in si.iter() if local(t.tag) == "t") for si in children(root, "si")]


def date_styles(zf):
    root = load_xml(zf, "xl/styles.xml")
    if root is None:
        return set()
    custom = {}
    numfmts = find(root, "numFmts")
    if numfmts is not None:
        for nf in children(numfmts, "numFmt"):
            custom[int(nf.get("numFmtId"))] = nf.get("formatCode", "")
    xfs = find(root, "cellXfs")
    dates = set()
    if xfs is not None:
        for index, xf in enumerate(children(xfs, "xf")):
            fmt_id = int(xf.get("numFmtId", "0"))
            if fmt_id in BUILTIN_DATE_FORMATS or (fmt_id in custom and is_date_format(custom[fmt_id])):
                dates.add(index)
    return dates


def sheet_paths(zf):
    wb = load_xml(zf, "xl/workbook.xml")
    rels = load_xml(zf, "xl/_rels/workbook.xml.rels")
    targets = {}
    for rel in (rels if rels is not None else []):
        target = rel.get("Target", "")
        targets[rel.get("Id")] = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
            posixpath.join("xl", target))
    pr = find(wb, "workbookPr")
    date1904 = pr is not None and pr.get("date1904") in ("1", "true")
    calc = find(wb, "calcPr")
    sheets = []
    for sh in find(wb, "sheets"):
        sheets.append({"name": sh.get("name"), "state": sh.get("state", "visible"),
                       "path": targets.get(attr(sh, "id"))})
    names = []
    dn = find(wb, "definedNames")
    if dn is not None:
        names = [{"name": d.get("name"), "refers_to": d.text} for d in children(dn, "definedName")
                 if not d.get("name", "").startswith("_xlnm._FilterDatabase")]
    calc_info = {"full_calc_on_load": calc is not None and calc.get("fullCalcOnLoad") in ("1", "true")}
    return sheets, date1904, names, calc_info


def cell_value(c, strings, dates, date1904):
    kind = c.get("t", "n")
    v = next((x for x in c if local(x.tag) == "v"), None)
    if kind == "inlineStr":
        return "".join(t.text or "" for t in c.iter() if local(t.tag) == "t")
    if v is None or v.text is None:
        return None
    text = v.text
    if kind == "s":
        return strings[int(text)] if int(text) < len(strings) else text
    if kind == "b":
        return text == "1"
    if kind in ("str", "e"):
        return text
    try:
        number = float(text)
    except ValueError:
        return text
    if c.get("s") is not None and int(c.get("s")) in dates:
        try:
            return serial_to_iso(number, date1904)
        except OverflowError:
            return number
    return int(number) if number.is_integer() else number


def inspect_sheet(zf, sheet, strings, dates, date1904, rows, cols):
    info = {"name": sheet["name"], "state": sheet["state"], "dimension": None, "cells_with_values": 0,
            "formulas": 0, "formulas_without_cached_value": 0, "formula_examples": [],
            "merged_ranges": [], "data_validations": 0, "max_row": 0, "max_col": 0, "preview": []}
    if not sheet["path"] or sheet["path"] not in zf.namelist():
        info["note"] = "sheet part not found (chart sheet or unsupported)"
        return info
    preview = {}
    with zf.open(sheet["path"]) as handle:
        for _, elem in ET.iterparse(handle, events=("end",)):
            name = local(elem.tag)
            if name == "c":
                ref = CELL_RE.match(elem.get("r", ""))
                f = next((x for x in elem if local(x.tag) == "f"), None)
                v = next((x for x in elem if local(x.tag) in ("v", "is")), None)
                if f is not None:
                    info["formulas"] += 1
                    if v is None or (local(v.tag) == "v" and v.text is None):
                        info["formulas_without_cached_value"] += 1
                    if len(info["formula_examples"]) < 5 and f.text:
                        info["formula_examples"].append({"cell": elem.get("r"), "formula": "=" + f.text})
                value = cell_value(elem, strings, dates, date1904)
                if value is not None:
                    info["cells_with_values"] += 1
                elif f is not None and f.text:
                    value = "=" + f.text  # uncalculated formula: show its text in the preview
                if ref:
                    r, c = int(ref.group(2)), col_index(ref.group(1))
                    if value is not None or f is not None:
                        info["max_row"], info["max_col"] = max(info["max_row"], r), max(info["max_col"], c)
                    if r <= rows and c <= cols and value is not None:
                        preview.setdefault(r, {})[c] = value
                elem.clear()
            elif name == "dimension":
                info["dimension"] = elem.get("ref")
            elif name == "mergeCell":
                info["merged_ranges"].append(elem.get("ref"))
            elif name == "dataValidation":
                info["data_validations"] += 1
            elif name == "row":
                elem.clear()
    width = min(cols, info["max_col"])
    for r in range(1, min(rows, info["max_row"]) + 1):
        row = [preview.get(r, {}).get(c) for c in range(1, width + 1)]
        while row and row[-1] is None:
            row.pop()
        info["preview"].append(row)
    if len(info["merged_ranges"]) > 20:
        info["merged_ranges_total"] = len(info["merged_ranges"])
        info["merged_ranges"] = info["merged_ranges"][:20]
    return info


def inspect(path, rows, cols, only):
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    if path.lower().endswith(".xls"):
        raise ValueError("legacy .xls (BIFF) is not a zip package; convert it or read it with xlrd")
    with zipfile.ZipFile(path) as zf:
        if "xl/workbook.xml" not in zf.namelist():
            raise ValueError("not an Excel workbook (xl/workbook.xml missing); .xlsb is not supported")
        strings, dates = shared_strings(zf), date_styles(zf)
        sheets, date1904, names, calc = sheet_paths(zf)
        if only and only not in [s["name"] for s in sheets]:
            raise ValueError("no sheet named %r; sheets: %s" % (only, ", ".join(s["name"] for s in sheets)))
        result = {
            "ok": True,
            "file": path,
            "has_macros": "xl/vbaProject.bin" in zf.namelist(),
            "date1904": date1904,
            "calc": calc,
            "defined_names": names,
            "sheet_names": [s["name"] for s in sheets],
            "sheets": [inspect_sheet(zf, s, strings, dates, date1904, rows, cols)
                       for s in sheets if not only or s["name"] == only],
        }
    uncached = sum(s["formulas_without_cached_value"] for s in result["sheets"])
    if uncached:
        result["warning"] = ("%d formula cell(s) have no cached value: readers using cached values "
                             "(openpyxl data_only=True, pandas) will see empty cells until the workbook is "
                             "recalculated in Excel or LibreOffice" % uncached)
    return result


def checked(path, rows, cols, sheet):
    """inspect() with its failures as results."""
    try:
        return inspect(path, rows, cols, sheet)
    except FileNotFoundError:
        return {"ok": False, "error": {"code": "FILE_NOT_FOUND", "message": "no such file: %s" % path}}
    except zipfile.BadZipFile:
        return {"ok": False, "error": {"code": "NOT_XLSX", "message": "%s is not an xlsx/xlsm (zip) file" % path}}
    except IsADirectoryError:
        return {"ok": False, "error": {"code": "FILE_NOT_FOUND", "message": "%s is a folder, not a file" % path}}
    except (ValueError, ET.ParseError) as exc:
        return {"ok": False, "error": {"code": "NOT_XLSX", "message": str(exc)}}


def contract_result(text):
    """The parameters of the skill contract (schema.json) checked, then inspect()'s result."""
    def fail(message):
        return {"ok": False, "error": {"code": "INVALID_PARAMS", "message": message}}

    try:
        params = json.loads(text)
    except ValueError as exc:
        return fail("the parameters are not valid JSON: %s" % exc)
    if not isinstance(params, dict):
        return fail("the parameters must be a JSON object")
    unknown = sorted(set(params) - {"path", "rows", "cols", "sheet"})
    if unknown:
        return fail("unknown parameter(s): %s" % ", ".join(unknown))
    if not isinstance(params.get("path"), str) or not params["path"]:
        return fail("missing required parameter: path")
    rows, cols = params.get("rows", 5), params.get("cols", 12)
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in (rows, cols)):
        return fail("rows and cols must be integers >= 0")
    sheet = params.get("sheet")
    if sheet is not None and not isinstance(sheet, str):
        return fail("sheet must be a string")
    return checked(params["path"], rows, cols, sheet)


def contract_main(text):
    """The skill contract: the parameters as one JSON object; prints a unified result
    {"ok", "data", "error"}."""
    result = contract_result(text)
    if result.get("ok"):
        out = {"ok": True, "data": {k: v for k, v in result.items() if k != "ok"}, "error": None}
    else:
        out = {"ok": False, "data": None, "error": result["error"]}
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2, default=str) + "\n")
    return 0 if out["ok"] else 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 1 and argv[0].lstrip().startswith("{"):
        return contract_main(argv[0])
    parser = argparse.ArgumentParser(description="Inspect an xlsx workbook (stdlib only).")
    parser.add_argument("path")
    parser.add_argument("--rows", type=int, default=5, help="preview rows per sheet (default 5)")
    parser.add_argument("--cols", type=int, default=12, help="preview columns per sheet (default 12)")
    parser.add_argument("--sheet", help="inspect only this sheet")
    args = parser.parse_args(argv)
    result = checked(args.path, args.rows, args.cols, args.sheet)
    sys.stdout.write(json.dumps(result, ensure_ascii=False, indent=2, default=str) + "\n")
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
