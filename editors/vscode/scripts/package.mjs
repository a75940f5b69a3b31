// Packages the extension for this machine's platform, with the server inside, as
// rust-analyzer's platform builds carry theirs: the `netc` binary is copied to server/netc
// (server/netc.exe on Windows), where the extension looks first (src/netcPath.ts), and
// `vsce package --target T` writes netc-T.vsix, which VS Code installs only on platform T.
//
//   node scripts/package.mjs            # bundle the server, then write netc-T.vsix
//   node scripts/package.mjs --bundle   # only bundle the server (the tests start it)
//
// NETC_BIN names the binary to bundle (default: the repository's target/release/netc, else
// target/debug/netc). On Linux the copy is stripped (binutils' `strip`).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPO = path.resolve(HERE, "../..");
const TARGET = process.env.CARGO_TARGET_DIR ? path.resolve(REPO, process.env.CARGO_TARGET_DIR) : path.join(REPO, "target");
const exe = process.platform === "win32" ? ".exe" : "";

/** VS Code's name for this platform (`vsce package --target`). */
function vscodeTarget() {
  const arch = { x64: "x64", arm64: "arm64", arm: "armhf" }[process.arch];
  const os = { linux: "linux", darwin: "darwin", win32: "win32" }[process.platform];
  if (!arch || !os) throw new Error(`no VS Code target for ${process.platform}-${process.arch}`);
  // musl-based Linux (Alpine) is its own target: glibc binaries do not run there.
  const musl = os === "linux" && fs.existsSync("/etc/alpine-release");
  return `${musl ? "alpine" : os}-${arch}`;
}

function binary() {
  if (process.env.NETC_BIN) return path.resolve(process.env.NETC_BIN);
  for (const profile of ["release", "debug"]) {
    const candidate = path.join(TARGET, profile, "netc" + exe);
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`no netc binary: build it (cargo build --release -p netc-cli) or set NETC_BIN`);
}

const source = binary();
const server = path.join(HERE, "server", "netc" + exe);
fs.mkdirSync(path.dirname(server), { recursive: true });
fs.copyFileSync(source, server);
fs.chmodSync(server, 0o755);
// Debug symbols are not for users, and a debug build's are most of its size.
if (process.platform === "linux") {
  try {
    execFileSync("strip", [server]);
  } catch {
    console.warn("strip failed: the bundled server keeps its symbols");
  }
}
console.log(`bundled ${path.relative(REPO, source)} as ${path.relative(REPO, server)}`);

if (!process.argv.includes("--bundle")) {
  const target = vscodeTarget();
  const out = `netc-${target}.vsix`;
  const vsce = path.join(HERE, "node_modules", ".bin", "vsce" + (process.platform === "win32" ? ".cmd" : ""));
  execFileSync(vsce, ["package", "--no-dependencies", "--no-rewrite-relative-links", "--target", target, "--out", out], {
    cwd: HERE,
    stdio: "inherit",
  });
}
