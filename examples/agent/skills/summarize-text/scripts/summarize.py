#!/usr/bin/env python3
"""Extractive summary of a text: the highest-scoring sentences, in their original order.

Usage:
    python3 scripts/summarize.py --path notes.txt --sentences 3
    python3 scripts/summarize.py --text "One. Two. Three." --sentences 1 --format markdown

Standard library only. Prints one JSON object ({"ok": true, ...}); on error
{"ok": false, "error": {"code", "message"}} and exit code 1.
"""

import argparse
import json
import re
import sys
from collections import Counter

STOP_WORDS = set(
    "a an and are as at be but by for from has have he her his i if in into is it its "
    "of on or our she so than that the their them then there these they this to was we "
    "were what when which who will with you your".split()
)
SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
WORD_RE = re.compile(r"[A-Za-z0-9']+")
WORDS_PER_MINUTE = 230


class CliError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def split_sentences(text):
    text = re.sub(r"\s+", " ", text).strip()
    return [s for s in SENTENCE_RE.split(text) if s]


def summarize(text, count):
    sentences = split_sentences(text)
    if not sentences:
        raise CliError("EMPTY_TEXT", "the text has no sentences")
    words = [w.lower() for w in WORD_RE.findall(text)]
    freq = Counter(w for w in words if w not in STOP_WORDS)
    top = max(freq.values()) if freq else 1

    def score(sentence):
        content = [w.lower() for w in WORD_RE.findall(sentence) if w.lower() not in STOP_WORDS]
        if not content:
            return 0.0
        return sum(freq[w] / top for w in content) / len(content) ** 0.5

    ranked = sorted(range(len(sentences)), key=lambda i: (-score(sentences[i]), i))
    keep = sorted(ranked[:count])
    return {
        "ok": True,
        "summary": [sentences[i] for i in keep],
        "stats": {
            "words": len(words),
            "sentences": len(sentences),
            "kept": len(keep),
            "reading_minutes": round(len(words) / WORDS_PER_MINUTE, 1),
        },
    }


def to_markdown(result):
    lines = ["- " + s for s in result["summary"]]
    st = result["stats"]
    lines.append("")
    lines.append(
        "_{words} words, {sentences} sentences, about {reading_minutes} min to read._".format(**st)
    )
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--path")
    source.add_argument("--text")
    parser.add_argument("--sentences", type=int, default=3)
    parser.add_argument("--format", choices=["json", "markdown"], default="json")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        if e.code == 0:  # --help
            raise
        raise CliError("BAD_ARGS", "see --help for the options")
    if not 1 <= args.sentences <= 20:
        raise CliError("BAD_ARGS", "--sentences must be between 1 and 20")
    if args.path is not None:
        try:
            with open(args.path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise CliError("FILE_NOT_FOUND", "no such file: " + args.path)
    else:
        text = args.text
    result = summarize(text, args.sentences)
    if args.format == "markdown":
        print(to_markdown(result))
    else:
        print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except CliError as e:
        print(json.dumps({"ok": False, "error": {"code": e.code, "message": str(e)}}))
        sys.exit(1)
