// The MCP Skills extension's own host SDK (`SkillsClient` of `@modelcontextprotocol/client`)
// against `skillbake serve`: lists every skill (every page), gets each one, reads and verifies
// every file of every entry (size, digest and, for SKILL.md, the frontmatter, all checked by
// the SDK itself), reads every folder down from each skill's root and compares what it finds
// with the entry, and checks that the error cases are `-32602`.
//
// Usage: node check.mjs stdio BINARY [ARGS...] | node check.mjs http URL
// Prints one JSON line per step; exits 1 on the first failure.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SkillsClient, DIRECTORY_MIME_TYPE } from '@modelcontextprotocol/client/ext/skills';
import { z } from 'zod';

const [mode, target, ...rest] = process.argv.slice(2);
const say = (step, detail) => console.log(JSON.stringify({ step, ...detail }));
const fail = (message) => {
  console.log(JSON.stringify({ step: 'failed', message }));
  process.exit(1);
};

const transport =
  mode === 'stdio'
    ? new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: 'skills-check', version: '1.0.0' });
await client.connect(transport);
const skills = new SkillsClient(client);
if (!skills.supported || !skills.directoryRead) {
  fail(`the server does not declare the extension with directoryRead: ${JSON.stringify(client.getServerCapabilities())}`);
}
say('connected', { server: client.getServerVersion(), capabilities: client.getServerCapabilities() });

// Every page, the SDK refusing any invalid entry.
const listing = await skills.list();
if (listing.skills.length === 0) fail('skills/list listed no skill');
say('listed', { skills: listing.skills.map((s) => s.uri), ttlMs: listing.ttlMs, cacheScope: listing.cacheScope });

// Pages one at a time add up to the listing.
const paged = [];
let cursor;
for (let page = 0; ; page++) {
  if (page > listing.skills.length) fail('skills/list pages never end');
  const one = await skills.list(cursor === undefined ? {} : { cursor });
  paged.push(...one.skills.map((s) => s.uri));
  if (one.nextCursor === undefined) break;
  cursor = one.nextCursor;
}
if (JSON.stringify(paged) !== JSON.stringify(listing.skills.map((s) => s.uri))) {
  fail(`paging by hand listed ${JSON.stringify(paged)}`);
}

let files = 0;
let bytes = 0;
let folders = 0;
for (const entry of listing.skills) {
  const got = await skills.get(entry.uri);
  if (JSON.stringify(got.skill) !== JSON.stringify(entry)) {
    fail(`skills/get ${entry.uri} differs from its skills/list entry`);
  }
  for (const resource of entry.resources) {
    const file = await skills.read(entry, resource.uri);
    if (!file.verified) fail(`${resource.uri} was not verified`);
    files += 1;
    bytes += file.bytes.byteLength;
  }
  // SKILL.md once more by default reference: the SDK compares its frontmatter with the entry's.
  const skillMd = await skills.read(entry);
  if (skillMd.frontmatter === undefined) fail(`${entry.uri}: no frontmatter compared`);

  // Every folder down from the root: the files found are exactly the entry's.
  const root = entry.uri.slice(0, -'/SKILL.md'.length);
  const found = [];
  const walk = async (uri, depth) => {
    if (depth > 32) fail(`${uri}: folders nest too deep`);
    const { resources } = await skills.readDirectory(uri);
    folders += 1;
    for (const child of resources) {
      if (child.mimeType === DIRECTORY_MIME_TYPE) await walk(child.uri, depth + 1);
      else found.push(`${child.uri} ${child.size}`);
    }
  };
  await walk(root, 0);
  const manifest = entry.resources.map((r) => `${r.uri} ${r.size}`);
  if (JSON.stringify(found.toSorted()) !== JSON.stringify(manifest.toSorted())) {
    fail(`${root}: folders hold ${JSON.stringify(found)}, the entry lists ${JSON.stringify(manifest)}`);
  }
  say('verified', { skill: entry.uri, files: entry.resources.length });
}

// The error cases: each must be a JSON-RPC error -32602.
const first = listing.skills[0];
const root = first.uri.slice(0, -'/SKILL.md'.length);
const errors = [
  ['skills/get of a URI that is no skill', () => skills.get(`${root}-no-such-skill/SKILL.md`)],
  ['skills/get of a file that is not SKILL.md', () => skills.get(first.resources.at(-1).uri)],
  ['skills/get of a SKILL.md in a missing folder', () => skills.get(`${root}/no-such-folder/SKILL.md`)],
  ['resources/directory/read of a file', () => skills.readDirectory(first.uri)],
  ['resources/directory/read of a missing folder', () => skills.readDirectory(`${root}/no-such-folder`)],
  ['skills/list with a cursor the server never gave', () => skills.list({ cursor: 'not-a-cursor' })],
  ['skills/get without a uri', () => client.request({ method: 'skills/get', params: {} }, z.object({}).passthrough())],
  ['resources/directory/read with a number for a uri', () => client.request({ method: 'resources/directory/read', params: { uri: 7 } }, z.object({}).passthrough())],
];
for (const [what, call] of errors) {
  let code;
  try {
    await call();
  } catch (error) {
    code = error.code;
    say('refused', { what, code, message: error.message });
  }
  if (code !== -32602) fail(`${what}: expected error -32602, got ${code === undefined ? 'a result' : code}`);
}

say('done', { skills: listing.skills.length, files, bytes, folders });
await client.close();
