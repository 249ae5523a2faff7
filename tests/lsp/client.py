"""Drives `skillbake lsp` over stdio with pygls's language client, as an editor would.

    python client.py SKILLBAKE SCENARIO DIR

SCENARIO is `skill-md` (DIR is a pack whose SKILL.md checks clean on disk), `schema-json` or
`skillbake-toml` (DIR is a skills folder holding the pack `report-digest`, clean on disk, and
for `skillbake-toml` a clean `skillbake.toml`). Every edit here lives in the client's buffers
only, never saved. In `schema-json` and `skillbake-toml`, after every edit the buffers are also
written into a copy of DIR and `skillbake check --format json` run on it: the server must have
published what `check` says once they are saved (codes, severities, lines, columns, messages and
help). Prints a JSON transcript of what the server answered; exits non-zero (with the reason on
stderr) when an answer is not what an editor needs.
"""

import asyncio
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

from lsprotocol import types
from pygls.lsp.client import LanguageClient

WAIT = 60  # seconds for one answer of the server; it answers at once


def utf16(s):
    return len(s.encode("utf-16-le")) // 2


def apply_edits(text, edits):
    """Applies LSP text edits (UTF-16 positions) to `text`."""
    lines = text.split("\n")

    def offset(pos):
        before = sum(len(l) + 1 for l in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return before + i
            units += utf16(ch)
        return before + len(line)

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


class Client(LanguageClient):
    def __init__(self):
        super().__init__("skillbake-lsp-check", "1")
        self.published = asyncio.Queue()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(ls, params):
            self.published.put_nowait(params)

    async def diagnostics_for(self, uri):
        return (await self.diagnostics_of([uri]))[uri]

    async def diagnostics_of(self, uris):
        """The next publication for each of `uris` (the server publishes them in one go after a
        change); publications for other documents are passed over."""
        got = {}
        while len(got) < len(uris):
            p = await asyncio.wait_for(self.published.get(), WAIT)
            if p.uri in uris:
                got[p.uri] = p.diagnostics
        return got


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def diag_json(d):
    return {
        "code": d.code,
        "severity": int(d.severity),
        "range": [d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character],
        "message": d.message,
    }


async def skill_md(client, server, pack, transcript):
    """A broken SKILL.md, its fix as a code action; a misspelt key and its rename; hover and
    completion."""
    skill_md = pathlib.Path(pack) / "SKILL.md"
    uri = skill_md.resolve().as_uri()
    # 1. A value with `: ` after characters that take two UTF-16 units each.
    name = skill_md.parent.name
    line = "description: Résumés 📄📄 of reports. Use when: the user asks"
    text = f"---\nname: {name}\n{line}\n---\n\n# {name}\n\nSummarise the report.\n"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
        )
    )
    diags = await client.diagnostics_for(uri)
    transcript.append({"opened": [diag_json(d) for d in diags]})
    if len(diags) != 1 or diags[0].code != "yaml-syntax":
        fail(f"expected one yaml-syntax diagnostic, got {diags}")
    col = utf16(line[: line.index(": the user")])
    want = types.Range(types.Position(2, col), types.Position(2, col + 1))
    if diags[0].range != want:
        fail(f"the diagnostic is at {diags[0].range}, not {want}")

    # 2. Its fix, as a code action, applied to the buffer.
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diags[0].range,
                context=types.CodeActionContext(diagnostics=diags),
            )
        ),
        WAIT,
    )
    if not actions:
        fail("no code action for the diagnostic")
    action = actions[0]
    transcript.append({"action": action.title, "kind": action.kind})
    text = apply_edits(text, action.edit.changes[uri])
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    diags = await client.diagnostics_for(uri)
    transcript.append({"after_fix": [diag_json(d) for d in diags], "line": text.split("\n")[2]})
    if diags:
        fail(f"diagnostics left after the fix: {diags}")

    # 3. A misspelt key: the warning, and the rename.
    text = text.replace("description:", "descripton:")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    diags = await client.diagnostics_for(uri)
    transcript.append({"misspelt": [diag_json(d) for d in diags]})
    typo = [d for d in diags if d.code == "unknown-key"]
    if not typo:
        fail(f"no unknown-key diagnostic: {diags}")
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=typo[0].range,
                context=types.CodeActionContext(diagnostics=typo),
            )
        ),
        WAIT,
    )
    transcript.append({"actions": [a.title for a in actions]})
    text = apply_edits(text, actions[0].edit.changes[uri])
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=4),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    diags = await client.diagnostics_for(uri)
    transcript.append({"after_rename": [diag_json(d) for d in diags]})
    if diags:
        fail(f"diagnostics left after the rename: {diags}")

    # 4. Hover on a key, completion of keys and of permission names.
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(2, 3))
        ),
        WAIT,
    )
    transcript.append({"hover": hover.contents.value})
    text = text.replace("---\n\n", "per\n---\n\n", 1)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=5),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    await client.diagnostics_for(uri)
    keys = await asyncio.wait_for(
        client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(3, 3))
        ),
        WAIT,
    )
    labels = [i.label for i in keys]
    transcript.append({"key_completions": len(labels), "has": [l for l in ["permission", "version", "name"] if l in labels]})
    text = text.replace("per\n---", "permission:\n  - \n---", 1)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=6),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    await client.diagnostics_for(uri)
    perms = await asyncio.wait_for(
        client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(4, 4))
        ),
        WAIT,
    )
    transcript.append({"permission_completions": [i.label for i in perms]})



class Buffers:
    """The documents open in the client, by path, and what `check` says of them once saved."""

    def __init__(self, client, server, root):
        self.client = client
        self.server = server
        self.root = pathlib.Path(root).resolve()
        self.texts = {}
        self.versions = {}

    def uri(self, rel):
        return (self.root / rel).as_uri()

    def open(self, rel, language, text):
        self.texts[rel] = text
        self.versions[rel] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri(rel), language_id=language, version=1, text=text
                )
            )
        )

    def change(self, rel, text):
        self.texts[rel] = text
        self.versions[rel] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri(rel), version=self.versions[rel]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def close(self, rel):
        del self.texts[rel]
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=self.uri(rel)))
        )

    async def published(self, rels):
        """The next diagnostics published for each of `rels`, by path."""
        got = await self.client.diagnostics_of([self.uri(r) for r in rels])
        return {r: got[self.uri(r)] for r in rels}

    def check_saved(self):
        """`skillbake check --format json` on a copy of the folder with the buffers saved into
        it: its diagnostics, by path."""
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp) / self.root.name
            shutil.copytree(self.root, copy)
            for rel, text in self.texts.items():
                (copy / rel).write_text(text, encoding="utf-8")
            run = subprocess.run(
                [self.server, "check", str(copy), "--format", "json"],
                capture_output=True,
                text=True,
                timeout=WAIT,
            )
        if run.returncode not in (0, 1):
            fail(f"skillbake check failed ({run.returncode}): {run.stderr}")
        by_file = {}
        for d in json.loads(run.stdout)["diagnostics"]:
            by_file.setdefault(d["file"], []).append(d)
        return by_file

    def same_as_check(self, published):
        """Fails unless `published` (path → LSP diagnostics) is what `check` says of each path
        once saved."""
        saved = self.check_saved()
        for rel, diags in published.items():
            want = sorted(
                (
                    d["code"],
                    1 if d["severity"] == "error" else 2,
                    d["line"] - 1,
                    d["column"] - 1,
                    d["message"] + (f"\nhelp: {d['help']}" if d.get("help") else "") + (f"\nnote: {d['note']}" if d.get("note") else ""),
                )
                for d in saved.get(rel, [])
            )
            got = sorted(
                (d.code, int(d.severity), d.range.start.line, d.range.start.character, d.message) for d in diags
            )
            if got != want:
                fail(f"{rel}: the server published {got}, check says {want} once saved")


def one(diags, code, start, end, severity=1):
    """Fails unless `diags` is one diagnostic `code` over `start`..`end` ((line, character))."""
    want = types.Range(types.Position(*start), types.Position(*end))
    if len(diags) != 1 or diags[0].code != code:
        fail(f"expected one {code} diagnostic, got {diags}")
    if diags[0].range != want:
        fail(f"the {code} diagnostic is at {diags[0].range}, not {want}")
    if int(diags[0].severity) != severity:
        fail(f"the {code} diagnostic has severity {diags[0].severity}, not {severity}")


def at(text, needle):
    """The (line, UTF-16 character) where `needle` starts in `text`."""
    before = text[: text.index(needle)]
    line = before.count("\n")
    return (line, utf16(before[before.rfind("\n") + 1 :]))


def after(pos, s):
    return (pos[0], pos[1] + utf16(s))


async def nothing_to_offer(client, uri, position, transcript, what):
    """Hover and completion in a document without frontmatter keys: no answer, and no error."""
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
        ),
        WAIT,
    )
    items = await asyncio.wait_for(
        client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
        ),
        WAIT,
    )
    transcript.append({f"{what}_hover": hover, f"{what}_completions": [i.label for i in items]})
    if hover is not None or items:
        fail(f"hover or completion answered in {what}: {hover} {items}")


SKILL = "report-digest/SKILL.md"
SCHEMA = "report-digest/schema.json"
CONFIG = "skillbake.toml"


async def schema_json(client, server, root, transcript):
    """An unsaved schema.json: broken JSON, then a keyword its meta-schema refuses, then fixed."""
    b = Buffers(client, server, root)
    skill = (b.root / SKILL).read_text(encoding="utf-8")
    b.open(SKILL, "markdown", skill)
    got = await b.published([SKILL])
    transcript.append({"skill_opened": [diag_json(d) for d in got[SKILL]]})
    b.same_as_check(got)

    # 1. A trailing comma: `schema-json-syntax` on the brace after it.
    broken = '{\n  "type": "object",\n  "properties": {\n    "path": {"type": "string"},\n  }\n}\n'
    b.open(SCHEMA, "json", broken)
    got = await b.published([SKILL, SCHEMA])
    transcript.append({"trailing_comma": [diag_json(d) for d in got[SCHEMA]]})
    brace = (4, 2)
    one(got[SCHEMA], "schema-json-syntax", brace, after(brace, "}"))
    b.same_as_check(got)

    # 2. Valid JSON, not a valid schema: `schema-invalid` on the value of `type`.
    invalid = '{\n  "type": "object",\n  "properties": {\n    "path": {"type": "strng"}\n  }\n}\n'
    b.change(SCHEMA, invalid)
    got = await b.published([SKILL, SCHEMA])
    transcript.append({"unknown_type": [diag_json(d) for d in got[SCHEMA]]})
    value = at(invalid, '"strng"')
    one(got[SCHEMA], "schema-invalid", value, after(value, '"strng"'))
    b.same_as_check(got)

    # 3. Fixed: nothing left, in either file.
    b.change(SCHEMA, invalid.replace("strng", "string"))
    got = await b.published([SKILL, SCHEMA])
    transcript.append({"fixed": {k: [diag_json(d) for d in v] for k, v in got.items()}})
    if any(got.values()):
        fail(f"diagnostics left after the fix: {got}")
    b.same_as_check(got)
    await nothing_to_offer(client, b.uri(SCHEMA), types.Position(1, 3), transcript, "schema")


async def skillbake_toml(client, server, root, transcript):
    """An unsaved skillbake.toml: a level that changes a pack's diagnostic, a broken value, a
    syntax error (the pack's diagnostics as under no configuration, as `check` does), fixed."""
    b = Buffers(client, server, root)
    skill = (b.root / SKILL).read_text(encoding="utf-8").replace("description:", "autor: me\ndescription:", 1)
    b.open(SKILL, "markdown", skill)
    got = await b.published([SKILL])
    transcript.append({"skill_opened": [diag_json(d) for d in got[SKILL]]})
    key = at(skill, "autor")
    one(got[SKILL], "unknown-key", key, after(key, "autor"), severity=2)
    b.same_as_check(got)

    # 1. `unknown-key = "deny"` in the buffer: the pack's warning is an error.
    deny = '[lints]\nunknown-key = "deny"\n'
    b.open(CONFIG, "toml", deny)
    got = await b.published([CONFIG, SKILL])
    transcript.append({"deny": {k: [diag_json(d) for d in v] for k, v in got.items()}})
    if got[CONFIG]:
        fail(f"diagnostics in a valid skillbake.toml: {got[CONFIG]}")
    one(got[SKILL], "unknown-key", key, after(key, "autor"), severity=1)
    b.same_as_check(got)

    # 2. A level that does not exist: `config-invalid` on it; the configuration does not apply.
    loud = deny + 'body-empty = "loud"\n'
    b.change(CONFIG, loud)
    got = await b.published([CONFIG, SKILL])
    transcript.append({"unknown_level": {k: [diag_json(d) for d in v] for k, v in got.items()}})
    level = at(loud, '"loud"')
    one(got[CONFIG], "config-invalid", level, after(level, '"loud"'))
    one(got[SKILL], "unknown-key", key, after(key, "autor"), severity=2)
    b.same_as_check(got)

    # 3. A TOML syntax error where the `]` is missing: at the end of the line (`check` points
    # at the line break; the protocol's range stops at the line's end).
    unclosed = deny.replace("[lints]", "[lints")
    b.change(CONFIG, unclosed)
    got = await b.published([CONFIG, SKILL])
    transcript.append({"unclosed_table": {k: [diag_json(d) for d in v] for k, v in got.items()}})
    one(got[CONFIG], "config-invalid", (0, 6), (0, 6))
    b.same_as_check(got)

    # 4. Fixed: the level applies again.
    b.change(CONFIG, deny)
    got = await b.published([CONFIG, SKILL])
    transcript.append({"fixed": {k: [diag_json(d) for d in v] for k, v in got.items()}})
    if got[CONFIG]:
        fail(f"diagnostics left in the fixed skillbake.toml: {got[CONFIG]}")
    one(got[SKILL], "unknown-key", key, after(key, "autor"), severity=1)
    b.same_as_check(got)
    await nothing_to_offer(client, b.uri(CONFIG), types.Position(1, 3), transcript, "toml")

    # 5. The key removed from the SKILL.md: nothing left.
    b.change(SKILL, skill.replace("autor: me\n", ""))
    got = await b.published([SKILL])
    transcript.append({"key_removed": [diag_json(d) for d in got[SKILL]]})
    if got[SKILL]:
        fail(f"diagnostics left after removing the key: {got[SKILL]}")
    b.same_as_check(got)

    # 6. Closed unsaved, with the key back: the file on disk applies again (no `deny`), and
    # the server says so for both files.
    b.change(SKILL, skill)
    await b.published([SKILL])
    b.close(CONFIG)
    got = await b.published([CONFIG, SKILL])
    transcript.append({"closed": {k: [diag_json(d) for d in v] for k, v in got.items()}})
    if got[CONFIG]:
        fail(f"diagnostics in the skillbake.toml on disk: {got[CONFIG]}")
    one(got[SKILL], "unknown-key", key, after(key, "autor"), severity=2)
    b.same_as_check(got)


SCENARIOS = {"skill-md": skill_md, "schema-json": schema_json, "skillbake-toml": skillbake_toml}


async def main(server, scenario, root):
    transcript = []
    client = Client()
    await client.start_io(server, "lsp")
    init = await asyncio.wait_for(
        client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None, root_uri=None)
        ),
        WAIT,
    )
    transcript.append({"server": init.server_info.name})
    client.initialized(types.InitializedParams())
    try:
        await SCENARIOS[scenario](client, server, root, transcript)
    finally:
        await asyncio.wait_for(client.shutdown_async(None), WAIT)
        client.exit(None)
        await asyncio.wait_for(client.stop(), WAIT)
    print(json.dumps(transcript, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
