"""Converts public tool-retrieval data into skill packs and labelled requests for
`cargo xtask route-eval`. Nothing here is committed data: the inputs are read from DATA (see
`--help`), the packs and requests are written under OUT.

    python convert.py DATA OUT

DATA holds, under these names, files of two public repositories (see BENCHMARKS.md for the
commits used):

    DATA/gorilla/data/api/{torchhub,tensorflowhub,huggingface}_api.jsonl
    DATA/gorilla/data/apibench/{torchhub,tensorflow,huggingface}_eval.json
    DATA/gorilla/data/apibench/torchhub_train.json (optional: the tuning split)
    DATA/acebench/data_all/data_{en,zh}/*.json and .../possible_answer/*.json

Every tool becomes a pack folder OUT/<set>/packs/<name>/ with a SKILL.md (and a schema.json for
ACEBench functions), written the way a pack author would: the tool's description as
`description`, its domain and task as `tags`, usage and arguments in the body. Every labelled
request becomes one line of OUT/<set>/queries.jsonl: {"id", "query", "relevant": [pack names]}.

APIBench (Gorilla): the eval files' `api_data` is the API record of the answer. A request's
relevant packs are those whose `api_call` equals the answer's (TensorFlow Hub lists one model URL
under several records; any of them is right), else whose `api_name` does.

ACEBench: the library is every distinct function (name, description and parameters) of every file of the language; the
requests are those of the single-function categories (`normal_single_turn_single_function`,
`normal_atom_*`, `normal_similar_api`, `normal_preference`) whose ground truth names functions of
the library.
"""

import json
import re
import sys
from pathlib import Path


def slug(text):
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (s[:60].strip("-")) or "tool"


def unique_names(items):
    """`slug` of each name, made unique with -2, -3, ... in input order."""
    seen = {}
    out = []
    for raw in items:
        base = slug(raw)
        n = seen.get(base, 0) + 1
        seen[base] = n
        out.append(base if n == 1 else f"{base[:56]}-{n}")
    return out


def clip(text, limit):
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rfind(" ")]
    return cut + "…"


def q(text):
    """A YAML double-quoted scalar (JSON string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def write_pack(root, name, description, tags, body, schema=None):
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {name}", f"description: {q(description)}"]
    tags = [t for t in tags if t]
    if tags:
        lines.append("tags: [" + ", ".join(q(t) for t in tags) + "]")
    lines.append("---")
    text = "\n".join(lines) + "\n\n" + body.strip() + "\n"
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    if schema is not None:
        (d / "schema.json").write_text(
            json.dumps(schema, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )


def as_text(v):
    if v is None or v == "" or v == "N/A":
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(as_text(x) for x in v)
    return json.dumps(v, ensure_ascii=False)


def apibench(data, out, api_file, eval_file, set_name, packs_from=None):
    apis = [json.loads(l) for l in (data / "gorilla/data/api" / api_file).open(encoding="utf-8") if l.strip()]
    names = unique_names(a.get("api_name") or "api" for a in apis)
    root = out / set_name / "packs"
    by_call, by_name = {}, {}
    for a, name in zip(apis, names):
        by_call.setdefault(a.get("api_call", ""), []).append(name)
        by_name.setdefault(a.get("api_name", ""), []).append(name)
        if packs_from:
            continue
        desc = clip(a.get("description") or a.get("functionality") or a.get("api_name"), 1000)
        tags = [a.get("domain", ""), a.get("functionality", ""), a.get("framework", "")]
        body = [f"# {a.get('api_name', name)}", ""]
        body += ["## Call", "", "```python", as_text(a.get("api_call")), "```", ""]
        for title, key in [("Arguments", "api_arguments"), ("Requirements", "python_environment_requirements")]:
            t = as_text(a.get(key))
            if t.strip():
                body += [f"## {title}", "", t, ""]
        ex = as_text(a.get("example_code"))
        if ex.strip():
            body += ["## Example", "", "```python", ex, "```", ""]
        perf = a.get("performance")
        if perf:
            body += ["## Performance", "", as_text(perf), ""]
        write_pack(root, name, desc, tags, "\n".join(body))
    queries = []
    for i, line in enumerate((data / "gorilla/data/apibench" / eval_file).open(encoding="utf-8")):
        if not line.strip():
            continue
        e = json.loads(line)
        text = e.get("code", "")
        m = re.search(r"###Instruction:(.*?)(###Output|$)", text, re.S)
        query = " ".join((m.group(1) if m else text).split())
        ans = e.get("api_data") or {}
        rel = by_call.get(ans.get("api_call", "")) or by_name.get(ans.get("api_name", "")) or []
        if query and rel:
            queries.append({"id": f"{set_name}-{i}", "query": query, "relevant": sorted(set(rel))})
    if packs_from:
        # The same packs as the eval set (a symbolic link keeps one copy).
        link = out / set_name / "packs"
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(Path("..") / packs_from / "packs", target_is_directory=True)
    write_queries(out / set_name, queries)
    return len(apis), len(queries)


JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
TYPE_FIX = {"dict": "object", "list": "array", "tuple": "array", "float": "number", "int": "integer",
            "str": "string", "bool": "boolean", "any": None}


def fix_schema(v):
    """ACEBench writes Python type names in places; map them to JSON Schema types."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "type" and isinstance(x, str) and x not in JSON_TYPES:
                t = TYPE_FIX.get(x.lower(), "string")
                if t:
                    out[k] = t
                continue
            if k == "required" and not isinstance(x, list):
                continue
            out[k] = fix_schema(x)
        return out
    if isinstance(v, list):
        return [fix_schema(x) for x in v]
    return v


def params_body(schema, depth=0):
    lines = []
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return lines
    for k, p in props.items():
        p = p if isinstance(p, dict) else {}
        desc = " ".join(str(p.get("description", "")).split())
        lines.append("  " * depth + f"- `{k}` ({p.get('type', 'any')}): {desc}".rstrip(": "))
        lines += params_body(p, depth + 1)
        if isinstance(p.get("items"), dict):
            lines += params_body(p["items"], depth + 1)
    return lines


SINGLE = ["data_normal_single_turn_single_function", "data_normal_atom_bool", "data_normal_atom_enum",
          "data_normal_atom_list", "data_normal_atom_number", "data_normal_atom_object_deep",
          "data_normal_atom_object_short", "data_normal_similar_api", "data_normal_preference"]


def fn_key(fn):
    return json.dumps(fn, ensure_ascii=False, sort_keys=True)


def acebench(data, out, lang):
    base = data / "acebench/data_all" / f"data_{lang}"
    # One pack per distinct function: files reuse names with other descriptions.
    fns = {}
    for f in sorted(base.glob("*.json")):
        for line in f.open(encoding="utf-8"):
            if not line.strip():
                continue
            d = json.loads(line)
            for fn in d.get("function") or []:
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    fns.setdefault(fn_key(fn), fn)
    order = sorted(fns, key=lambda k: (fns[k]["name"], k))
    names = dict(zip(order, unique_names(fns[k]["name"] for k in order)))
    set_name = f"acebench-{lang}"
    root = out / set_name / "packs"
    for key in order:
        fn = fns[key]
        raw = fn["name"]
        name = names[key]
        desc = clip(fn.get("description") or raw, 1000)
        schema = fix_schema(fn.get("parameters")) if isinstance(fn.get("parameters"), dict) else None
        body = [f"# {raw}", "", desc, ""]
        if schema:
            body += ["## Parameters", ""] + params_body(schema) + ["", "The parameters are described in `schema.json`."]
        write_pack(root, name, desc, [], "\n".join(body), schema)
    queries = []
    for cat in SINGLE:
        qf, af = base / f"{cat}.json", base / "possible_answer" / f"{cat}.json"
        if not qf.exists() or not af.exists():
            continue
        answers = {}
        for line in af.open(encoding="utf-8"):
            if line.strip():
                a = json.loads(line)
                answers[a["id"]] = a.get("ground_truth")
        for line in qf.open(encoding="utf-8"):
            if not line.strip():
                continue
            d = json.loads(line)
            gt = answers.get(d["id"])
            if isinstance(gt, list):
                gt = gt[0] if len(gt) == 1 and isinstance(gt[0], dict) else None
            if not isinstance(gt, dict) or len(gt) != 1:
                continue
            (fn_name,) = gt.keys()
            own = [fn for fn in d.get("function") or [] if isinstance(fn, dict) and fn.get("name") == fn_name]
            if len(own) != 1 or fn_key(own[0]) not in names:
                continue
            query = re.sub(r"^\s*user\s*:\s*", "", d.get("question", "")).strip()
            query = " ".join(query.split())
            if query:
                queries.append({"id": d["id"], "query": query, "relevant": [names[fn_key(own[0])]]})
    write_queries(out / set_name, queries)
    return len(order), len(queries)


def write_queries(dir_, queries):
    dir_.mkdir(parents=True, exist_ok=True)
    with (dir_ / "queries.jsonl").open("w", encoding="utf-8") as f:
        for qq in queries:
            f.write(json.dumps(qq, ensure_ascii=False) + "\n")


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    data, out = Path(argv[1]), Path(argv[2])
    sets = []
    for api, ev, name in [("torchhub_api.jsonl", "torchhub_eval.json", "apibench-torchhub"),
                          ("tensorflowhub_api.jsonl", "tensorflow_eval.json", "apibench-tensorflowhub"),
                          ("huggingface_api.jsonl", "huggingface_eval.json", "apibench-huggingface")]:
        if (data / "gorilla/data/api" / api).exists():
            sets.append((name,) + apibench(data, out, api, ev, name))
    # The TorchHub training split: the requests the ranking's weights were chosen on.
    if (data / "gorilla/data/apibench/torchhub_train.json").exists():
        sets.append(("apibench-torchhub-train",) + apibench(
            data, out, "torchhub_api.jsonl", "torchhub_train.json", "apibench-torchhub-train",
            packs_from="apibench-torchhub"))
    for lang in ["en", "zh"]:
        if (data / "acebench/data_all" / f"data_{lang}").exists():
            sets.append((f"acebench-{lang}",) + acebench(data, out, lang))
    if not sets:
        print(f"convert.py: no input found under {data} (see --help)", file=sys.stderr)
        return 1
    print(json.dumps([{"set": s, "packs": p, "queries": n} for s, p, n in sets]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
