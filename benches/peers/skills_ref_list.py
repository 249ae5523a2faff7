"""The PyPI reference validator (`skills-ref`, command `agentskills`) over many packs in one
Python process: `skills_ref.validate(dir)` on every pack folder of a list.

    python skills_ref_list.py LIST_FILE

LIST_FILE names one pack folder a line. Prints how many packs and problems it saw; exits 0
either way (invalid packs are expected in a real corpus).
"""

import sys
from pathlib import Path


def main(argv):
    if len(argv) != 1:
        print("usage: python skills_ref_list.py LIST_FILE", file=sys.stderr)
        return 2
    from skills_ref import validate

    packs = [l.strip() for l in Path(argv[0]).read_text().splitlines() if l.strip()]
    problems = 0
    for pack in packs:
        problems += len(validate(Path(pack)))
    print(f"checked {len(packs)} packs: {problems} problems")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
