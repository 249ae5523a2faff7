// The client of `cargo xtask bench skills`: the official MCP client SDK
// (`@modelcontextprotocol/client`) starts one server over stdio, lists every skill once (not
// timed), then times REQUESTS calls of each method one after another, each waiting for its
// answer: `skills/list` (the pages in turn), `skills/get` (the skills in a fixed scattered
// order) and `resources/read` (the files of those skills in turn). The same requests, in the
// same order, for every server. Then it times whole walks of the listing (every page in turn,
// as a host builds its catalog): REQUESTS / pages walks, at least 10.
//
// Usage: node bench.mjs REQUESTS COMMAND [ARGS...]
// Prints one JSON object: the start-up time (spawn to the first `skills/list` answer), how many
// skills and pages, and every latency in microseconds per method (`skills/list walk`: per walk).

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';

const [requestsArg, command, ...args] = process.argv.slice(2);
const requests = Number(requestsArg);
if (!Number.isInteger(requests) || requests < 1 || !command) {
  console.error('usage: node bench.mjs REQUESTS COMMAND [ARGS...]');
  process.exit(2);
}
const any = z.object({}).passthrough();
const started = process.hrtime.bigint();
const client = new Client({ name: 'skills-bench', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args, stderr: 'inherit' }));
const call = (method, params) => client.request({ method, params }, any);

// The whole listing, page by page: the cursors and the skills.
const cursors = [undefined];
const skills = [];
for (;;) {
  const page = await call('skills/list', cursors.at(-1) === undefined ? {} : { cursor: cursors.at(-1) });
  if (skills.length === 0) {
    var startupUs = Number(process.hrtime.bigint() - started) / 1000;
  }
  skills.push(...page.skills);
  if (page.nextCursor === undefined) break;
  if (cursors.length > skills.length + 1) throw new Error('skills/list pages never end');
  cursors.push(page.nextCursor);
}
if (skills.length === 0) throw new Error('skills/list listed no skill');

// A fixed scattered order over the skills (a stride prime to their count).
let stride = Math.max(1, Math.floor(skills.length * 0.618));
const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
while (gcd(stride, skills.length) !== 1) stride += 1;
const pick = (i) => skills[(i * stride) % skills.length];

const time = async (n, request) => {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const answer = await request(i);
    out.push(Number(process.hrtime.bigint() - t) / 1000);
    if (answer === undefined) throw new Error('no answer');
  }
  return out;
};
const list = (i) => call('skills/list', cursors[i % cursors.length] === undefined ? {} : { cursor: cursors[i % cursors.length] });
const walk = async () => {
  let listed = 0;
  for (const cursor of cursors) {
    listed += (await call('skills/list', cursor === undefined ? {} : { cursor })).skills.length;
  }
  if (listed !== skills.length) throw new Error(`a walk listed ${listed} skills, not ${skills.length}`);
  return listed;
};
const walks = Math.max(10, Math.ceil(requests / cursors.length));
const get = (i) => call('skills/get', { uri: pick(i).uri });
const read = async (i) => {
  const entry = pick(i);
  const file = entry.resources[Math.floor(i / skills.length) % entry.resources.length] ?? { uri: entry.uri };
  const answer = await call('resources/read', { uri: file.uri });
  const content = answer.contents?.[0];
  if (content === undefined || (content.text === undefined && content.blob === undefined)) {
    throw new Error(`resources/read ${file.uri} answered no content`);
  }
  return answer;
};
// Warm-up (JIT, caches), then the measured calls.
const warmup = Math.min(50, requests);
await time(warmup, list);
await time(warmup, get);
await time(warmup, read);
await time(Math.min(warmup, walks), walk);
const latencies = {
  'skills/list': await time(requests, list),
  'skills/get': await time(requests, get),
  'resources/read': await time(requests, read),
  'skills/list walk': await time(walks, walk),
};
await client.close();
console.log(JSON.stringify({ startupUs, skills: skills.length, pages: cursors.length, latencies }));
