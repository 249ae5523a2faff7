// The npm `skills-ref` validator over many packs in one Node process, as a CI job that
// validates a folder of packs would call it: `validate(dir)` on every pack listed.
//
//     node skills_ref_npm.mjs MODULE_DIR LIST_FILE
//
// MODULE_DIR is the installed package (`node_modules/skills-ref`); LIST_FILE names one pack
// folder a line. Prints how many packs and problems it saw; exits 0 either way (invalid packs
// are expected in a real corpus).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [moduleDir, listFile] = process.argv.slice(2);
if (!moduleDir || !listFile) {
  console.error("usage: node skills_ref_npm.mjs MODULE_DIR LIST_FILE");
  process.exit(2);
}
const { validate } = await import(pathToFileURL(join(moduleDir, "dist/index.js")).href);
const packs = readFileSync(listFile, "utf8").split("\n").filter((l) => l.trim() !== "");
let problems = 0;
for (const pack of packs) {
  problems += (await validate(pack)).length;
}
console.log(`checked ${packs.length} packs: ${problems} problems`);
