#!/bin/sh
# Builds the seed corpora from the repository's packs: every SKILL.md under tests/fixtures and
# skills/ goes to corpus/skill_md/; for check_pack, each SKILL.md is followed by a NUL byte and
# its pack's schema.json when the pack has one. Run from anywhere; safe to re-run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
md_dir="$here/corpus/skill_md"
pack_dir="$here/corpus/check_pack"
mkdir -p "$md_dir" "$pack_dir"

find "$repo/tests/fixtures" "$repo/skills" -type f -name SKILL.md | sort | while IFS= read -r f; do
    rel=${f#"$repo"/}
    # One flat, stable file name per source path.
    name=$(printf '%s' "$rel" | tr '/' '_')
    cp "$f" "$md_dir/$name"
    schema="$(dirname "$f")/schema.json"
    if [ -f "$schema" ]; then
        { cat "$f"; printf '\000'; cat "$schema"; } > "$pack_dir/$name"
    else
        cp "$f" "$pack_dir/$name"
    fi
done
count=$(find "$md_dir" -type f | wc -l)
echo "seeded $count files into corpus/skill_md and corpus/check_pack"
