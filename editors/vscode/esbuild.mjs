// Bundles the extension (src/extension.ts -> dist/extension.js, with vscode-languageclient and
// markdown-it inside, so the .vsix needs no node_modules), or, with --tests, the unit tests
// (test/unit/*.test.ts -> out/test/*.test.js, run by `node --test`), or, with --script, the
// screenshot script (scripts/screenshot.ts -> out/scripts/screenshot.js).
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");
const script = process.argv.includes("--script");

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  logLevel: "warning",
};

if (script) {
  await esbuild.build({ ...common, entryPoints: ["scripts/screenshot.ts"], outdir: "out/scripts", sourcemap: "inline" });
} else if (tests) {
  const entryPoints = readdirSync("test/unit")
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/unit/${f}`);
  await esbuild.build({ ...common, entryPoints, outdir: "out/test", sourcemap: "inline" });
} else {
  await esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
    minify: production,
    sourcemap: !production,
    sourcesContent: false,
  });
}
