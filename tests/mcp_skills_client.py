"""A host of the MCP Skills extension built on the official MCP Python SDK (pinned in
tests/mcp-requirements.txt), driving `skillbake serve` over stdio or Streamable HTTP.

    python tests/mcp_skills_client.py stdio BINARY [SERVE ARGS...]
    python tests/mcp_skills_client.py http URL

The SDK has no typed methods for the extension, so `skills/list`, `skills/get` and
`resources/directory/read` go through `ClientSession.send_request` as generic requests;
`resources/read` is the SDK's own `read_resource`. The client checks that the server declares
the extension, walks every `skills/list` page, gets every skill, reads every folder of every
skill down to its files, reads every file and verifies its SHA-256 and size against the
entry's manifest, reads a SKILL.md with its skill's name in upper case, and sends the requests
the server must refuse with `-32602`. Any mismatch ends it with an error naming the URI;
otherwise it prints one JSON summary on stdout.
"""

import asyncio
import base64
import hashlib
import json
import sys
from typing import Any

import httpx2
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

EXTENSION = "io.modelcontextprotocol/skills"
DIRECTORY = "inode/directory"
INVALID_PARAMS = -32602
# Every request is answered within this, however busy the machine.
TIMEOUT_S = 60
# More pages than this means the cursor never ends.
MAX_PAGES = 10_000

ANY = TypeAdapter(dict[str, Any])


class Mismatch(Exception):
    """What the server answered differs from what the extension promises."""


def check(ok: bool, what: str) -> None:
    if not ok:
        raise Mismatch(what)


async def raw(session: ClientSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request of the extension, sent as a generic request of the SDK."""
    request = types.Request[dict[str, Any], str](method=method, params=params)
    return await session.send_request(request, ANY)


async def refused(session: ClientSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request the server must refuse with invalid params: its code and message."""
    try:
        answer = await raw(session, method, params)
    except MCPError as e:
        check(e.code == INVALID_PARAMS, f"{method} {params}: error {e.code} {e.message!r}, expected {INVALID_PARAMS}")
        check(bool(e.message), f"{method} {params}: the error has no message")
        return {"method": method, "params": params, "code": e.code, "message": e.message}
    raise Mismatch(f"{method} {params}: answered {answer!r}, expected error {INVALID_PARAMS}")


def skill_root(entry: dict[str, Any]) -> str:
    uri = entry["uri"]
    check(uri.startswith("skill://") and uri.endswith("/SKILL.md"), f"{uri}: not the URI of a SKILL.md")
    return uri[: -len("/SKILL.md")]


async def list_all(session: ClientSession) -> tuple[list[dict[str, Any]], int]:
    """Every skills/list page, following nextCursor until there is none."""
    entries: list[dict[str, Any]] = []
    cursor = None
    for pages in range(1, MAX_PAGES + 1):
        page = await raw(session, "skills/list", {} if cursor is None else {"cursor": cursor})
        check(page.get("resultType", "complete") == "complete", f"skills/list: resultType {page.get('resultType')!r}")
        check(isinstance(page.get("ttlMs"), int) and page["ttlMs"] > 0, f"skills/list: ttlMs {page.get('ttlMs')!r}")
        check(page.get("cacheScope") in ("public", "private"), f"skills/list: cacheScope {page.get('cacheScope')!r}")
        check(isinstance(page.get("skills"), list), "skills/list: no skills array")
        entries.extend(page["skills"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries, pages
        check(bool(page["skills"]), f"skills/list: an empty page with nextCursor {cursor!r}")
    raise Mismatch(f"skills/list: still a nextCursor after {MAX_PAGES} pages")


async def walk(session: ClientSession, uri: str, out: dict[str, dict[str, Any]]) -> int:
    """Reads the folder at `uri` and every folder below it; its files go to `out` by URI.
    Returns the number of folders read."""
    listing = await raw(session, "resources/directory/read", {"uri": uri})
    check("nextCursor" not in listing, f"{uri}: a folder listing with a cursor")
    folders = 1
    children = listing.get("resources")
    check(isinstance(children, list) and bool(children), f"{uri}: an empty or missing folder listing")
    for child in children:
        check(child["uri"] == f"{uri}/{child['uri'].rsplit('/', 1)[-1]}", f"{child['uri']}: not a direct child of {uri}")
        if child.get("mimeType") == DIRECTORY:
            folders += await walk(session, child["uri"], out)
        else:
            check(child["uri"] not in out, f"{child['uri']}: listed twice")
            out[child["uri"]] = child
    return folders


async def verify(session: ClientSession, entry: dict[str, Any]) -> dict[str, int]:
    """skills/get, the folder walk and a read of every file of one skill, against its manifest."""
    root = skill_root(entry)
    name = root.rsplit("/", 1)[-1]
    check(entry["frontmatter"].get("name") == name, f"{entry['uri']}: frontmatter name {entry['frontmatter'].get('name')!r}, the skill path ends in {name!r}")
    got = await raw(session, "skills/get", {"uri": entry["uri"]})
    check(got.get("skill") == entry, f"{entry['uri']}: skills/get answered {got!r}, skills/list {entry!r}")
    manifest = {r["uri"]: r for r in entry["resources"]}
    check(len(manifest) == len(entry["resources"]), f"{entry['uri']}: a file twice in the manifest")
    check(entry["uri"] in manifest, f"{entry['uri']}: SKILL.md is not in its own manifest")
    listed: dict[str, dict[str, Any]] = {}
    folders = await walk(session, root, listed)
    check(sorted(listed) == sorted(manifest), f"{root}: the folders hold {sorted(listed)}, the manifest lists {sorted(manifest)}")
    size = 0
    for uri, described in manifest.items():
        digest = described["digest"]
        check(digest.startswith("sha256:") and len(digest) == 71, f"{uri}: digest {digest!r}")
        read = await session.read_resource(uri)
        check(len(read.contents) == 1, f"{uri}: {len(read.contents)} contents")
        contents = read.contents[0]
        check(str(contents.uri) == uri, f"{uri}: resources/read answered {contents.uri}")
        if isinstance(contents, types.BlobResourceContents):
            data = base64.b64decode(contents.blob, validate=True)
        else:
            data = contents.text.encode("utf-8")
        check(len(data) == described["size"], f"{uri}: read {len(data)} bytes, the manifest says {described['size']}")
        check(len(data) == listed[uri].get("size"), f"{uri}: read {len(data)} bytes, its folder says {listed[uri].get('size')}")
        check("sha256:" + hashlib.sha256(data).hexdigest() == digest, f"{uri}: the bytes read do not hash to {digest}")
        check(contents.mime_type == listed[uri].get("mimeType"), f"{uri}: read as {contents.mime_type}, listed as {listed[uri].get('mimeType')}")
        size += len(data)
    return {"files": len(manifest), "bytes": size, "directories": folders}


async def session_run(session: ClientSession) -> dict[str, Any]:
    init = await session.initialize()
    caps = init.capabilities
    check(caps.resources is not None, "the server does not declare resources")
    extensions = caps.extensions or {}
    check(EXTENSION in extensions, f"the server declares extensions {sorted(extensions)}, not {EXTENSION}")
    check(extensions[EXTENSION].get("directoryRead") is True, f"{EXTENSION}: {extensions[EXTENSION]}")

    entries, pages = await list_all(session)
    check(bool(entries), "skills/list lists no skill")
    uris = [e["uri"] for e in entries]
    check(len(set(uris)) == len(uris), "skills/list lists a skill twice")
    totals = {"skills": len(entries), "files": 0, "bytes": 0, "directories": 0}
    for entry in entries:
        for k, v in (await verify(session, entry)).items():
            totals[k] += v

    first = entries[0]
    root = skill_root(first)
    other = next((r["uri"] for r in first["resources"] if r["uri"] != first["uri"]), root)
    # Letter case: a read folds the name (and answers under the URI asked); skills/get does not.
    name = root.rsplit("/", 1)[-1]
    shouted = root[: -len(name)] + name.upper() + "/SKILL.md"
    canonical = (await session.read_resource(first["uri"])).contents[0]
    folded = (await session.read_resource(shouted)).contents[0]
    check(str(folded.uri) == shouted, f"{shouted}: answered as {folded.uri}")
    check(
        (folded.mime_type, getattr(folded, "text", None)) == (canonical.mime_type, getattr(canonical, "text", None)),
        f"{shouted}: read other contents than {first['uri']}",
    )
    errors = [
        await refused(session, "skills/get", {"uri": other}),
        await refused(session, "skills/get", {"uri": shouted}),
        await refused(session, "skills/get", {"uri": "skill://no-such-skill/SKILL.md"}),
        await refused(session, "resources/directory/read", {"uri": first["uri"]}),
        await refused(session, "resources/directory/read", {"uri": root + "/no-such-folder"}),
        await refused(session, "resources/directory/read", {"uri": root + "/"}),
        await refused(session, "skills/list", {"cursor": "not-a-cursor"}),
    ]
    return {
        "extension": {EXTENSION: extensions[EXTENSION]},
        "pages": pages,
        **totals,
        "skill_uris": uris,
        "errors": errors,
    }


async def over_stdio(binary: str, args: list[str]) -> dict[str, Any]:
    server = StdioServerParameters(command=binary, args=["serve", *args])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=TIMEOUT_S) as session:
            return await session_run(session)


async def over_http(url: str) -> dict[str, Any]:
    async with httpx2.AsyncClient(timeout=TIMEOUT_S) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT_S) as session:
                return await session_run(session)


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "stdio":
        summary = asyncio.run(over_stdio(sys.argv[2], sys.argv[3:]))
    elif len(sys.argv) == 3 and sys.argv[1] == "http":
        summary = asyncio.run(over_http(sys.argv[2]))
    else:
        sys.exit(__doc__)
    print(json.dumps({"transport": sys.argv[1], **summary}, indent=2, sort_keys=True))


def mismatches(e: BaseException) -> list[Mismatch]:
    """The mismatches in `e`, however deep the SDK's task groups wrapped them."""
    if isinstance(e, Mismatch):
        return [e]
    if isinstance(e, BaseExceptionGroup):
        return [m for inner in e.exceptions for m in mismatches(inner)]
    return []


if __name__ == "__main__":
    try:
        main()
    except BaseException as e:
        found = mismatches(e)
        if not found:
            raise
        sys.exit("\n".join(f"mcp_skills_client: {m}" for m in found))
