// The report view: the Markdown of `netc report --format markdown` rendered to HTML, with each
// scenario's memory timeline (an SVG) after its table. No `vscode` import: unit-tested.
import MarkdownIt from "markdown-it";

import { escapeXml, ScenarioJson, timelineSvg } from "./timeline";

const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

export interface ReportInput {
  /** The file's name as shown in the title. */
  fileName: string;
  /** `netc report --format markdown` output (empty when it failed). */
  markdown: string;
  /** The scenarios of `netc report --format json`, in the same order as the Markdown's. */
  scenarios: ScenarioJson[];
  /** SVGs from `netc report --svg`, by scenario name; drawn here when missing. */
  svgs?: Map<string, string>;
  /** Why there is no report (the errors netc printed). */
  error?: string;
  /** Errors netc printed beside the report (shown above it, folded). */
  problems?: string;
  /** The document has unsaved changes: the report is of the file on disk. */
  dirty?: boolean;
  /** The webview's CSP source. */
  cspSource: string;
}

/** Splits the Markdown at each scenario's `### ` heading: [preamble, section, section, ...]. */
export function splitSections(md: string): string[] {
  const lines = md.split("\n");
  const sections: string[][] = [[]];
  for (const line of lines) {
    if (line.startsWith("### ")) sections.push([]);
    sections[sections.length - 1].push(line);
  }
  return sections.map((s) => s.join("\n"));
}

/** The scenario name of a section's heading: ``### train scenario `imagenet` (...)``. */
export function sectionScenario(section: string): string | undefined {
  const m = /^### \S+ scenario `([^`]+)`/.exec(section);
  return m?.[1];
}

const STYLE = `
body { font-family: var(--vscode-font-family, sans-serif); font-size: var(--vscode-font-size, 13px); color: var(--vscode-foreground); padding: 0 16px 24px; }
h1 { font-size: 1.4em; }
h3 { margin-top: 1.8em; border-bottom: 1px solid var(--vscode-panel-border, #8884); padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.92em; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--vscode-panel-border, #8884); padding: 2px 8px; white-space: nowrap; }
th { background: var(--vscode-editorWidget-background, #8881); }
code { font-family: var(--vscode-editor-font-family, monospace); font-size: 0.95em; }
td code { white-space: pre; }
.note { padding: 6px 10px; border-left: 3px solid var(--vscode-editorWarning-foreground, #d97706); background: var(--vscode-editorWidget-background, #8881); }
.error { white-space: pre-wrap; font-family: var(--vscode-editor-font-family, monospace); padding: 8px; border-left: 3px solid var(--vscode-editorError-foreground, #dc2626); }
.problems { margin: 8px 0; }
.timeline { margin: 12px 0 4px; color: var(--vscode-foreground); }
.timeline svg { max-width: 100%; height: auto; }
`;

/** The whole HTML page of the report. */
export function reportHtml(input: ReportInput): string {
  const csp = `default-src 'none'; style-src ${input.cspSource} 'unsafe-inline'; img-src ${input.cspSource} data:;`;
  const body: string[] = [`<h1>netc report: ${escapeXml(input.fileName)}</h1>`];
  if (input.dirty) {
    body.push(`<p class="note">The file has unsaved changes: this report is of the file as saved. Save it to update the report.</p>`);
  }
  if (input.error !== undefined) {
    body.push(`<p>netc cannot report on this file:</p><div class="error">${escapeXml(input.error.trim())}</div>`);
  } else {
    if (input.problems !== undefined) {
      body.push(
        `<details class="problems"><summary>netc found errors: scenarios they stop say so below; the others are reported.</summary><div class="error">${escapeXml(input.problems.trim())}</div></details>`,
      );
    }
    const sections = splitSections(input.markdown);
    const [preamble, ...scenarios] = sections;
    if (preamble.trim()) body.push(markdown.render(preamble));
    if (scenarios.length === 0) {
      body.push("<p>This file declares no scenario (<code>train</code> or <code>infer</code>): there is nothing to report.</p>");
    }
    scenarios.forEach((section, i) => {
      body.push(markdown.render(section));
      const name = sectionScenario(section);
      const json = input.scenarios.find((s, j) => s.name === name && j === i) ?? input.scenarios.find((s) => s.name === name);
      const svg = (name !== undefined ? input.svgs?.get(name) : undefined) ?? (json ? timelineSvg(json) : undefined);
      if (svg) body.push(`<div class="timeline">${svg}</div>`);
    });
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>netc report</title>
<style>${STYLE}</style>
</head>
<body>
${body.join("\n")}
</body>
</html>
`;
}
