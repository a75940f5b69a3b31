// Running the `netc` command line for the report view: `netc report` as Markdown and JSON,
// and the timelines netc draws itself (`netc report --svg`) when the installed netc has
// them. No `vscode` import: unit-tested against the real binary.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { ScenarioJson } from "./timeline";

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** Runs `command args` in `cwd`; never rejects. `code` is null when it could not start. */
export function run(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, maxBuffer: 256 * 1024 * 1024, timeout: 120_000, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        const raw = (error as NodeJS.ErrnoException | null)?.code as unknown;
        const code = !error ? 0 : typeof raw === "number" ? raw : null;
        resolve({ code, stdout: String(stdout), stderr: String(stderr), error: error ?? undefined });
      },
    );
  });
}

/** How a netc writes SVG timelines, read from `netc report --help`. */
export type SvgMode = "format" | "flag" | "flag-file" | "none";

export function svgModeOf(help: string): SvgMode {
  if (/^\s*-\s*svg\s*:/m.test(help)) return "format"; // --format svg
  if (/--svg[ =]<[^>]+>/.test(help) || /--svg[ =][A-Z]+\b/.test(help)) return "flag-file"; // --svg FILE
  if (/--svg\b/.test(help)) return "flag"; // --svg to standard output
  return "none";
}

/** The first `<svg ...>...</svg>` of a text. */
export function extractSvg(text: string): string | undefined {
  const start = text.indexOf("<svg");
  const end = text.lastIndexOf("</svg>");
  return start >= 0 && end > start ? text.slice(start, end + "</svg>".length) : undefined;
}

const modes = new Map<string, SvgMode>();

export async function svgMode(netc: string, cwd: string): Promise<SvgMode> {
  let mode = modes.get(netc);
  if (!mode) {
    const help = await run(netc, ["report", "--help"], cwd);
    mode = svgModeOf(help.stdout + help.stderr);
    modes.set(netc, mode);
  }
  return mode;
}

/** The timelines netc draws itself, by scenario name (empty when this netc has none). */
export async function netcSvgs(netc: string, file: string, cwd: string, scenarios: ScenarioJson[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const mode = await svgMode(netc, cwd);
  if (mode === "none") return out;
  // A scenario that was not simulated (it has an `error`) has no timeline.
  for (const s of scenarios.filter((s) => s.error === undefined)) {
    const base = ["report", file, "--scenario", s.name, "--color", "never"];
    let svg: string | undefined;
    if (mode === "format") {
      svg = extractSvg((await run(netc, [...base, "--format", "svg"], cwd)).stdout);
    } else if (mode === "flag") {
      svg = extractSvg((await run(netc, [...base, "--svg"], cwd)).stdout);
    } else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "netc-svg-"));
      try {
        const target = path.join(dir, "timeline.svg");
        await run(netc, [...base, "--format", "json", "--svg", target], cwd);
        if (fs.existsSync(target)) svg = extractSvg(fs.readFileSync(target, "utf8"));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    if (svg) out.set(s.name, svg);
  }
  return out;
}

export interface Report {
  markdown: string;
  scenarios: ScenarioJson[];
  svgs: Map<string, string>;
  /** Why there is no report: what netc printed. */
  error?: string;
  /** The errors netc printed beside a report (exit 1): the program has errors, yet every
   * scenario that simulates is in the report, and the others say why in their place. */
  problems?: string;
}

/** `netc report` of `file` (relative to `cwd`): the Markdown, the JSON's scenarios, the SVGs. */
export async function report(netc: string, file: string, cwd: string): Promise<Report> {
  const [md, json] = await Promise.all([
    run(netc, ["report", file, "--format", "markdown", "--color", "never"], cwd),
    run(netc, ["report", file, "--format", "json", "--color", "never"], cwd),
  ]);
  // Exit 1 with a report on standard output: errors in the program, which netc reports beside
  // every scenario it could simulate (a netc before 0.2 printed nothing then). Anything else
  // without output (a usage error, a file that cannot be read): no report, only why.
  const reported = md.code === 0 || (md.code === 1 && md.stdout.trim() !== "");
  if (!reported) {
    const error = md.stderr || md.stdout || md.error?.message || `netc report exited with ${md.code}`;
    return { markdown: "", scenarios: [], svgs: new Map(), error };
  }
  const problems = md.code === 0 ? undefined : md.stderr || `netc report exited with ${md.code}`;
  let scenarios: ScenarioJson[] = [];
  try {
    scenarios = (JSON.parse(json.stdout) as { scenarios?: ScenarioJson[] }).scenarios ?? [];
  } catch {
    // An older netc without JSON: the Markdown alone.
  }
  const svgs = await netcSvgs(netc, file, cwd, scenarios).catch(() => new Map<string, string>());
  return { markdown: md.stdout, scenarios, svgs, problems };
}
