// The peer of `cargo xtask bench skills`: a server built on the official TypeScript MCP SDK
// (`@modelcontextprotocol/server`), serving a folder of skill packs from disk with the SDK's
// own MCP Skills extension (`loadSkills` of `ext/skills/node`, attached to an `McpServer`) over
// stdio. The SDK builds its catalog (reading and hashing every file) at start and reads each
// file from disk, checked against its published digest, on every `resources/read`.
//
// Usage: node server.mjs DIR

import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';

const [dir] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node server.mjs DIR');
  process.exit(2);
}
const skills = await loadSkills(dir, { onWarning: (w) => console.error(`${w.path}: ${w.message}`) });
const mcp = new McpServer({ name: 'sdk-skills-server', version: '1.0.0' });
skills.attach(mcp);
await mcp.connect(new StdioServerTransport());
