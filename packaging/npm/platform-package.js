#!/usr/bin/env node
// Writes one per-platform npm package of skillbake (the prebuilt binary and its package.json)
// into a folder, ready for `npm pack` or `npm publish`. `cargo xtask dist` and the release
// workflow both use it, so the packages they make have one layout.
//
//   node platform-package.js BINARY OS CPU LIBC VERSION OUT_DIR
//
// OS and CPU are Node's `process.platform` and `process.arch` names (linux, darwin, win32; x64,
// arm64); LIBC is `gnu`, `musl`, or `-` for none (macOS, Windows).
"use strict";

const fs = require("fs");
const path = require("path");

function main(argv) {
  if (argv.length !== 6) {
    process.stderr.write("usage: platform-package.js BINARY OS CPU LIBC VERSION OUT_DIR\n");
    return 2;
  }
  const [binary, os, cpu, libc, version, out] = argv;
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    process.stderr.write(`platform-package.js: \`${version}\` is not a semantic version\n`);
    return 2;
  }
  const suffix = libc === "-" ? "" : `-${libc}`;
  const name = `@skillbake/cli-${os}-${cpu}${suffix}`;
  const exe = os === "win32" ? "skillbake.exe" : "skillbake";
  const manifest = {
    name,
    version,
    description: `The skillbake command for ${os} ${cpu}${libc === "-" ? "" : ` (${libc} libc)`}; installed by the \`skillbake\` package`,
    license: "MIT OR Apache-2.0",
    repository: { type: "git", url: "git+https://github.com/skillbake/skillbake.git" },
    os: [os],
    cpu: [cpu],
  };
  if (libc !== "-") {
    manifest.libc = [libc === "gnu" ? "glibc" : libc];
  }
  manifest.files = [`bin/${exe}`, "README.md"];
  manifest.preferUnplugged = true;
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(path.join(out, "bin"), { recursive: true });
  fs.copyFileSync(binary, path.join(out, "bin", exe));
  fs.chmodSync(path.join(out, "bin", exe), 0o755);
  fs.writeFileSync(path.join(out, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  fs.writeFileSync(
    path.join(out, "README.md"),
    `# ${name}\n\nThe prebuilt \`skillbake\` binary for ${os} ${cpu}. Install \`skillbake\` ` +
      "instead: it selects this package as an optional dependency on this platform.\n\n" +
      "https://github.com/skillbake/skillbake\n"
  );
  process.stdout.write(`${name}@${version} -> ${out}\n`);
  return 0;
}

process.exit(main(process.argv.slice(2)));
