#!/usr/bin/env python3
"""Fill templates/report.html with the output of calculate_ratios.py.

Usage:
    python3 scripts/render_report.py RATIOS_JSON [--analysis FILE] [--output report.html]
    python3 scripts/render_report.py '{"ratios": "ratios.json", "analysis": "## 结论\n...", "output": "report.html"}'

Placeholders in the template: ${title}, ${periods}, ${latest_period}, ${currency_unit},
${generated_at}, and the HTML comments <!-- SUMMARY_CARDS -->, <!-- TREND_CHART -->,
<!-- RATIOS_TABLE -->, <!-- GROWTH_TABLE -->, <!-- FLAGS_LIST -->, <!-- ANALYSIS -->,
<!-- NOTES -->. The analysis file is plain text with light markdown (#/## headings,
"- " bullets, **bold**, blank-line paragraphs). Without --output the HTML goes to stdout.

A single argument holding a JSON object is the parameters (the skill contract of DB-GPT's
execute_skill_script_file and `skillbake exec-script`, which pass them in sys.argv[1]):
"ratios" (the path of calculate_ratios.py's JSON, or that result itself, or its "data"),
"analysis" (the analysis text itself), "title", and "output" (a file name inside OUTPUT_DIR,
default report.html). The answer is a unified result {"ok", "data": {"output", "bytes"},
"error"}.

Standard library only.
"""

import argparse
import datetime
import html
import json
import os
import re
import string
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEMPLATE = os.path.join(HERE, os.pardir, "templates", "report.html")

RATIO_GROUPS = [
    ("盈利能力", [("gross_margin", "毛利率", "pct"), ("operating_margin", "营业利润率", "pct"),
              ("net_margin", "净利率", "pct"), ("roe", "净资产收益率 ROE", "pct"),
              ("roa", "总资产收益率 ROA", "pct")]),
    ("偿债能力", [("current_ratio", "流动比率", "x"), ("quick_ratio", "速动比率", "x"),
              ("cash_ratio", "现金比率", "x"), ("debt_ratio", "资产负债率", "pct"),
              ("debt_to_equity", "产权比率（负债/权益）", "x")]),
    ("营运能力", [("asset_turnover", "总资产周转率", "x")]),
    ("现金流质量", [("operating_cash_flow_ratio", "经营现金流 / 流动负债", "x"),
               ("ocf_to_net_income", "经营现金流 / 净利润", "x")]),
]
GROWTH_LABELS = [("revenue", "营业收入"), ("gross_profit", "毛利"), ("operating_income", "营业利润"),
                 ("net_income", "净利润"), ("operating_cash_flow", "经营活动现金流净额"),
                 ("total_assets", "总资产"), ("total_equity", "所有者权益")]
CHART_SERIES = [("revenue", "营业收入", "#2f6fed"), ("net_income", "净利润", "#1f9d55"),
                ("operating_cash_flow", "经营现金流", "#c77d00")]
LEVEL_LABELS = {"warning": "风险", "notice": "关注", "positive": "亮点"}


def esc(value):
    return html.escape(str(value), quote=True)


def fmt(value, kind):
    if value is None:
        return "—"
    if kind == "pct":
        return "%.2f%%" % (value * 100)
    if kind == "x":
        return "%.2f" % value
    return "{:,.2f}".format(value)


def signed_pct(value):
    if value is None:
        return '<span>—</span>'
    css = "pos" if value > 0 else "neg" if value < 0 else ""
    return '<span class="%s">%+.2f%%</span>' % (css, value * 100)


def summary_cards(data):
    if not data["periods"]:
        return "<p>无数据</p>"
    latest = data["periods"][-1]
    ratios = data["ratios"].get(latest, {})
    inputs = data["inputs"].get(latest, {})
    growth = data["growth"].get(latest, {})
    cards = [
        ("营业收入", fmt(inputs.get("revenue"), "amount"), growth.get("revenue")),
        ("净利润", fmt(inputs.get("net_income"), "amount"), growth.get("net_income")),
        ("毛利率", fmt(ratios.get("gross_margin"), "pct"), None),
        ("ROE", fmt(ratios.get("roe"), "pct"), None),
        ("资产负债率", fmt(ratios.get("debt_ratio"), "pct"), None),
        ("流动比率", fmt(ratios.get("current_ratio"), "x"), None),
        ("经营现金流 / 净利润", fmt(ratios.get("ocf_to_net_income"), "x"), None),
    ]
    parts = ['<div class="cards">']
    for label, value, delta in cards:
        delta_html = '<div class="delta">同比 %s</div>' % signed_pct(delta) if delta is not None else ""
        parts.append('<div class="card"><div class="label">%s</div><div class="value">%s</div>%s</div>'
                     % (esc(label), esc(value), delta_html))
    parts.append("</div>")
    return "\n".join(parts)


def ratios_table(data):
    periods = data["periods"]
    head = "".join("<th>%s</th>" % esc(p) for p in periods)
    rows = ['<table><thead><tr><th>指标</th>%s</tr></thead><tbody>' % head]
    for group, items in RATIO_GROUPS:
        rows.append('<tr class="group"><td colspan="%d">%s</td></tr>' % (len(periods) + 1, esc(group)))
        for key, label, kind in items:
            cells = "".join("<td>%s</td>" % fmt(data["ratios"].get(p, {}).get(key), kind) for p in periods)
            rows.append("<tr><td>%s</td>%s</tr>" % (esc(label), cells))
        if group == "现金流质量":
            cells = "".join("<td>%s</td>" % fmt(data.get("derived", {}).get(p, {}).get("free_cash_flow"), "amount")
                            for p in periods)
            rows.append("<tr><td>自由现金流（金额）</td>%s</tr>" % cells)
    rows.append("</tbody></table>")
    return "\n".join(rows)


def growth_table(data):
    periods = [p for p in data["periods"] if p in data.get("growth", {})]
    if not periods:
        return "<p>只有一个报告期，无法计算同比增长。</p>"
    head = "".join("<th>%s</th>" % esc(p) for p in periods)
    rows = ['<table><thead><tr><th>项目</th>%s</tr></thead><tbody>' % head]
    for key, label in GROWTH_LABELS:
        cells = "".join("<td>%s</td>" % signed_pct(data["growth"][p].get(key)) for p in periods)
        rows.append("<tr><td>%s</td>%s</tr>" % (esc(label), cells))
    rows.append("</tbody></table>")
    return "\n".join(rows)


def trend_chart(data):
    periods = data["periods"]
    series = [(k, label, color, [data["inputs"].get(p, {}).get(k) for p in periods])
              for k, label, color in CHART_SERIES]
    values = [v for _, _, _, vals in series for v in vals if v is not None]
    if not values:
        return "<p>缺少收入、利润与现金流数据，无法绘图。</p>"
    width, height, left, top, bottom = 720, 300, 70, 20, 50
    plot_h = height - top - bottom
    high, low = max(max(values), 0.0), min(min(values), 0.0)
    span = (high - low) or 1.0
    y = lambda v: top + (high - v) / span * plot_h  # noqa: E731
    group_w = (width - left - 20) / float(len(periods))
    bar_w = min(36.0, group_w * 0.8 / len(series))
    out = ['<svg viewBox="0 0 %d %d" role="img" aria-label="趋势图" xmlns="http://www.w3.org/2000/svg">'
           % (width, height)]
    for i in range(5):
        value = low + span * i / 4.0
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e4e7eb"/>' % (left, width - 20, y(value), y(value)))
        out.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#616e7c">%s</text>'
                   % (left - 6, y(value) + 4, esc("{:,.0f}".format(value))))
    for gi, period in enumerate(periods):
        x0 = left + gi * group_w + (group_w - bar_w * len(series)) / 2.0
        for si, (_, label, color, vals) in enumerate(series):
            v = vals[gi]
            if v is None:
                continue
            y_top, y_zero = y(max(v, 0.0)), y(min(v, 0.0))
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>'
                       % (x0 + si * bar_w, y_top, bar_w - 2, max(y_zero - y_top, 0.5), color,
                          esc(period), esc(label), esc("{:,.2f}".format(v))))
        out.append('<text x="%.1f" y="%d" font-size="12" text-anchor="middle" fill="#1f2933">%s</text>'
                   % (left + gi * group_w + group_w / 2.0, height - bottom + 18, esc(period)))
    for si, (_, label, color, _) in enumerate(series):
        lx = left + si * 120
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, height - 18, color))
        out.append('<text x="%d" y="%d" font-size="12" fill="#1f2933">%s</text>' % (lx + 16, height - 8, esc(label)))
    out.append("</svg>")
    return "\n".join(out)


def flags_list(data):
    flags = data.get("flags") or []
    if not flags:
        return "<p>按 references/ratio_definitions.md 中的区间，未触发风险或亮点提示。</p>"
    items = ['<ul class="flags">']
    for f in flags:
        level = f.get("level", "notice")
        items.append('<li class="%s"><strong>[%s]</strong> %s</li>'
                     % (esc(level), esc(LEVEL_LABELS.get(level, level)), esc(f.get("message", ""))))
    items.append("</ul>")
    return "\n".join(items)


def inline(text):
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", esc(text))


def markdown_lite(text):
    blocks, paragraph, bullets = [], [], []

    def flush():
        if paragraph:
            blocks.append("<p>%s</p>" % inline(" ".join(paragraph)))
            del paragraph[:]
        if bullets:
            blocks.append("<ul>%s</ul>" % "".join("<li>%s</li>" % inline(b) for b in bullets))
            del bullets[:]

    for raw in text.splitlines():
        line = raw.strip()
        heading = re.match(r"(#{1,4})\s+(.*)", line)
        if not line:
            flush()
        elif heading:
            flush()
            level = min(len(heading.group(1)) + 2, 4)
            blocks.append("<h%d>%s</h%d>" % (level, inline(heading.group(2)), level))
        elif re.match(r"[-*]\s+", line):
            if paragraph:
                flush()
            bullets.append(re.sub(r"^[-*]\s+", "", line))
        else:
            if bullets:
                flush()
            paragraph.append(line)
    flush()
    return "\n".join(blocks)


def notes(data):
    parts = []
    basis = data.get("basis", {})
    if any(v == "average" for v in basis.values()):
        parts.append("ROE、ROA 与总资产周转率使用期初期末平均余额；首个报告期使用期末余额。")
    else:
        parts.append("ROE、ROA 与总资产周转率使用期末余额。")
    missing = {p: items for p, items in data.get("missing_items", {}).items() if items}
    for period, items in missing.items():
        parts.append("%s 缺少科目：%s（相关比率显示为 —）。" % (period, "、".join(items)))
    for w in data.get("warnings", []):
        parts.append(w)
    return "<ul>%s</ul>" % "".join("<li>%s</li>" % esc(p) for p in parts)


def render(data, template_text, analysis_text, title=None):
    company = data.get("company") or "目标公司"
    unit = " ".join(x for x in (data.get("currency"), data.get("unit")) if x) or "未注明"
    fields = {
        "title": title or "%s 财务分析报告" % company,
        "company": company,
        "periods": "、".join(data["periods"]),
        "latest_period": data["periods"][-1] if data["periods"] else "",
        "currency_unit": unit,
        "generated_at": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
    }
    page = string.Template(template_text).safe_substitute({k: esc(v) for k, v in fields.items()})
    sections = {
        "SUMMARY_CARDS": summary_cards(data),
        "TREND_CHART": trend_chart(data),
        "RATIOS_TABLE": ratios_table(data),
        "GROWTH_TABLE": growth_table(data),
        "FLAGS_LIST": flags_list(data),
        "ANALYSIS": markdown_lite(analysis_text) if analysis_text.strip()
        else "<p>（未提供分析文字：请用 --analysis 传入分析结论。）</p>",
        "NOTES": notes(data),
    }
    for marker, content in sections.items():
        page = page.replace("<!-- %s -->" % marker, content)
    return page


def contract_main(text):
    """The skill contract: the parameters as one JSON object; writes the report into OUTPUT_DIR
    and prints a unified result {"ok", "data", "error"}."""
    try:
        try:
            params = json.loads(text)
        except ValueError as exc:
            raise ValueError("the parameters are not valid JSON: %s" % exc)
        if not isinstance(params, dict):
            raise ValueError("the parameters must be a JSON object")
        unknown = sorted(set(params) - {"ratios", "analysis", "title", "output"})
        if unknown:
            raise ValueError("unknown parameter(s): %s" % ", ".join(unknown))
        ratios = params.get("ratios")
        if isinstance(ratios, str):
            with open(ratios, encoding="utf-8") as handle:
                ratios = json.load(handle)
        if isinstance(ratios, dict) and isinstance(ratios.get("data"), dict):
            ratios = ratios["data"]  # a unified result of calculate_ratios.py
        if not isinstance(ratios, dict) or "periods" not in ratios:
            raise ValueError("ratios must be calculate_ratios.py's result (or the path of a file holding it)")
        name = params.get("output") or "report.html"
        if not isinstance(name, str) or os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
            raise ValueError("output must be a file name inside OUTPUT_DIR, e.g. report.html")
        for key in ("analysis", "title"):
            if params.get(key) is not None and not isinstance(params[key], str):
                raise ValueError("%s must be a string" % key)
        with open(DEFAULT_TEMPLATE, encoding="utf-8") as handle:
            template_text = handle.read()
        page = render(ratios, template_text, params.get("analysis") or "", params.get("title"))
        path = os.path.join(os.environ.get("OUTPUT_DIR") or os.getcwd(), name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(page)
        out = {"ok": True, "data": {"output": os.path.abspath(path), "bytes": len(page.encode("utf-8"))},
               "error": None}
    except (OSError, ValueError) as exc:
        out = {"ok": False, "data": None, "error": {"code": "RENDER_ERROR", "message": str(exc)}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0 if out["ok"] else 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 1 and argv[0].lstrip().startswith("{"):
        return contract_main(argv[0])
    parser = argparse.ArgumentParser(description="Render the HTML financial report from ratios JSON.")
    parser.add_argument("ratios", help="JSON produced by calculate_ratios.py")
    parser.add_argument("--analysis", help="text/markdown file with the written analysis")
    parser.add_argument("--template", default=DEFAULT_TEMPLATE, help="HTML template (default: templates/report.html)")
    parser.add_argument("--title", help="report title (default: '<company> 财务分析报告')")
    parser.add_argument("--output", help="write the HTML here instead of stdout")
    args = parser.parse_args(argv)
    try:
        with open(args.ratios, encoding="utf-8") as handle:
            data = json.load(handle)
        if not data.get("ok") or "periods" not in data:
            raise ValueError("ratios file is not a successful calculate_ratios.py result")
        with open(args.template, encoding="utf-8") as handle:
            template_text = handle.read()
        analysis_text = ""
        if args.analysis:
            with open(args.analysis, encoding="utf-8") as handle:
                analysis_text = handle.read()
        page = render(data, template_text, analysis_text, args.title)
    except (OSError, ValueError) as exc:
        sys.stdout.write(json.dumps({"ok": False, "error": {"code": "RENDER_ERROR", "message": str(exc)}},
                                    ensure_ascii=False) + "\n")
        return 1
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(page)
        sys.stdout.write(json.dumps({"ok": True, "output": args.output, "bytes": len(page.encode("utf-8"))},
                                    ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
