#!/usr/bin/env bash
# Build cost of embedding many skill packs.
#
# For each N (default: 100 1000 10000) this generates N packs in a temporary folder (SKILL.md
# bodies of 1 KB to 50 KB, log-uniformly distributed; schema.json, a script and, for every other
# pack, a reference file), points the example agent crate (examples/agent, whose build.rs compiles
# `skills/` unless $SKILLBAKE_SKILLS_DIR says otherwise) at them, and measures with
# `/usr/bin/time -v` the rebuild after the skills changed, dependencies already built:
# wall-clock time, CPU time and peak RSS (the largest single process: the build script or rustc).
# It also reports the size of the release binary against the raw bytes of the packs.
#
# Usage: benches/build-cost.sh [N...]          (e.g. `benches/build-cost.sh 100 1000`)
# Environment: PROFILES="release dev" to also time the dev profile (default: release only).
# Output: progress on stderr, a markdown table on stdout. Nothing is written inside the
# repository: packs and the target folder live in a temporary folder removed at exit.

set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
counts=("$@")
if [ ${#counts[@]} -eq 0 ]; then
    counts=(100 1000 10000)
fi
read -r -a profiles <<<"${PROFILES:-release}"
cargo="${CARGO:-cargo}"

for tool in /usr/bin/time python3 "$cargo"; do
    command -v "$tool" >/dev/null || { echo "build-cost: $tool is required" >&2; exit 2; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/skillbake-build-cost.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$work/target"
unset RUSTFLAGS SKILLBAKE_SKILLS_DIR

log() { echo "build-cost: $*" >&2; }

# Builds the example agent; $1 = profile, $2 = file for `time -v`'s report (or empty).
build() {
    local profile="$1" report="$2"
    local args=(build --offline --quiet -p skillbake-example-agent --manifest-path "$repo/Cargo.toml")
    [ "$profile" = release ] && args+=(--release)
    if [ -n "$report" ]; then
        /usr/bin/time -v -o "$report" "$cargo" "${args[@]}"
    else
        "$cargo" "${args[@]}"
    fi
}

profile_dir() { if [ "$1" = release ]; then echo release; else echo debug; fi; }

binary() { echo "$CARGO_TARGET_DIR/$(profile_dir "$1")/skillbake-example-agent"; }

# The generated registry data of the last build-script run: text (every piece) + file bytes.
generated_bytes() {
    local out
    out="$(ls -t "$CARGO_TARGET_DIR/$(profile_dir "$1")"/build/skillbake-example-agent-*/out/skillbake_registry.rs 2>/dev/null | head -n 1)"
    [ -n "$out" ] || { echo 0; return; }
    out="$(dirname "$out")"
    cat "$out"/skillbake_text*.txt "$out/skillbake_data.bin" | wc -c
}

field() { grep -F "$1" "$2" | head -n 1 | sed 's/.*: //'; }

# "h:mm:ss" or "m:ss.cc" → seconds.
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.1f", s }' <<<"$1"; }

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

generate() {
    python3 - "$1" "$2" <<'PY'
import json, math, os, random, sys

root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(n)
words = ("agent skill pack report table column value result check step file user answer data "
         "summary source format error retry limit schema field input output script reference "
         "metric total average median range filter group sort query context tool prompt").split()

def text(size):
    """Markdown of about `size` bytes: headings and paragraphs on long lines (few lines)."""
    out, section = [], 0
    while sum(len(p) + 2 for p in out) < size:
        if len(out) % 6 == 0:
            section += 1
            out.append("## Section %d" % section)
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(40, 70))) + ".")
    return "\n\n".join(out)[:size].rstrip() + "\n"

total = files = 0
for i in range(n):
    name = "pack-%05d" % i
    d = os.path.join(root, "group-%02d" % (i % 100), name)
    os.makedirs(os.path.join(d, "scripts"))
    body = text(int(math.exp(rng.uniform(math.log(1024), math.log(50 * 1024)))))
    pack = {
        "SKILL.md": "---\nname: %s\ndescription: Generated pack %d. Use when measuring build cost.\n"
                    "version: \"1.0.%d\"\ntags: [bench, generated]\n"
                    "required_tools: [load_skill, execute_skill_script_file]\n---\n# %s\n\n%s"
                    % (name, i, i, name, body),
        "schema.json": json.dumps({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"input": {"type": "string", "minLength": 1},
                           "limit": {"type": "integer", "minimum": 1, "default": 10}},
            "required": ["input"], "additionalProperties": False}, indent=2) + "\n",
        "scripts/run.py": "#!/usr/bin/env python3\n\"\"\"Pack %d.\"\"\"\nimport sys\n\n" % i
                          + "".join("print(%r)\n" % rng.choice(words) for _ in range(rng.randint(20, 200))),
    }
    if i % 2 == 0:
        os.makedirs(os.path.join(d, "references"))
        pack["references/notes.md"] = "# Notes\n\n" + text(rng.randint(1024, 8 * 1024))
    for rel, content in pack.items():
        data = content.encode()
        with open(os.path.join(d, rel), "wb") as f:
            f.write(data)
        total += len(data)
        files += 1
print(files, total)
PY
}

log "building the dependencies once (profiles: ${profiles[*]}) with the example's own skills"
declare -A baseline
for p in "${profiles[@]}"; do
    build "$p" ""
    baseline[$p]=$(stat -c %s "$(binary "$p")")
done

rows=()
for n in "${counts[@]}"; do
    skills="$work/n$n/skills"
    log "generating $n packs"
    read -r files raw < <(generate "$skills" "$n")
    export SKILLBAKE_SKILLS_DIR="$skills"
    for p in "${profiles[@]}"; do
        log "rebuilding ($p) with $n packs, $(mib "$raw") raw"
        report="$work/time-$n-$p.txt"
        build "$p" "$report"
        wall=$(seconds "$(field "Elapsed (wall clock) time" "$report")")
        cpu=$(awk -v u="$(field "User time (seconds)" "$report")" -v s="$(field "System time (seconds)" "$report")" 'BEGIN { printf "%.1f", u + s }')
        rss_kib=$(field "Maximum resident set size (kbytes)" "$report")
        size=$(stat -c %s "$(binary "$p")")
        generated=$(generated_bytes "$p")
        growth=$((size - baseline[$p]))
        ratio=$(awk -v g="$growth" -v r="$raw" 'BEGIN { printf "%.2f", g / r }')
        rows+=("| $n | $p | $files | $(mib "$raw") | $(mib "$generated") | ${wall} s | ${cpu} s | $(mib $((rss_kib * 1024))) | $(mib "$size") | $(mib "$growth") | ${ratio}× |")
    done
    unset SKILLBAKE_SKILLS_DIR
    rm -rf "$work/n$n"
done

echo "| packs | profile | files | raw bytes of the packs | generated registry data | rebuild wall time | rebuild CPU (user+sys) | peak RSS | binary size | binary growth | growth / raw |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for r in "${rows[@]}"; do
    echo "$r"
done
echo
for p in "${profiles[@]}"; do
    echo "Baseline $p binary (the example's 2 packs): $(mib "${baseline[$p]}")."
done
echo "$(rustc --version), $(nproc) CPUs, $(uname -sm)."
