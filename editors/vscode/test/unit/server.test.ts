// The extension's side of the protocol against the real `netc lsp` (no VS Code here): the
// initialization options and configuration it sends, the code lenses it reads the status bar
// from, the command that sets the active scenario, the workspace symbols its quick pick lists,
// and the report page made from the real `netc report`. NETC_BIN names the binary (default:
// the workspace's target/debug/netc); without one, these tests are skipped, unless NETC_BIN
// is set (CI sets it), when a missing binary fails them.
import assert from "node:assert/strict";
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import {
  CodeLensRequest,
  createProtocolConnection,
  DidChangeConfigurationNotification,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  InlayHintRequest,
  ProtocolConnection,
  PublishDiagnosticsNotification,
  PublishDiagnosticsParams,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  SymbolKind,
  WorkspaceSymbolRequest,
} from "vscode-languageserver-protocol/node";

import { parseLens, ScenarioLens, SET_ACTIVE_SCENARIO, statusOf } from "../../src/lenses";
import { report, svgModeOf } from "../../src/netcCli";
import { bundledServer, defaultLookup, resolveNetc } from "../../src/netcPath";
import { reportHtml } from "../../src/report";
import { serverSettings } from "../../src/settings";
import { WHAT_IF, whatIfMessage } from "../../src/whatIf";

const REPO = path.resolve(__dirname, "../../../..");
const TARGET = process.env.CARGO_TARGET_DIR ? path.resolve(REPO, process.env.CARGO_TARGET_DIR) : path.join(REPO, "target");
const NETC = process.env.NETC_BIN ?? path.join(TARGET, "debug", "netc");
const EXAMPLES = path.join(REPO, "examples");
const RESNET = path.join(EXAMPLES, "resnet18.net");
const URI = pathToFileURL(RESNET).toString();
const available = fs.existsSync(NETC);
const skip = !available && !process.env.NETC_BIN ? `no netc binary at ${NETC}` : false;

function settings(values: Record<string, unknown>) {
  return { netc: serverSettings((key) => values[key], undefined, (f) => pathToFileURL(path.resolve(EXAMPLES, f)).toString()) };
}

describe("the extension against netc lsp", { skip }, () => {
  let server: ChildProcess;
  let connection: ProtocolConnection;
  const diagnostics: PublishDiagnosticsParams[] = [];
  let waiters: (() => void)[] = [];

  before(async () => {
    assert.ok(available, `NETC_BIN=${NETC} does not exist`);
    server = spawn(NETC, ["lsp"], { stdio: ["pipe", "pipe", "inherit"] });
    connection = createProtocolConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
    connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      diagnostics.push(p);
      const w = waiters;
      waiters = [];
      w.forEach((f) => f());
    });
    // What VS Code answers to the server's requests.
    connection.onRequest("client/registerCapability", () => null);
    connection.onRequest("workspace/inlayHint/refresh", () => null);
    connection.onRequest("workspace/codeLens/refresh", () => null);
    connection.listen();
    const init = await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(EXAMPLES).toString(),
      workspaceFolders: [{ uri: pathToFileURL(EXAMPLES).toString(), name: "examples" }],
      capabilities: {
        workspace: { inlayHint: { refreshSupport: true }, codeLens: { refreshSupport: true }, didChangeWatchedFiles: { dynamicRegistration: true } },
        textDocument: { inlayHint: {}, codeLens: {}, publishDiagnostics: {} },
      },
      // The options the extension starts the server with: no shapes, parameters shown.
      initializationOptions: settings({ "inlayHints.shape": false, "inlayHints.params": true, "inlayHints.maxLength": 60 }),
    });
    assert.ok(init.capabilities.codeLensProvider);
    assert.deepEqual(init.capabilities.executeCommandProvider?.commands, [SET_ACTIVE_SCENARIO, WHAT_IF]);
    await connection.sendNotification(InitializedNotification.type, {});
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: URI, languageId: "netc", version: 1, text: fs.readFileSync(RESNET, "utf8") },
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no diagnostics within 60 s")), 60_000);
      const check = () => {
        if (diagnostics.some((d) => d.uri === URI)) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  });

  after(async () => {
    if (!connection) return;
    await connection.sendRequest(ShutdownRequest.type).catch(() => undefined);
    await connection.sendNotification(ExitNotification.type).catch(() => undefined);
    connection.dispose();
    server.kill();
  });

  async function lenses(): Promise<ScenarioLens[]> {
    const result = (await connection.sendRequest(CodeLensRequest.type, { textDocument: { uri: URI } })) ?? [];
    return result.map((l) => parseLens(l.command?.title ?? "", l.command?.command, l.command?.arguments, l.data)).filter((l): l is ScenarioLens => !!l);
  }

  async function hintLabels(): Promise<string[]> {
    const hints = await connection.sendRequest(InlayHintRequest.type, {
      textDocument: { uri: URI },
      range: { start: { line: 0, character: 0 }, end: { line: 1000, character: 0 } },
    });
    return (hints ?? []).map((h) => (typeof h.label === "string" ? h.label : h.label.map((p) => p.value).join("")));
  }

  it("publishes diagnostics for the opened file", () => {
    assert.ok(diagnostics.some((d) => d.uri === URI));
  });

  it("applies the initialization options: hints with parameters and without shapes", async () => {
    const labels = await hintLabels();
    // Without shapes, a line that only calls a block has no figure of its own (as the report's
    // table shows it): the input, the stem's two lines, the pooling and the head have one.
    assert.ok(labels.length >= 5, labels.join(" | "));
    assert.ok(labels.some((l) => / params/.test(l)), labels.join(" | "));
    assert.ok(!labels.some((l) => l.includes("f32[")), labels.join(" | "));
  });

  it("reads the status bar's text from the lenses: the first scenario is active", async () => {
    const found = await lenses();
    assert.deepEqual(found.map((l) => [l.name, l.active]), [["imagenet", true], ["serve", false]]);
    const status = statusOf(found);
    assert.match(status.text, /^\$\(pulse\) imagenet: [\d.]+ [KMG]iB \/ 12\.0 GiB \(\d+ %\)$/);
    // The server sends the figures as numbers too; the percentage is theirs.
    const imagenet = found[0];
    assert.equal(imagenet.budgetBytes, 12 * 1024 ** 3);
    assert.ok(imagenet.neededBytes! > 1024 ** 3, String(imagenet.neededBytes));
    assert.equal(imagenet.percent, Math.floor((imagenet.neededBytes! * 100) / imagenet.budgetBytes!));
  });

  it("makes another scenario active with the command", async () => {
    await connection.sendRequest(ExecuteCommandRequest.type, { command: SET_ACTIVE_SCENARIO, arguments: [URI, "serve"] });
    const found = await lenses();
    assert.deepEqual(found.map((l) => [l.name, l.active]), [["imagenet", false], ["serve", true]]);
    assert.match(statusOf(found).text, /^\$\(pulse\) serve: [\d.]+ [KMG]iB \/ 1\.0 GiB \(\d+ %\)$/);
  });

  it("answers what a scenario would need with other settings, as the What If command shows it", async () => {
    const answer = await connection.sendRequest(ExecuteCommandRequest.type, {
      command: WHAT_IF,
      arguments: [URI, "serve", "batch 64  device h100_80gb"],
    });
    const message = whatIfMessage("serve", "batch 64  device h100_80gb", answer);
    assert.equal(message.error, false, message.text);
    assert.match(message.text, /^netc: `serve` with `batch 64 device h100_80gb` needs [\d.]+ [KMG]iB of its 1\.0 GiB budget \(\d+ %\); peak in forward, `\w+`/);
    const wrong = await connection.sendRequest(ExecuteCommandRequest.type, { command: WHAT_IF, arguments: [URI, "serve", "device a100"] });
    assert.deepEqual(whatIfMessage("serve", "device a100", wrong), { text: "netc: `serve` with `device a100`: unknown device `a100`", error: true });
  });

  it("follows a change of configuration: the active scenario setting and the hints' figures", async () => {
    await connection.sendNotification(DidChangeConfigurationNotification.type, {
      settings: settings({ activeScenario: { file: "resnet18.net", name: "imagenet" } }),
    });
    const found = await lenses();
    assert.equal(found.find((l) => l.active)?.name, "imagenet");
    const labels = await hintLabels();
    assert.ok(labels.some((l) => l.includes("f32[")), labels.join(" | "));
  });

  it("lists the workspace's scenarios for the quick pick", async () => {
    const symbols = (await connection.sendRequest(WorkspaceSymbolRequest.type, { query: "" })) ?? [];
    const scenarios = symbols.filter((s) => s.kind === SymbolKind.Event).map((s) => s.name);
    assert.ok(scenarios.includes("imagenet") && scenarios.includes("serve"), scenarios.join(", "));
  });

  it("makes the report page from netc report, with a timeline per scenario", async () => {
    const result = await report(NETC, "resnet18.net", EXAMPLES);
    assert.equal(result.error, undefined);
    assert.deepEqual(result.scenarios.map((s) => s.name), ["imagenet", "serve"]);
    // netc's own SVGs when this netc draws them (`report --svg`), else none: the page draws them.
    const help = execFileSync(NETC, ["report", "--help"], { encoding: "utf8" });
    assert.equal(result.svgs.size, svgModeOf(help) === "none" ? 0 : 2);
    const html = reportHtml({ fileName: "examples/resnet18.net", ...result, cspSource: "vscode-webview:" });
    assert.equal((html.match(/<table>/g) ?? []).length, 2);
    assert.equal((html.match(/<svg /g) ?? []).length, 2);
    assert.ok(html.indexOf("scenario <code>imagenet</code>") < html.indexOf("<svg "));
    fs.writeFileSync(path.resolve(__dirname, "../report-resnet18.html"), html);
  });

  it("shows why there is no report", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "netc-report-"));
    fs.writeFileSync(path.join(dir, "bad.net"), "model m() {\n    input x: f32[N, 8]\n    return x\n}\n");
    const result = await report(NETC, "missing.net", dir);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.match(result.error ?? "", /no such file/);
  });

  it("shows the scenarios that simulate when others have errors (exit 1)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "netc-report-"));
    const text = "model m() {\n    input x: f32[N, 8]\n    return linear(x, 4)\n}\ninfer ok { model m()  batch 1 }\ninfer bad { model m()  batch 1  device nope }\n";
    fs.writeFileSync(path.join(dir, "mixed.net"), text);
    const result = await report(NETC, "mixed.net", dir);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(result.error, undefined);
    assert.match(result.problems ?? "", /unknown device `nope`/);
    assert.deepEqual(result.scenarios.map((s) => [s.name, s.error]), [["ok", undefined], ["bad", "1 error stops its simulation"]]);
    const html = reportHtml({ fileName: "mixed.net", ...result, cspSource: "x" });
    assert.equal((html.match(/<table>/g) ?? []).length, 1);
    assert.match(html, /not simulated: 1 error stops its simulation/);
    assert.match(html, /netc found errors/);
  });
});

// A platform build carries the server as server/netc (scripts/package.mjs copies it there
// before these tests run in `npm run package`): the extension finds it first, and it starts
// and answers `initialize`. Skipped when nothing is bundled (`npm test` alone).
const EXTENSION = path.resolve(__dirname, "../..");
const BUNDLED = bundledServer(EXTENSION);
const noBundle = fs.existsSync(BUNDLED) ? false : `nothing bundled at ${BUNDLED}`;

describe("the bundled server", { skip: noBundle }, () => {
  it("is what the extension finds without a netc.path setting", () => {
    assert.equal(resolveNetc(undefined, defaultLookup(undefined, EXTENSION)).found, BUNDLED);
  });
  it("starts and answers initialize", async () => {
    assert.match(execFileSync(BUNDLED, ["--version"], { encoding: "utf8" }), /^netc \d+\.\d+\.\d+/);
    const child = spawn(BUNDLED, ["lsp"], { stdio: ["pipe", "pipe", "inherit"] });
    const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    connection.listen();
    try {
      const init = await connection.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {} });
      assert.equal(init.serverInfo?.name, "netc");
      assert.ok(init.capabilities.inlayHintProvider);
      await connection.sendRequest(ShutdownRequest.type);
      await connection.sendNotification(ExitNotification.type);
    } finally {
      connection.dispose();
      child.kill();
    }
  });
});
