// Renders a .net file the way the extension shows it in VS Code, from real data, as a static
// HTML page, and takes a screenshot of it with headless Chromium:
//
// - the text is tokenized by this extension's TextMate grammar (vscode-textmate, the engine
//   VS Code uses) and coloured with the Dark+ theme's colours;
// - the inlay hints, code lenses, diagnostics and one hover come from the real `netc lsp`;
// - the status-bar item is made by the extension's own code (src/lenses.ts) from the lenses.
//
// VS Code itself cannot run on the machines this was written on, hence the static page.
//
//   npm run screenshot -- [FILE.net] [--hover LINE] [--out images/hints.png]
//
// NETC_BIN names the binary (default: the repository's target/debug/netc); CHROMIUM the
// browser (default: chromium). Without Chromium the HTML page is still written.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import MarkdownIt from "markdown-it";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";
import {
  CodeLensRequest,
  createProtocolConnection,
  Diagnostic,
  DidOpenTextDocumentNotification,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  InlayHintRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";

import { parseLens, ScenarioLens, statusOf } from "../src/lenses";
import { escapeXml } from "../src/timeline";

const HERE = path.resolve(__dirname, "../..");
const REPO = path.resolve(HERE, "../..");
const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const out = path.resolve(HERE, option("--out") ?? "images/hints.png");
const hoverLine = Number(option("--hover") ?? "0");
const file = path.resolve(args[0] ?? path.join(REPO, "examples/resnet18.net"));
const NETC = process.env.NETC_BIN ?? path.join(REPO, "target/debug/netc");
const uri = pathToFileURL(file).toString();
const text = fs.readFileSync(file, "utf8");

// Dark+ (VS Code's default dark theme): scope prefix -> colour; the longest prefix of the
// innermost scope that has one wins.
const THEME: [string, string][] = [
  ["comment", "#6A9955"],
  ["string", "#CE9178"],
  ["constant.character.escape", "#D7BA7D"],
  ["constant.numeric", "#B5CEA8"],
  ["constant.language", "#569CD6"],
  ["constant.other", "#4FC1FF"],
  ["support.constant", "#4FC1FF"],
  ["keyword.control", "#C586C0"],
  ["keyword.operator.logical", "#569CD6"],
  ["keyword.operator", "#D4D4D4"],
  ["keyword.other.unit", "#569CD6"],
  ["keyword.other.directive", "#C586C0"],
  ["keyword", "#569CD6"],
  ["storage.type.primitive", "#4EC9B0"],
  ["storage.type.dtype", "#4EC9B0"],
  ["storage.type", "#569CD6"],
  ["entity.name.function", "#DCDCAA"],
  ["entity.name.type", "#4EC9B0"],
  ["entity.name.namespace", "#4EC9B0"],
  ["variable.other.constant", "#4FC1FF"],
  ["variable", "#9CDCFE"],
];

function colour(scopes: string[]): string | undefined {
  for (let i = scopes.length - 1; i >= 0; i--) {
    let best: [string, string] | undefined;
    for (const entry of THEME) {
      const [prefix] = entry;
      if ((scopes[i] === prefix || scopes[i].startsWith(prefix + ".")) && (!best || prefix.length > best[0].length)) best = entry;
    }
    if (best) return best[1];
  }
  return undefined;
}

async function tokenize(lines: string[]): Promise<{ start: number; end: number; scopes: string[] }[][]> {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) =>
      scope === "source.netc"
        ? textmate.parseRawGrammar(fs.readFileSync(path.join(HERE, "syntaxes/netc.tmLanguage.json"), "utf8"), "netc.tmLanguage.json")
        : null,
  });
  const grammar = await registry.loadGrammar("source.netc");
  if (!grammar) throw new Error("no grammar");
  let state = textmate.INITIAL;
  return lines.map((line) => {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    return r.tokens.map((t) => ({ start: t.startIndex, end: Math.min(t.endIndex, line.length), scopes: t.scopes }));
  });
}

interface ServerData {
  hints: { line: number; character: number; label: string }[];
  lenses: { line: number; lens: ScenarioLens }[];
  diagnostics: Diagnostic[];
  hover?: { line: number; markdown: string };
}

async function serverData(): Promise<ServerData> {
  const server = spawn(NETC, ["lsp"], { stdio: ["pipe", "pipe", "inherit"] });
  const connection = createProtocolConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  let diagnostics: Diagnostic[] | undefined;
  const published = new Promise<void>((resolve) => {
    connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      if (p.uri === uri) {
        diagnostics = p.diagnostics;
        resolve();
      }
    });
  });
  connection.onRequest("client/registerCapability", () => null);
  connection.listen();
  const folder = pathToFileURL(path.dirname(file)).toString();
  await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: folder,
    workspaceFolders: [{ uri: folder, name: "models" }],
    capabilities: {},
  });
  await connection.sendNotification(InitializedNotification.type, {});
  await connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: "netc", version: 1, text } });
  await published;
  const doc = { uri };
  const hints = (await connection.sendRequest(InlayHintRequest.type, { textDocument: doc, range: { start: { line: 0, character: 0 }, end: { line: 100000, character: 0 } } })) ?? [];
  const lenses = (await connection.sendRequest(CodeLensRequest.type, { textDocument: doc })) ?? [];
  const lines = text.split("\n");
  const character = Math.max(0, lines[hoverLine - 1]?.search(/\S/) ?? 0);
  const hover = hoverLine > 0 ? await connection.sendRequest(HoverRequest.type, { textDocument: doc, position: { line: hoverLine - 1, character } }) : null;
  await connection.sendRequest(ShutdownRequest.type);
  await connection.sendNotification(ExitNotification.type);
  connection.dispose();
  server.kill();
  const hoverText = hover && typeof hover.contents === "object" && "value" in hover.contents ? hover.contents.value : undefined;
  return {
    hints: hints.map((h) => ({ line: h.position.line, character: h.position.character, label: typeof h.label === "string" ? h.label : h.label.map((p) => p.value).join("") })),
    lenses: lenses
      .map((l) => ({ line: l.range.start.line, lens: parseLens(l.command?.title ?? "", l.command?.command, l.command?.arguments) }))
      .filter((l): l is { line: number; lens: ScenarioLens } => !!l.lens),
    diagnostics: diagnostics ?? [],
    hover: hoverText ? { line: hoverLine - 1, markdown: hoverText } : undefined,
  };
}

const SEVERITY_COLOUR: Record<number, string> = { 1: "#f14c4c", 2: "#cca700", 3: "#3794ff", 4: "#8a8a8a" };

async function main(): Promise<void> {
  const lines = text.replace(/\n$/, "").split("\n");
  const tokens = await tokenize(lines);
  const data = await serverData();
  const lensTitles = new Map<number, string[]>();
  for (const { line, lens } of data.lenses) {
    const title = `${lens.active ? "● active" : "○ set active"} · ${lens.figures}`;
    lensTitles.set(line, [...(lensTitles.get(line) ?? []), title]);
  }
  const rows: string[] = [];
  lines.forEach((line, i) => {
    const indent = line.match(/^\s*/)?.[0].length ?? 0;
    for (const title of lensTitles.get(i) ?? []) {
      rows.push(`<div class="row lens"><span class="num"></span><span class="code">${" ".repeat(indent)}<span class="lenstext">${escapeXml(title)}</span></span></div>`);
    }
    // Diagnostic ranges on this line, by character.
    const marks: { start: number; end: number; colour: string }[] = [];
    for (const d of data.diagnostics) {
      if (d.range.start.line > i || d.range.end.line < i) continue;
      const start = d.range.start.line === i ? d.range.start.character : 0;
      const end = d.range.end.line === i ? Math.max(d.range.end.character, start + 1) : line.length;
      marks.push({ start, end, colour: SEVERITY_COLOUR[d.severity ?? 1] });
    }
    let html = "";
    for (const t of tokens[i]) {
      const piece = line.slice(t.start, t.end);
      if (!piece) continue;
      const c = colour(t.scopes);
      const mark = marks.find((m) => t.start < m.end && t.end > m.start);
      const style = [c ? `color:${c}` : "", mark ? `text-decoration:underline wavy ${mark.colour};text-decoration-skip-ink:none` : ""].filter(Boolean).join(";");
      html += style ? `<span style="${style}">${escapeXml(piece)}</span>` : escapeXml(piece);
    }
    for (const h of data.hints.filter((h) => h.line === i)) {
      html += `<span class="hint">${escapeXml(h.label)}</span>`;
    }
    if (data.hover && data.hover.line === i) {
      const md = new MarkdownIt({ html: false });
      html += `<div class="hover" style="margin-left:${indent + 4}ch">${md.render(data.hover.markdown)}</div>`;
    }
    rows.push(`<div class="row"><span class="num">${i + 1}</span><span class="code">${html}</span></div>`);
  });
  const status = statusOf(data.lenses.map((l) => l.lens));
  const statusText = escapeXml(status.text.replace(/^\$\(pulse\)\s*/, ""));
  const errors = data.diagnostics.filter((d) => (d.severity ?? 1) === 1).length;
  const warnings = data.diagnostics.filter((d) => d.severity === 2).length;
  const page = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${escapeXml(path.basename(file))}</title>
<style>
html, body { margin: 0; background: #1f1f1f; }
body { font-family: "DejaVu Sans", sans-serif; color: #cccccc; width: 1280px; }
.tabs { background: #181818; height: 35px; display: flex; align-items: stretch; border-bottom: 1px solid #2b2b2b; }
.tab { background: #1f1f1f; color: #ffffff; padding: 0 16px; display: flex; align-items: center; font-size: 13px; border-top: 1px solid #0078d4; }
.tab .icon { width: 16px; height: 16px; margin-right: 6px; }
.editor { font-family: "DejaVu Sans Mono", monospace; font-size: 14px; line-height: 19px; padding: 6px 0 10px; color: #cccccc; }
.code { white-space: pre; }
.row { display: flex; min-height: 19px; }
.num { width: 48px; text-align: right; padding-right: 22px; color: #6e7681; flex: none; }
.code { flex: 1; position: relative; }
.hint { font-size: 12.5px; color: #969696; background: rgba(97, 97, 97, 0.22); border-radius: 3px; padding: 0 4px; margin-left: 8px; }
.lens .code { font-size: 12px; }
.lenstext { color: #999999; font-family: "DejaVu Sans", sans-serif; }
.hover { position: absolute; z-index: 2; top: 21px; left: 0; max-height: 440px; overflow: hidden; white-space: normal; width: 560px; background: #202020; border: 1px solid #454545; border-radius: 3px; box-shadow: 0 2px 8px rgba(0,0,0,0.6); padding: 4px 10px; font-family: "DejaVu Sans", sans-serif; font-size: 13px; line-height: 1.45; color: #cccccc; }
.hover code { font-family: "DejaVu Sans Mono", monospace; font-size: 12.5px; color: #d7ba7d; }
.hover p, .hover ul { margin: 5px 0; }
.hover ul { padding-left: 18px; }
.hover table { border-collapse: collapse; font-size: 12.5px; }
.hover td, .hover th { padding: 1px 8px 1px 0; text-align: left; }
.status { background: #181818; border-top: 1px solid #2b2b2b; height: 22px; display: flex; align-items: center; font-size: 12px; color: #cccccc; padding: 0 8px; gap: 14px; }
.status .item { display: flex; align-items: center; gap: 4px; padding: 0 5px; height: 22px; }
.status .warning { background: #8f6d00; color: #fff; }
.status .error { background: #c72e0f; color: #fff; }
.status .right { margin-left: auto; }
.caption { font-size: 11px; color: #8a8a8a; padding: 6px 12px; background: #181818; }
</style></head>
<body>
<div class="tabs"><div class="tab"><img class="icon" src="${pathToFileURL(path.join(HERE, "icons/net.svg"))}">${escapeXml(path.basename(file))}</div></div>
<div class="editor">
${rows.join("")}
</div>
<div class="status">
  <span class="item">⊗ ${errors} ⚠ ${warnings}</span>
  <span class="item ${status.level === "error" || status.level === "warning" ? status.level : ""}"><svg width="14" height="14" viewBox="0 0 16 16"><path d="M1 8h3l2-5 3 10 2-5h4" stroke="currentColor" fill="none" stroke-width="1.4"/></svg>${statusText}</span>
  <span class="item right">netc</span><span class="item">UTF-8</span><span class="item">LF</span>
</div>
<div class="caption">Static HTML rendering (not VS Code itself): text coloured by the extension's TextMate grammar with Dark+ colours; inlay hints, code lenses, diagnostics${data.hover ? ", the hover" : ""} from netc lsp; the status-bar text from the extension's code.</div>
</body></html>
`;
  const htmlPath = out.replace(/\.png$/, "") + ".html";
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmpHtml = path.join(HERE, "out", path.basename(htmlPath));
  fs.mkdirSync(path.dirname(tmpHtml), { recursive: true });
  fs.writeFileSync(tmpHtml, page);
  console.log(`wrote ${tmpHtml}`);
  const height = 35 + 16 + 19 * (rows.length + 1) + 22 + 30;
  try {
    execFileSync(process.env.CHROMIUM ?? "chromium", [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      "--allow-file-access-from-files",
      `--window-size=1280,${height}`,
      `--screenshot=${out}`,
      pathToFileURL(tmpHtml).toString(),
    ], { stdio: "inherit" });
    console.log(`wrote ${out}`);
  } catch (e) {
    console.error(`no screenshot (is Chromium installed? set CHROMIUM): ${e}`);
    process.exitCode = 1;
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
