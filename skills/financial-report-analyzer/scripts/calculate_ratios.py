#!/usr/bin/env python3
"""Compute financial ratios from income statement, balance sheet and cash flow items.

Usage:
    python3 scripts/calculate_ratios.py INPUT [--basis average|ending] [--output FILE]
    python3 scripts/calculate_ratios.py '{"input": "statements.csv", "basis": "average"}'

INPUT is a CSV or JSON file (see SKILL.md for the accepted layouts). The result is
printed as JSON (UTF-8). Missing items and zero denominators never crash the script:
the affected ratio is null and a warning explains why.

A single argument holding a JSON object is the parameters (schema.json; the skill contract of
`skillbake run` and DB-GPT's execute_skill_script_file, which pass them in sys.argv[1]); the
answer is then a unified result {"ok", "data", "error"}.

Standard library only.
"""

import argparse
import csv
import io
import json
import math
import re
import sys

# canonical field -> accepted spellings (matched case-, space-, underscore- and bracket-insensitively)
FIELD_ALIASES = {
    "revenue": ["revenue", "total_revenue", "sales", "net_sales", "营业收入", "营业总收入"],
    "cost_of_revenue": ["cost_of_revenue", "cost_of_sales", "cogs", "营业成本"],
    "gross_profit": ["gross_profit", "毛利", "毛利润"],
    "operating_income": ["operating_income", "operating_profit", "营业利润"],
    "net_income": ["net_income", "net_profit", "净利润"],
    "net_income_parent": ["net_income_parent", "net_income_attributable", "归属于母公司股东的净利润",
                          "归属于母公司所有者的净利润", "归母净利润"],
    "total_assets": ["total_assets", "资产总计", "总资产"],
    "total_liabilities": ["total_liabilities", "负债合计", "总负债"],
    "total_equity": ["total_equity", "shareholders_equity", "所有者权益合计", "股东权益合计",
                     "所有者权益（或股东权益）合计", "净资产"],
    "current_assets": ["current_assets", "流动资产合计"],
    "current_liabilities": ["current_liabilities", "流动负债合计"],
    "inventory": ["inventory", "inventories", "存货"],
    "cash": ["cash", "cash_and_equivalents", "货币资金"],
    "operating_cash_flow": ["operating_cash_flow", "cfo", "经营活动产生的现金流量净额",
                            "经营活动现金流量净额"],
    "capex": ["capex", "capital_expenditure", "购建固定资产、无形资产和其他长期资产支付的现金"],
}

META_KEYS = {"company", "currency", "unit"}
ITEM_HEADERS = {"item", "items", "field", "metric", "account", "科目", "项目"}
PERIOD_HEADERS = {"period", "year", "date", "fiscal_year", "报告期", "年度", "期间"}
NON_PERIOD_COLUMNS = {"label", "name", "note", "unit", "名称", "说明", "备注", "单位"}
MISSING_TOKENS = {"", "-", "--", "—", "n/a", "na", "null", "none", "nan"}

OPTIONAL_FIELDS = {"net_income_parent"}  # never reported as missing
GROWTH_FIELDS = ["revenue", "gross_profit", "operating_income", "net_income",
                 "operating_cash_flow", "total_assets", "total_equity"]


def _norm(text):
    return re.sub(r"[\s_\-()（）]", "", str(text).strip().lower())


ALIAS_INDEX = {}
for _field, _aliases in FIELD_ALIASES.items():
    for _alias in _aliases:
        ALIAS_INDEX[_norm(_alias)] = _field


class InputError(Exception):
    """Raised when the input file cannot be interpreted."""


def to_number(value):
    """Parse 1,234.5 / (120) / ¥3,000 / 12e3 into float; return None when missing."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    text = str(value).strip()
    if text.lower() in MISSING_TOKENS:
        return None
    negative = text.startswith("(") and text.endswith(")")
    text = re.sub(r"[,\s¥$￥€£()]", "", text)
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return -number if negative else number


def read_text(path):
    with open(path, "rb") as handle:
        raw = handle.read()
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise InputError("cannot decode %s as UTF-8 or GB18030" % path)


def add_item(periods, unrecognized, period, key, value, warnings):
    field = ALIAS_INDEX.get(_norm(key))
    if field is None:
        if str(key).strip() and _norm(key) not in {_norm(k) for k in META_KEYS | PERIOD_HEADERS}:
            unrecognized.add(str(key).strip())
        return
    number = to_number(value)
    if number is None and value is not None and str(value).strip().lower() not in MISSING_TOKENS:
        warnings.append("%s: value %r for %s is not a number, treated as missing" % (period, value, field))
    periods.setdefault(str(period).strip(), {})[field] = number


def parse_csv(text, warnings):
    meta, lines = {}, []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            match = re.match(r"#\s*([A-Za-z_]+)\s*[:=]\s*(.+)$", stripped)
            if match and match.group(1).lower() in META_KEYS:
                meta[match.group(1).lower()] = match.group(2).strip()
            continue
        if stripped:
            lines.append(line)
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) < 2:
        raise InputError("CSV needs a header row and at least one data row")
    header = [cell.strip() for cell in rows[0]]
    periods, unrecognized = {}, set()
    header_norm = [_norm(cell) for cell in header]

    if header_norm[0] in ITEM_HEADERS:
        # wide layout: one row per item, one column per period
        columns = [(i, name) for i, name in enumerate(header)
                   if i > 0 and name and _norm(name) not in NON_PERIOD_COLUMNS]
        if not columns:
            raise InputError("no period columns found after the item column")
        for row in rows[1:]:
            if not row or not row[0].strip():
                continue
            key = row[0].strip()
            if _norm(key) in META_KEYS:
                value = next((c.strip() for c in row[1:] if c.strip()), "")
                meta.setdefault(_norm(key), value)
                continue
            for index, period in columns:
                value = row[index] if index < len(row) else None
                add_item(periods, unrecognized, period, key, value, warnings)
    else:
        period_col = next((i for i, name in enumerate(header_norm) if name in PERIOD_HEADERS), None)
        if period_col is None:
            raise InputError("CSV header must start with an item column (item/科目) "
                             "or contain a period column (period/year/报告期)")
        for row in rows[1:]:
            if period_col >= len(row) or not row[period_col].strip():
                continue
            period = row[period_col].strip()
            for index, key in enumerate(header):
                if index == period_col or index >= len(row):
                    continue
                if _norm(key) in META_KEYS:
                    meta.setdefault(_norm(key), row[index].strip())
                    continue
                add_item(periods, unrecognized, period, key, row[index], warnings)
    return meta, periods, unrecognized


def parse_json(text, warnings):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError("invalid JSON: %s" % exc)
    meta, periods, unrecognized = {}, {}, set()
    records = doc
    if isinstance(doc, dict):
        for key in META_KEYS:
            if isinstance(doc.get(key), str):
                meta[key] = doc[key]
        records = doc.get("periods", {k: v for k, v in doc.items() if isinstance(v, dict)})
    if isinstance(records, dict):
        records = [dict(values, period=period) for period, values in records.items()
                   if isinstance(values, dict)]
    if not isinstance(records, list):
        raise InputError("JSON must be a period map, a list of period records, or {\"periods\": ...}")
    for record in records:
        if not isinstance(record, dict):
            continue
        period = next((record[k] for k in record if _norm(k) in PERIOD_HEADERS), None)
        if period is None:
            raise InputError("every JSON record needs a period (period/year/报告期)")
        for key, value in record.items():
            if _norm(key) not in PERIOD_HEADERS:
                add_item(periods, unrecognized, period, key, value, warnings)
    return meta, periods, unrecognized


def safe_div(numerator, denominator, label, period, warnings, positive_denominator=False):
    if numerator is None or denominator is None:
        return None
    if denominator == 0:
        warnings.append("%s: %s not computed (denominator is zero)" % (period, label))
        return None
    if positive_denominator and denominator < 0:
        warnings.append("%s: %s not meaningful (denominator is negative)" % (period, label))
        return None
    return numerator / denominator


def complete_items(items):
    """Fill derivable items and return the names of fields that were derived."""
    derived = []
    if items.get("gross_profit") is None and None not in (items.get("revenue"), items.get("cost_of_revenue")):
        items["gross_profit"] = items["revenue"] - items["cost_of_revenue"]
        derived.append("gross_profit")
    if items.get("total_equity") is None and None not in (items.get("total_assets"), items.get("total_liabilities")):
        items["total_equity"] = items["total_assets"] - items["total_liabilities"]
        derived.append("total_equity")
    if items.get("total_liabilities") is None and None not in (items.get("total_assets"), items.get("total_equity")):
        items["total_liabilities"] = items["total_assets"] - items["total_equity"]
        derived.append("total_liabilities")
    return derived


def compute(periods, basis, warnings):
    order = sorted(periods)
    derived_items = {}
    for period in order:
        for field in FIELD_ALIASES:
            periods[period].setdefault(field, None)
        derived_items[period] = complete_items(periods[period])

    ratios, growth, extras, basis_used = {}, {}, {}, {}
    for position, period in enumerate(order):
        cur = periods[period]
        prev = periods[order[position - 1]] if position > 0 else None

        def balance(field):
            value = cur.get(field)
            if basis == "average" and prev is not None and value is not None and prev.get(field) is not None:
                return (value + prev[field]) / 2.0
            return value

        averaged = basis == "average" and prev is not None
        basis_used[period] = "average" if averaged else "ending"
        d = lambda n, m, label, pos=False: safe_div(n, m, label, period, warnings, pos)  # noqa: E731
        r = {
            "gross_margin": d(cur["gross_profit"], cur["revenue"], "gross_margin"),
            "operating_margin": d(cur["operating_income"], cur["revenue"], "operating_margin"),
            "net_margin": d(cur["net_income"], cur["revenue"], "net_margin"),
            "roe": d(cur["net_income_parent"] if cur["net_income_parent"] is not None else cur["net_income"],
                     balance("total_equity"), "roe", True),
            "roa": d(cur["net_income"], balance("total_assets"), "roa", True),
            "current_ratio": d(cur["current_assets"], cur["current_liabilities"], "current_ratio"),
            "quick_ratio": d(None if None in (cur["current_assets"], cur["inventory"])
                             else cur["current_assets"] - cur["inventory"],
                             cur["current_liabilities"], "quick_ratio"),
            "cash_ratio": d(cur["cash"], cur["current_liabilities"], "cash_ratio"),
            "debt_to_equity": d(cur["total_liabilities"], cur["total_equity"], "debt_to_equity", True),
            "debt_ratio": d(cur["total_liabilities"], cur["total_assets"], "debt_ratio"),
            "asset_turnover": d(cur["revenue"], balance("total_assets"), "asset_turnover", True),
            "operating_cash_flow_ratio": d(cur["operating_cash_flow"], cur["current_liabilities"],
                                           "operating_cash_flow_ratio"),
            "ocf_to_net_income": d(cur["operating_cash_flow"], cur["net_income"], "ocf_to_net_income", True),
        }
        ratios[period] = {k: (round(v, 4) if v is not None else None) for k, v in r.items()}
        extras[period] = {
            "gross_profit": cur["gross_profit"],
            "free_cash_flow": None if None in (cur["operating_cash_flow"], cur["capex"])
            else cur["operating_cash_flow"] - abs(cur["capex"]),
        }
        if prev is not None:
            g = {}
            for field in GROWTH_FIELDS:
                now, before = cur.get(field), prev.get(field)
                if now is None or before is None:
                    g[field] = None
                elif before == 0:
                    g[field] = None
                    warnings.append("%s: %s growth not computed (prior period is zero)" % (period, field))
                else:
                    g[field] = round((now - before) / abs(before), 4)
                    if before < 0:
                        warnings.append("%s: %s growth uses a negative base, read with care" % (period, field))
            growth[period] = g
    missing = {p: sorted(f for f, v in periods[p].items() if v is None and f not in OPTIONAL_FIELDS)
               for p in order}
    return order, ratios, growth, extras, basis_used, missing, derived_items


def build_flags(order, ratios, growth, extras):
    """Rule-based observations on the latest period (bands follow references/ratio_definitions.md)."""
    flags = []
    if not order:
        return flags
    latest = order[-1]
    r = ratios[latest]

    def flag(level, metric, message):
        flags.append({"period": latest, "level": level, "metric": metric, "message": message})

    cr = r.get("current_ratio")
    if cr is not None:
        if cr < 1:
            flag("warning", "current_ratio", "流动比率 %.2f 低于 1，流动资产不足以覆盖流动负债，短期偿债压力较大" % cr)
        elif cr > 3:
            flag("notice", "current_ratio", "流动比率 %.2f 偏高，可能存在资金闲置或存货、应收积压" % cr)
    qr = r.get("quick_ratio")
    if qr is not None and qr < 0.8:
        flag("warning", "quick_ratio", "速动比率 %.2f 低于 0.8，扣除存货后的即时偿债能力偏弱" % qr)
    dr = r.get("debt_ratio")
    if dr is not None and dr > 0.7:
        flag("warning", "debt_ratio", "资产负债率 %.1f%% 超过 70%%（一般工商企业），财务杠杆较高" % (dr * 100))
    de = r.get("debt_to_equity")
    if de is not None and de > 2:
        flag("warning", "debt_to_equity", "产权比率 %.2f 超过 2，负债远高于股东权益" % de)
    nm = r.get("net_margin")
    if nm is not None and nm < 0:
        flag("warning", "net_margin", "净利率为负（%.1f%%），本期亏损" % (nm * 100))
    roe = r.get("roe")
    if roe is not None:
        if roe >= 0.15:
            flag("positive", "roe", "ROE %.1f%% 不低于 15%%，股东回报水平较好" % (roe * 100))
        elif roe < 0.05:
            flag("warning", "roe", "ROE %.1f%% 低于 5%%，股东回报偏弱" % (roe * 100))
    q = r.get("ocf_to_net_income")
    if q is not None and q < 0.8:
        flag("warning", "ocf_to_net_income", "经营现金流/净利润 %.2f 低于 0.8，利润的现金含量不足，关注应收与存货" % q)
    if len(order) >= 2:
        prev = ratios[order[-2]]
        if None not in (r.get("gross_margin"), prev.get("gross_margin")):
            delta = (r["gross_margin"] - prev["gross_margin"]) * 100
            if delta <= -3:
                flag("warning", "gross_margin", "毛利率同比下降 %.1f 个百分点" % -delta)
            elif delta >= 3:
                flag("positive", "gross_margin", "毛利率同比提升 %.1f 个百分点" % delta)
        g = growth.get(latest, {})
        rev, ni = g.get("revenue"), g.get("net_income")
        if rev is not None and rev < 0:
            flag("warning", "revenue", "营业收入同比下降 %.1f%%" % (-rev * 100))
        if rev is not None and ni is not None and rev > 0 and ni < 0:
            flag("warning", "net_income", "收入增长但净利润下滑，关注成本费用或非经常性损益")
    fcf = extras[latest].get("free_cash_flow")
    if fcf is not None and fcf < 0:
        flag("notice", "free_cash_flow", "自由现金流为负，资本开支超过经营现金流入")
    return flags


def analyze(path, basis="average", company=None):
    warnings = []
    text = read_text(path)
    if path.lower().endswith(".json") or text.lstrip().startswith(("{", "[")):
        meta, periods, unrecognized = parse_json(text, warnings)
    else:
        meta, periods, unrecognized = parse_csv(text, warnings)
    if not periods:
        raise InputError("no recognised financial items found; see the field table in SKILL.md")
    order, ratios, growth, extras, basis_used, missing, derived_items = compute(periods, basis, warnings)
    return {
        "ok": True,
        "company": company or meta.get("company", ""),
        "currency": meta.get("currency", ""),
        "unit": meta.get("unit", ""),
        "periods": order,
        "basis": basis_used,
        "ratios": ratios,
        "growth": growth,
        "derived": {p: {k: (round(v, 2) if v is not None else None) for k, v in extras[p].items()}
                    for p in order},
        "inputs": {p: {k: v for k, v in periods[p].items() if v is not None} for p in order},
        "derived_items": derived_items,
        "missing_items": missing,
        "unrecognized_items": sorted(unrecognized),
        "flags": build_flags(order, ratios, growth, extras),
        "warnings": warnings,
    }


def contract_main(text):
    """The skill contract: the parameters (schema.json) as one JSON object; prints a unified
    result {"ok", "data", "error"}."""
    try:
        try:
            params = json.loads(text)
        except ValueError as exc:
            raise InputError("the parameters are not valid JSON: %s" % exc)
        if not isinstance(params, dict):
            raise InputError("the parameters must be a JSON object")
        unknown = sorted(set(params) - {"input", "basis", "company"})
        if unknown:
            raise InputError("unknown parameter(s): %s" % ", ".join(unknown))
        if not isinstance(params.get("input"), str) or not params["input"]:
            raise InputError("missing required parameter: input (a CSV or JSON file)")
        basis = params.get("basis", "average")
        if basis not in ("average", "ending"):
            raise InputError("basis must be 'average' or 'ending'")
        company = params.get("company")
        if company is not None and not isinstance(company, str):
            raise InputError("company must be a string")
        result = analyze(params["input"], basis, company)
        out = {"ok": True, "data": {k: v for k, v in result.items() if k != "ok"}, "error": None}
    except (OSError, InputError) as exc:
        out = {"ok": False, "data": None, "error": {"code": "INPUT_ERROR", "message": str(exc)}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0 if out["ok"] else 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 1 and argv[0].lstrip().startswith("{"):
        return contract_main(argv[0])
    parser = argparse.ArgumentParser(description="Compute financial ratios from statement data (CSV/JSON).")
    parser.add_argument("input", help="path to a CSV or JSON file with statement items")
    parser.add_argument("--basis", choices=["average", "ending"], default="average",
                        help="balance used for ROE/ROA/asset turnover: average of opening and closing "
                             "(default, when a prior period exists) or closing balance")
    parser.add_argument("--company", help="override the company name found in the input")
    parser.add_argument("--output", help="also write the JSON result to this file")
    args = parser.parse_args(argv)
    try:
        result = analyze(args.input, args.basis, args.company)
    except (OSError, InputError) as exc:
        result = {"ok": False, "error": {"code": "INPUT_ERROR", "message": str(exc)}}
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if args.output and result.get("ok"):
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    sys.stdout.write(text + "\n")
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
