"""Drives `skillbake lsp` over stdio with pygls's language client, as an editor would.

    python client.py SKILLBAKE PACK_DIR

PACK_DIR holds a SKILL.md that checks clean on disk; every edit here lives in the client's
buffer only, never saved. Prints a JSON transcript of what the server answered; exits non-zero
(with the reason on stderr) when an answer is not what an editor needs.
"""

import asyncio
import json
import pathlib
import sys

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
        while True:
            p = await asyncio.wait_for(self.published.get(), WAIT)
            if p.uri == uri:
                return p.diagnostics


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


async def main(server, pack):
    skill_md = pathlib.Path(pack) / "SKILL.md"
    uri = skill_md.resolve().as_uri()
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

    await asyncio.wait_for(client.shutdown_async(None), WAIT)
    client.exit(None)
    await asyncio.wait_for(client.stop(), WAIT)
    print(json.dumps(transcript, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
