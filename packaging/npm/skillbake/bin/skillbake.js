#!/usr/bin/env node
// The `skillbake` command of the npm package: finds the prebuilt binary in the per-platform
// package that npm installed as an optional dependency (nothing is downloaded at install time)
// and runs it with this process's arguments, standard streams and exit status.
"use strict";

const { spawnSync } = require("child_process");
const path = require("path");

// `@skillbake/cli-<os>-<arch>`, with `-gnu` or `-musl` on Linux: the packages the release
// workflow publishes, named after Node's `process.platform` and `process.arch`.
function platformPackage() {
  let name = `@skillbake/cli-${process.platform}-${process.arch}`;
  if (process.platform === "linux") {
    const report = process.report && process.report.getReport();
    const glibc = report && report.header && report.header.glibcVersionRuntime;
    name += glibc ? "-gnu" : "-musl";
  }
  return name;
}

function binaryPath() {
  if (process.env.SKILLBAKE_BINARY) {
    return process.env.SKILLBAKE_BINARY;
  }
  const pkg = platformPackage();
  const exe = process.platform === "win32" ? "skillbake.exe" : "skillbake";
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch (_) {
    process.stderr.write(
      `skillbake: no prebuilt binary for ${process.platform}-${process.arch}: the package ` +
        `${pkg} is not installed.\n` +
        "  npm installs it as an optional dependency of `skillbake`: reinstall without " +
        "`--omit=optional` / `--no-optional`.\n" +
        "  If your platform has no package, `pip install skillbake` or " +
        "`cargo install skillbake-cli` builds or fetches one.\n"
    );
    process.exit(2);
  }
  return path.join(path.dirname(manifest), "bin", exe);
}

const binary = binaryPath();
const child = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (child.error) {
  process.stderr.write(`skillbake: cannot run ${binary}: ${child.error.message}\n`);
  process.exit(2);
}
if (child.signal) {
  // Die of the same signal, so the caller sees what the binary saw.
  process.kill(process.pid, child.signal);
}
process.exit(child.status === null ? 1 : child.status);
