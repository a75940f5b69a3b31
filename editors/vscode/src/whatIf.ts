// The answer of the server's `netc.whatIf` command (spec/lsp.md) as one line for a message.
// No `vscode` import: unit-tested.

import { formatBytes } from "./timeline";

/** The server's command: `[uri, scenario name, settings as a scenario writes them]`. */
export const WHAT_IF = "netc.whatIf";

/** What a message shows: the text, and whether it is an error. */
export interface WhatIfMessage {
  text: string;
  error: boolean;
}

interface ReportJson {
  total_bytes?: unknown;
  budget_bytes?: unknown;
  peak_phase?: unknown;
  peak_op?: unknown;
  peak_line?: unknown;
}

/** `serve` with `batch 64  device h100_80gb`: 3.2 GiB of its 1.0 GiB budget (320 %); peak in
 * forward, `conv2d` (resnet18.net:12). Errors: the first one, and how many more. */
export function whatIfMessage(scenario: string, settings: string, answer: unknown): WhatIfMessage {
  const what = `\`${scenario}\` with \`${settings.trim().replace(/\s+/g, " ")}\``;
  const errors = (answer as { errors?: unknown })?.errors;
  if (Array.isArray(errors) && errors.length > 0) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : "";
    return { text: `netc: ${what}: ${String(errors[0])}${more}`, error: true };
  }
  const report = (answer as { report?: ReportJson })?.report;
  if (!report || typeof report.total_bytes !== "number") {
    return { text: `netc: ${what}: no answer from the language server`, error: true };
  }
  const total = formatBytes(report.total_bytes);
  const budget = typeof report.budget_bytes === "number" && report.budget_bytes > 0 ? report.budget_bytes : undefined;
  const needs = budget
    ? `${total} of its ${formatBytes(budget)} budget (${Math.round((100 * report.total_bytes) / budget)} %)`
    : `${total}`;
  const line = typeof report.peak_line === "string" ? ` (${report.peak_line.split(/[\\/]/).pop()})` : "";
  const peak =
    typeof report.peak_phase === "string" && typeof report.peak_op === "string"
      ? `; peak in ${report.peak_phase}, \`${report.peak_op}\`${line}`
      : "";
  return { text: `netc: ${what} needs ${needs}${peak}`, error: false };
}
