// Unit tests of the extension's parts that do not need VS Code (node --test).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";

import { parseLens, statusOf } from "../../src/lenses";
import { extractSvg, svgModeOf } from "../../src/netcCli";
import { bundledServer, Lookup, notFoundMessage, resolveNetc } from "../../src/netcPath";
import { reportHtml, sectionScenario, splitSections } from "../../src/report";
import { serverSettings } from "../../src/settings";
import { formatBytes, timelineSvg } from "../../src/timeline";
import { whatIfMessage } from "../../src/whatIf";

const ROOT = path.resolve(__dirname, "../..");

function lookup(files: string[], extra: Partial<Lookup> = {}): Lookup {
  return {
    pathEnv: "/usr/bin:/opt/tools/bin",
    home: "/home/me",
    workspaceFolder: "/work/project",
    platform: "linux",
    isExecutable: (f) => files.includes(f),
    ...extra,
  };
}

describe("finding netc", () => {
  it("looks a bare name up on PATH, then in ~/.cargo/bin", () => {
    assert.equal(resolveNetc("netc", lookup(["/opt/tools/bin/netc"])).found, "/opt/tools/bin/netc");
    const r = resolveNetc(undefined, lookup(["/home/me/.cargo/bin/netc"]));
    assert.equal(r.found, "/home/me/.cargo/bin/netc");
    assert.deepEqual(r.tried, ["/usr/bin/netc", "/opt/tools/bin/netc", "/home/me/.cargo/bin/netc"]);
  });
  it("takes paths relative to the workspace, with ~ and ${workspaceFolder}", () => {
    assert.equal(resolveNetc("target/debug/netc", lookup(["/work/project/target/debug/netc"])).found, "/work/project/target/debug/netc");
    assert.equal(resolveNetc("${workspaceFolder}/bin/netc", lookup(["/work/project/bin/netc"])).found, "/work/project/bin/netc");
    assert.equal(resolveNetc("~/bin/netc", lookup(["/home/me/bin/netc"])).found, "/home/me/bin/netc");
    assert.equal(resolveNetc("/abs/netc", lookup([])).found, undefined);
  });
  it("adds .exe on Windows", () => {
    const r = resolveNetc("netc", lookup(["C:\\tools\\netc.exe"], { pathEnv: "C:\\tools", platform: "win32" }));
    assert.ok(r.found?.endsWith("netc.exe"));
  });
  it("prefers the bundled server unless netc.path is set", () => {
    const bundled = bundledServer("/ext", "linux");
    assert.equal(bundled, "/ext/server/netc");
    const both = lookup([bundled, "/opt/tools/bin/netc"], { bundled });
    assert.equal(resolveNetc(undefined, both).found, bundled);
    assert.equal(resolveNetc("", both).found, bundled);
    assert.equal(resolveNetc("netc", both).found, "/opt/tools/bin/netc");
    const notBundled = resolveNetc("", lookup(["/opt/tools/bin/netc"], { bundled }));
    assert.equal(notBundled.found, "/opt/tools/bin/netc");
    assert.deepEqual(notBundled.tried, [bundled, "/usr/bin/netc", "/opt/tools/bin/netc"]);
    assert.equal(bundledServer("C:\\ext", "win32"), "C:\\ext\\server\\netc.exe");
  });
  it("says exactly what to install", () => {
    assert.match(notFoundMessage(undefined), /`pip install netc`/);
    assert.match(notFoundMessage(undefined), /`cargo install netc-cli`/);
    assert.match(notFoundMessage(undefined), /carries no server/);
    assert.match(notFoundMessage("/x/netc"), /`\/x\/netc`, which is not an executable/);
  });
});

const LENS_ARGS = ["file:///m.net", "serve"];

describe("scenario lenses and the status bar", () => {
  it("reads the active lens's memory against its budget", () => {
    const lens = parseLens("● active · 351.3 MiB of 1.0 GiB budget (34 %) · 11,689,512 params · 1.81 G MACs", "netc.setActiveScenario", LENS_ARGS);
    assert.deepEqual(lens, {
      name: "serve",
      uri: "file:///m.net",
      active: true,
      figures: "351.3 MiB of 1.0 GiB budget (34 %) · 11,689,512 params · 1.81 G MACs",
      memory: "351.3 MiB of 1.0 GiB budget (34 %)",
      needed: "351.3 MiB",
      budget: "1.0 GiB",
      percent: 34,
    });
    const status = statusOf([lens!]);
    assert.equal(status.text, "$(pulse) serve: 351.3 MiB / 1.0 GiB (34 %)");
    assert.equal(status.level, "ok");
  });
  it("colours a scenario near or over its budget", () => {
    const near = parseLens("● active · 7.0 GiB of 8.0 GiB budget (87 %) · 1 params · 1 MACs", "netc.setActiveScenario", LENS_ARGS)!;
    const over = parseLens("● active · 9.0 GiB of 8.0 GiB budget (112 %) · 1 params · 1 MACs", "netc.setActiveScenario", LENS_ARGS)!;
    assert.equal(statusOf([near]).level, "warning");
    assert.equal(statusOf([over]).level, "error");
  });
  it("handles scenarios without a budget, without figures, and files without scenarios", () => {
    const total = parseLens("● active · 21.3 MiB total · 627,816 params · 1 MACs", "netc.setActiveScenario", LENS_ARGS)!;
    assert.equal(statusOf([total]).text, "$(pulse) serve: 21.3 MiB (no budget)");
    const broken = parseLens("○ set active · no figures: the scenario does not elaborate", "netc.setActiveScenario", LENS_ARGS)!;
    assert.equal(broken.active, false);
    assert.equal(statusOf([broken]).text, "$(pulse) netc: no figures");
    assert.equal(statusOf([]).level, "none");
  });
  it("prefers the numbers of the lens's data to its title", () => {
    const lens = parseLens("○ set active · 7.0 GiB of 8.0 GiB budget (87 %) · 1 params · 1 MACs", "netc.setActiveScenario", LENS_ARGS, {
      scenario: "serve",
      active: true,
      totalBytes: 8 * 1024 ** 3 + 1,
      budgetBytes: 8 * 1024 ** 3,
    })!;
    assert.equal(lens.active, true);
    assert.equal(lens.percent, 100);
    assert.equal(statusOf([lens]).level, "error");
    // Data without numbers (a scenario that does not elaborate) changes nothing.
    const broken = parseLens("○ set active · no figures", "netc.setActiveScenario", LENS_ARGS, { active: false, totalBytes: null })!;
    assert.equal(broken.percent, undefined);
  });
  it("ignores lenses of other commands", () => {
    assert.equal(parseLens("● active · x", "other", LENS_ARGS), undefined);
    assert.equal(parseLens("● active · x", "netc.setActiveScenario", [1]), undefined);
  });
});

describe("netc's own timelines", () => {
  it("reads from `netc report --help` how this netc draws them", () => {
    assert.equal(svgModeOf("      --svg <FILE>\n          Also write the memory timeline"), "flag-file");
    assert.equal(svgModeOf("  --format <FORMAT>\n   - json: JSON\n   - svg: the timeline"), "format");
    assert.equal(svgModeOf("      --svg\n          Print the timeline"), "flag");
    assert.equal(svgModeOf("      --format <FORMAT>"), "none");
  });
  it("takes the SVG out of what netc wrote", () => {
    assert.equal(extractSvg('<?xml version="1.0"?>\n<svg a="1"><g/></svg>\n'), '<svg a="1"><g/></svg>');
    assert.equal(extractSvg("no picture"), undefined);
  });
});

describe("server settings", () => {
  const get = (values: Record<string, unknown>) => (key: string) => values[key];
  it("has the server's defaults", () => {
    assert.deepEqual(serverSettings(get({}), undefined, (f) => f), {
      inlayHints: { enabled: true, shape: true, bytes: true, params: false, macs: false, instances: true, maxLength: 30 },
      lints: {},
    });
  });
  it("passes hints, lint levels and the active scenario", () => {
    const s = serverSettings(
      get({ "inlayHints.params": true, "inlayHints.maxLength": 500, lints: { unused: "allow", "budget-margin": "deny", bad: "loud" }, activeScenario: { file: "m.net", name: "serve" } }),
      undefined,
      (f) => `file:///w/${f}`,
    );
    assert.equal(s.inlayHints.params, true);
    assert.equal(s.inlayHints.maxLength, 200);
    assert.deepEqual(s.lints, { unused: "allow", "budget-margin": "deny" });
    assert.deepEqual(s.activeScenario, { file: "file:///w/m.net", name: "serve" });
  });
  it("prefers the scenario chosen with the command", () => {
    const s = serverSettings(get({ activeScenario: { file: "m.net", name: "serve" } }), { file: "file:///a.net", name: "train" }, (f) => f);
    assert.deepEqual(s.activeScenario, { file: "file:///a.net", name: "train" });
  });
});

const SCENARIO = {
  name: "imagenet",
  kind: "train",
  device: "a100_40gb",
  runtime_bytes: 524288000,
  budget_bytes: 12884901888,
  margin: 1.5,
  peak_op: "conv2d backward",
  peak_line: "examples/blocks.net:7",
  phases: [
    { step: 1, phase: "forward", start: 85332288, peak: 875196608, end: 869993616 },
    { step: 1, phase: "backward", start: 870249620, peak: 883602532, end: 132090336 },
    { step: 2, phase: "forward", start: 178848548, peak: 968712868, end: 963509876 },
  ],
};

describe("the report page", () => {
  it("formats bytes as netc does", () => {
    assert.equal(formatBytes(0), "0 B");
    assert.equal(formatBytes(1023), "1023 B");
    assert.equal(formatBytes(1024), "1.0 KiB");
    assert.equal(formatBytes(977118792), "931.9 MiB");
    assert.equal(formatBytes(12884901888), "12.0 GiB");
  });
  it("draws the timeline with the runtime, the peak, the budget and the margin", () => {
    const svg = timelineSvg(SCENARIO)!;
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(svg, /<\/svg>$/);
    assert.match(svg, /runtime 500\.0 MiB/);
    assert.match(svg, /peak 1\.4 GiB/);
    assert.match(svg, /budget 12\.0 GiB/);
    assert.match(svg, /budget ÷ 1\.5/);
    assert.match(svg, />forward 2</);
    assert.doesNotMatch(svg, /NaN|undefined/);
    assert.equal(timelineSvg({ name: "x", phases: [] }), undefined);
  });
  it("splits the Markdown per scenario and puts each timeline after its table", () => {
    const md = "### train scenario `imagenet` (m.net): model `r`\n\n| a |\n|---|\n| `x|y` |\n\n### infer scenario `serve` (m.net): model `r`\n\ntext\n";
    const sections = splitSections(md);
    assert.equal(sections.length, 3);
    assert.equal(sectionScenario(sections[1]), "imagenet");
    assert.equal(sectionScenario(sections[2]), "serve");
    const html = reportHtml({ fileName: "m.net", markdown: md, scenarios: [SCENARIO, { name: "serve" }], cspSource: "vscode-resource:" });
    assert.match(html, /Content-Security-Policy/);
    assert.ok(html.indexOf("<table>") < html.indexOf("<svg") && html.indexOf("<svg") < html.indexOf("serve</code>"));
    assert.equal((html.match(/<svg/g) ?? []).length, 1);
  });
  it("escapes what netc prints and shows errors", () => {
    const html = reportHtml({ fileName: "<m>.net", markdown: "", scenarios: [], error: "error[E0206]: <script>", dirty: true, cspSource: "x" });
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /&lt;script&gt;/);
    assert.match(html, /unsaved changes/);
  });
  it("prefers netc's own SVG", () => {
    const md = "### train scenario `imagenet` (m.net)\n";
    const html = reportHtml({ fileName: "m.net", markdown: md, scenarios: [SCENARIO], svgs: new Map([["imagenet", "<svg id=\"own\"></svg>"]]), cspSource: "x" });
    assert.match(html, /<svg id="own">/);
  });
});

describe("the package", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const source = fs.readFileSync(path.join(ROOT, "src/extension.ts"), "utf8");
  it("registers every command it contributes", () => {
    for (const { command } of pkg.contributes.commands) {
      assert.ok(source.includes(`registerCommand("${command}"`), command);
    }
  });
  it("contributes a setting for each server setting", () => {
    const props = Object.keys(pkg.contributes.configuration.properties);
    for (const key of ["path", "inlayHints.enabled", "inlayHints.shape", "inlayHints.bytes", "inlayHints.params", "inlayHints.macs", "inlayHints.instances", "inlayHints.maxLength", "activeScenario", "lints", "trace.server"]) {
      assert.ok(props.includes(`netc.${key}`), key);
    }
  });
  it("associates .net files with the language, its grammar, configuration and icon", () => {
    const [lang] = pkg.contributes.languages;
    assert.deepEqual(lang.extensions, [".net"]);
    for (const file of [lang.configuration, lang.icon.light, lang.icon.dark, pkg.contributes.grammars[0].path]) {
      assert.ok(fs.existsSync(path.join(ROOT, file)), file);
    }
  });
});

describe("the language configuration", () => {
  const config = JSON.parse(fs.readFileSync(path.join(ROOT, "language-configuration.json"), "utf8"));
  const increase = new RegExp(config.indentationRules.increaseIndentPattern);
  const decrease = new RegExp(config.indentationRules.decreaseIndentPattern);
  it("indents after an open brace or bracket at the end of a line", () => {
    for (const line of ["block b(x) {", "model m() {  # comment", "    y = conv2d(", "    if stride != 1 {", "    s = [", "infer serve {"]) {
      assert.ok(increase.test(line), line);
    }
    for (const line of ["    y = relu(x)", "block b(x) { return x }", '    s = "{"', "# {", "    y = f(x)  # (", "}"]) {
      assert.ok(!increase.test(line), line);
    }
  });
  it("outdents a closing brace or bracket", () => {
    for (const line of ["}", "    )", "  ] "]) assert.ok(decrease.test(line), line);
    assert.ok(!decrease.test("    y = x"));
  });
  it("comments with #", () => {
    assert.equal(config.comments.lineComment, "#");
  });
});

describe("the bundle", () => {
  const bundle = path.join(ROOT, "dist/extension.js");
  it("loads with every module it needs inside, and exports activate and deactivate", { skip: fs.existsSync(bundle) ? false : "not built (npm run build)" }, () => {
    // A stand-in for the `vscode` module, which only VS Code provides: any property is
    // another stand-in, any call or `new` returns one.
    const stub: unknown = new Proxy(function () {}, {
      get: (_t, key) => (key === Symbol.toPrimitive ? () => "" : key === "then" ? undefined : stub),
      apply: () => stub,
      construct: () => stub as object,
    });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Module = require("node:module") as { _load: (request: string, ...rest: unknown[]) => unknown };
    const load = Module._load;
    Module._load = (request: string, ...rest: unknown[]) => (request === "vscode" ? stub : load(request, ...rest));
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const ext = require(bundle) as { activate?: unknown; deactivate?: unknown };
      assert.equal(typeof ext.activate, "function");
      assert.equal(typeof ext.deactivate, "function");
    } finally {
      Module._load = load;
    }
  });
});

describe("what if", () => {
  it("says what the scenario needs against its budget and where it peaks", () => {
    const answer = {
      report: { total_bytes: 3 * 1024 ** 3, budget_bytes: 1024 ** 3, peak_phase: "forward", peak_op: "conv2d", peak_line: "/w/resnet18.net:12" },
    };
    assert.deepEqual(whatIfMessage("serve", " batch 64   device h100_80gb ", answer), {
      text: "netc: `serve` with `batch 64 device h100_80gb` needs 3.0 GiB of its 1.0 GiB budget (300 %); peak in forward, `conv2d` (resnet18.net:12)",
      error: false,
    });
    assert.equal(whatIfMessage("serve", "batch 2", { report: { total_bytes: 2048 } }).text, "netc: `serve` with `batch 2` needs 2.0 KiB");
  });
  it("shows the first error the settings cause", () => {
    assert.deepEqual(whatIfMessage("serve", "device a100", { errors: ["unknown device `a100`", "another"] }), {
      text: "netc: `serve` with `device a100`: unknown device `a100` (and 1 more)",
      error: true,
    });
    assert.equal(whatIfMessage("serve", "batch 2", null).error, true);
  });
});
