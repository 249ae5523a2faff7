"""The Python peers of `cargo xtask bench`, driven on the same generated packs as skillbake.

DB-GPT: the skill registry is DB-GPT's own, `dbgpt.agent.claude_skill` (package `dbgpt`), filled
with `load_skills_from_dir(DIR)` exactly as DB-GPT fills it; `load_skill` is the tool DB-GPT's
ReAct agent calls, built by `make_load_skill` in `dbgpt_app.openapi.api_v1.tools.skill_tools`
(package `dbgpt-app`). Nothing of either is re-implemented here.

skills-ref: the Agent Skills reference validator's `validate(skill_dir)` on every pack.

    python dbgpt_bench.py load DIR SKILL_NAME FILE_PATH    # one process, one answer (cold start)
    python dbgpt_bench.py report DIR SKILL_NAME FILE_PATH  # JSON: import, load, first answer, lookups
    python dbgpt_bench.py skills-ref DIR                   # validate every pack: exit 1 on errors
    python dbgpt_bench.py skills-ref-report DIR            # the same, JSON with timings
    python dbgpt_bench.py versions                         # JSON: versions of the peers

Timings are wall-clock `time.perf_counter_ns()`; per-lookup figures are the median of five batches,
each batch long enough (at least 20 ms) to dwarf the timer.
"""

import json
import sys
import time
from pathlib import Path


def _import_dbgpt():
    """Imports DB-GPT's registry and its load_skill tool factory."""
    from dbgpt.agent.claude_skill import get_registry, load_skills_from_dir
    from dbgpt_app.openapi.api_v1.tools.skill_tools import make_load_skill

    return get_registry, load_skills_from_dir, make_load_skill


def _per_call_ns(fn):
    """Median nanoseconds per call of `fn()` over five batches of at least 20 ms each."""
    n = 1
    while True:
        t = time.perf_counter_ns()
        for _ in range(n):
            fn()
        if time.perf_counter_ns() - t >= 20_000_000 or n >= 1 << 20:
            break
        n *= 2
    batches = []
    for _ in range(5):
        t = time.perf_counter_ns()
        for _ in range(n):
            fn()
        batches.append((time.perf_counter_ns() - t) / n)
    batches.sort()
    return batches[len(batches) // 2]


def load(root, name, file_path):
    _, load_skills_from_dir, make_load_skill = _import_dbgpt()
    load_skills_from_dir(root)
    reply = make_load_skill({})(name, file_path)
    sys.stdout.write(reply + "\n")
    return 0 if '"Skill: ' in reply else 1


def report(root, name, file_path):
    t0 = time.perf_counter_ns()
    get_registry, load_skills_from_dir, make_load_skill = _import_dbgpt()
    t1 = time.perf_counter_ns()
    load_skills_from_dir(root)
    t2 = time.perf_counter_ns()
    load_skill = make_load_skill({})
    reply = load_skill(name, file_path)
    t3 = time.perf_counter_ns()
    upper = name.upper()
    out = {
        "packs": len(get_registry().list_skills()),
        "import_s": (t1 - t0) / 1e9,
        "load_s": (t2 - t1) / 1e9,
        "first_answer_s": (t3 - t2) / 1e9,
        "hit_ns": _per_call_ns(lambda: load_skill(name, file_path)),
        "case_insensitive_ns": _per_call_ns(lambda: load_skill(upper, file_path)),
        "miss_ns": _per_call_ns(lambda: load_skill("no-such-skill", file_path)),
        "reply_bytes": len(reply.encode("utf-8")),
    }
    print(json.dumps(out))
    return 0


def _packs(root):
    """Every folder holding a SKILL.md, in sorted order."""
    return sorted(p.parent for p in Path(root).rglob("SKILL.md"))


def skills_ref(root, as_report):
    t0 = time.perf_counter_ns()
    from skills_ref import validate

    t1 = time.perf_counter_ns()
    packs = _packs(root)
    problems = []
    for pack in packs:
        problems.extend(f"{pack.name}: {p}" for p in validate(pack))
    t2 = time.perf_counter_ns()
    if as_report:
        out = {
            "packs": len(packs),
            "problems": len(problems),
            "import_s": (t1 - t0) / 1e9,
            "validate_s": (t2 - t1) / 1e9,
        }
        print(json.dumps(out))
    else:
        for p in problems[:20]:
            print(p)
        print(f"checked {len(packs)} packs: {len(problems)} problems")
    return 1 if problems else 0


def versions():
    from importlib.metadata import version

    out = {p: version(p) for p in ["dbgpt", "dbgpt-app", "skills-ref", "PyYAML"]}
    import yaml

    out["libyaml"] = bool(yaml.__with_libyaml__)
    out["python"] = sys.version.split()[0]
    print(json.dumps(out))
    return 0


def main(argv):
    usage = __doc__.split("\n\n")[3]
    match argv:
        case ["load", root, name, file_path]:
            return load(root, name, file_path)
        case ["report", root, name, file_path]:
            return report(root, name, file_path)
        case ["skills-ref", root]:
            return skills_ref(root, False)
        case ["skills-ref-report", root]:
            return skills_ref(root, True)
        case ["versions"]:
            return versions()
        case _:
            sys.stderr.write(f"usage:\n{usage}\n")
            return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
