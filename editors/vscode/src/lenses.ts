// The scenarios of a file as the server's code lenses describe them, and the status-bar text
// made from them. No `vscode` import: unit-tested.

/** One scenario lens: `● active · 351.3 MiB of 1.0 GiB budget (34 %) · 11,689,512 params · ...`. */
export interface ScenarioLens {
  /** The scenario's name. */
  name: string;
  /** The URI of its file (the command's first argument). */
  uri: string;
  /** Whether it is the file's active scenario. */
  active: boolean;
  /** The figures after the marker: memory, params, MACs (or why there are none). */
  figures: string;
  /** The memory part: `351.3 MiB of 1.0 GiB budget (34 %)` or `351.3 MiB total`. */
  memory?: string;
  /** The memory needed, as printed: `351.3 MiB`. */
  needed?: string;
  /** The budget, as printed: `1.0 GiB`. */
  budget?: string;
  /** What the memory needed is of the budget, in percent. */
  percent?: number;
  /** The memory needed in bytes, from the lens's data (servers that send it). */
  neededBytes?: number;
  /** The budget in bytes, from the lens's data. */
  budgetBytes?: number;
}

/** The figures a lens carries as numbers (`data`, spec/lsp.md): read them rather than the title. */
interface LensData {
  active?: unknown;
  totalBytes?: unknown;
  budgetBytes?: unknown;
}

/** The command of the lenses: `[uri, scenario name]`. */
export const SET_ACTIVE_SCENARIO = "netc.setActiveScenario";

const ACTIVE = "● active · ";
const INACTIVE = "○ set active · ";

/** Reads a lens's title, command arguments and data; `undefined` for a lens that is no
 * scenario's. The numbers in `data`, when the server sends them, win over the title's text. */
export function parseLens(
  title: string,
  command: string | undefined,
  args: unknown[] | undefined,
  data?: unknown,
): ScenarioLens | undefined {
  if (command !== SET_ACTIVE_SCENARIO || !args || args.length < 2) return undefined;
  const [uri, name] = args;
  if (typeof uri !== "string" || typeof name !== "string") return undefined;
  let active = false;
  let figures = title;
  if (title.startsWith(ACTIVE)) {
    active = true;
    figures = title.slice(ACTIVE.length);
  } else if (title.startsWith(INACTIVE)) {
    figures = title.slice(INACTIVE.length);
  }
  const lens: ScenarioLens = { name, uri, active, figures };
  const memory = figures.split(" · ")[0];
  const ofBudget = /^(.+?) of (.+?) budget \((\d+) %\)$/.exec(memory);
  const total = /^(.+?) total$/.exec(memory);
  if (ofBudget) {
    lens.memory = memory;
    lens.needed = ofBudget[1];
    lens.budget = ofBudget[2];
    lens.percent = Number(ofBudget[3]);
  } else if (total) {
    lens.memory = memory;
    lens.needed = total[1];
  }
  if (data && typeof data === "object") {
    const d = data as LensData;
    if (typeof d.active === "boolean") lens.active = d.active;
    if (typeof d.totalBytes === "number") lens.neededBytes = d.totalBytes;
    if (typeof d.budgetBytes === "number") lens.budgetBytes = d.budgetBytes;
    if (lens.neededBytes !== undefined && lens.budgetBytes !== undefined && lens.budgetBytes > 0) {
      lens.percent = Math.floor((lens.neededBytes * 100) / lens.budgetBytes);
    }
  }
  return lens;
}

/** What the status bar shows for a file. */
export interface Status {
  text: string;
  tooltip: string;
  /** `error` at 100 % (over budget), `warning` at 67 % or more (the default safety margin is 1.5). */
  level: "ok" | "warning" | "error" | "none";
}

/** The status of a file from its scenario lenses. */
export function statusOf(lenses: ScenarioLens[]): Status {
  const active = lenses.find((l) => l.active);
  if (!active) {
    if (lenses.length === 0) {
      return {
        text: "$(pulse) netc",
        tooltip:
          "This file declares no scenario: its hints come from a scenario of another file that runs its lines. Click to choose the active scenario.",
        level: "none",
      };
    }
    return {
      text: "$(pulse) netc: no figures",
      tooltip: `No scenario of this file elaborates (${lenses.map((l) => l.name).join(", ")}). Click to choose the active scenario.`,
      level: "none",
    };
  }
  const others = lenses.length > 1 ? `\n\nOther scenarios of this file: ${lenses.filter((l) => !l.active).map((l) => l.name).join(", ")}.` : "";
  const tooltip = `Active scenario \`${active.name}\`: ${active.figures}${others}\n\nClick to choose the active scenario.`;
  if (active.needed && active.budget && active.percent !== undefined) {
    const level = active.percent >= 100 ? "error" : active.percent >= 67 ? "warning" : "ok";
    return { text: `$(pulse) ${active.name}: ${active.needed} / ${active.budget} (${active.percent} %)`, tooltip, level };
  }
  if (active.needed) {
    return { text: `$(pulse) ${active.name}: ${active.needed} (no budget)`, tooltip, level: "ok" };
  }
  return { text: `$(pulse) ${active.name}: no figures`, tooltip, level: "none" };
}
