"""The peers of `cargo xtask route-eval`, run on the packs and requests `convert.py` wrote:

* bm25s (https://github.com/xhluca/bm25s) with its defaults: `bm25s.tokenize(texts)` (lower
  case, words of two or more word characters, no stop words, no stemming) and `bm25s.BM25()`
  (Lucene's BM25, k1 = 1.5, b = 0.75);
* bm25s as its README's quick start sets it up: English stop words and the Snowball English
  stemmer (PyStemmer);
* rank_bm25 (https://github.com/dorianbrown/rank_bm25) `BM25Okapi` with its default parameters
  (k1 = 1.5, b = 0.75, epsilon = 0.25) on lower-cased `\\w+` words (the library leaves tokenizing
  to the caller);
* DB-GPT's own `SkillRegistry.match_skill(user_input)` (package `dbgpt`), filled with
  `load_from_directory(DIR)`: it returns one skill or none.

Each BM25 document is a pack's whole `SKILL.md` (frontmatter and body) followed by its
`schema.json`: the same text skillbake indexes, without fields or weights.

    python peers.py SET_DIR OUT.json

writes {"systems": {name: {"ranked": {id: [pack, ...]}, "latency_ns": [...], "index_s": s,
"version": v}}} with the top 10 of every request (in request order).
"""

import json
import re
import sys
import time
from pathlib import Path

TOP = 10


def load(set_dir):
    packs = sorted(p for p in (set_dir / "packs").iterdir() if (p / "SKILL.md").exists())
    names, texts = [], []
    for p in packs:
        text = (p / "SKILL.md").read_text(encoding="utf-8")
        schema = p / "schema.json"
        if schema.exists():
            text += "\n" + schema.read_text(encoding="utf-8")
        names.append(p.name)
        texts.append(text)
    queries = [json.loads(l) for l in (set_dir / "queries.jsonl").open(encoding="utf-8") if l.strip()]
    return names, texts, queries


def timed(fn, queries):
    ranked, lat = {}, []
    for q in queries:
        t = time.perf_counter_ns()
        r = fn(q["query"])
        lat.append(time.perf_counter_ns() - t)
        ranked[q["id"]] = r
    return ranked, lat


def run_bm25s(names, texts, queries, recipe):
    import bm25s

    kw = {}
    if recipe:
        import Stemmer

        kw = {"stopwords": "en", "stemmer": Stemmer.Stemmer("english")}
    t = time.perf_counter()
    tokens = bm25s.tokenize(texts, show_progress=False, **kw)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    index_s = time.perf_counter() - t
    k = min(TOP, len(names))

    def one(query):
        qt = bm25s.tokenize([query], show_progress=False, **kw)
        if not qt.vocab:
            return []
        docs, scores = retriever.retrieve(qt, k=k, show_progress=False)
        return [names[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]

    ranked, lat = timed(one, queries)
    return {"ranked": ranked, "latency_ns": lat, "index_s": index_s, "version": bm25s.__version__}


def words(text):
    return re.findall(r"\w+", text.lower())


def run_rank_bm25(names, texts, queries):
    import importlib.metadata

    from rank_bm25 import BM25Okapi

    t = time.perf_counter()
    bm = BM25Okapi([words(x) for x in texts])
    index_s = time.perf_counter() - t

    def one(query):
        scores = bm.get_scores(words(query))
        order = sorted(range(len(names)), key=lambda i: (-scores[i], i))[:TOP]
        return [names[i] for i in order if scores[i] > 0]

    ranked, lat = timed(one, queries)
    return {"ranked": ranked, "latency_ns": lat, "index_s": index_s,
            "version": importlib.metadata.version("rank-bm25")}


def run_dbgpt(set_dir, queries):
    import importlib.metadata
    import io
    import contextlib

    from dbgpt.agent.claude_skill import SkillRegistry

    t = time.perf_counter()
    reg = SkillRegistry()
    with contextlib.redirect_stdout(io.StringIO()):
        reg.load_from_directory(str(set_dir / "packs"))
    index_s = time.perf_counter() - t

    def one(query):
        s = reg.match_skill(query)
        return [s.metadata.name] if s is not None else []

    ranked, lat = timed(one, queries)
    return {"ranked": ranked, "latency_ns": lat, "index_s": index_s,
            "version": importlib.metadata.version("dbgpt")}


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    set_dir, out = Path(argv[1]), Path(argv[2])
    names, texts, queries = load(set_dir)
    systems = {}
    runs = [
        ("bm25s", lambda: run_bm25s(names, texts, queries, False)),
        ("bm25s-stem", lambda: run_bm25s(names, texts, queries, True)),
        ("rank_bm25", lambda: run_rank_bm25(names, texts, queries)),
        ("dbgpt", lambda: run_dbgpt(set_dir, queries)),
    ]
    for name, fn in runs:
        try:
            systems[name] = fn()
        except Exception as e:  # a peer that cannot run is reported, never replaced
            systems[name] = {"error": f"{type(e).__name__}: {e}"}
    out.write_text(json.dumps({"systems": systems}, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
