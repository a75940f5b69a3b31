// The settings the server receives (spec/lsp.md, "Settings"), made from the extension's.
// No `vscode` import: unit-tested.

/** The scenario chosen as active: a file (URI or path) and a name. */
export interface ScenarioChoice {
  file: string;
  name: string;
}

export type LintLevel = "allow" | "warn" | "deny";

export interface ServerSettings {
  inlayHints: {
    enabled: boolean;
    shape: boolean;
    bytes: boolean;
    params: boolean;
    macs: boolean;
    instances: boolean;
    maxLength: number;
  };
  activeScenario?: ScenarioChoice;
  /** Lint levels by name or code, as `netc check -A/-W/-D` takes them. */
  lints: Record<string, LintLevel>;
}

/** Reads a setting of the `netc` section: `get("inlayHints.shape")`. */
export type Getter = (key: string) => unknown;

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === "boolean" ? value : fallback;
}

/**
 * The server's settings. `chosen` is the scenario picked with the command (it wins over the
 * `netc.activeScenario` setting); `toUri` turns a path relative to the workspace into a URI.
 */
export function serverSettings(get: Getter, chosen: ScenarioChoice | undefined, toUri: (file: string) => string): ServerSettings {
  const maxLength = get("inlayHints.maxLength");
  const settings: ServerSettings = {
    inlayHints: {
      enabled: bool(get("inlayHints.enabled"), true),
      shape: bool(get("inlayHints.shape"), true),
      bytes: bool(get("inlayHints.bytes"), true),
      params: bool(get("inlayHints.params"), false),
      macs: bool(get("inlayHints.macs"), false),
      instances: bool(get("inlayHints.instances"), true),
      maxLength: typeof maxLength === "number" && Number.isFinite(maxLength) ? Math.min(200, Math.max(8, Math.round(maxLength))) : 30,
    },
    lints: lintLevels(get("lints")),
  };
  const scenario = chosen ?? scenarioSetting(get("activeScenario"));
  if (scenario) {
    settings.activeScenario = chosen ? scenario : { file: toUri(scenario.file), name: scenario.name };
  }
  return settings;
}

function scenarioSetting(value: unknown): ScenarioChoice | undefined {
  if (!value || typeof value !== "object") return undefined;
  const { file, name } = value as Record<string, unknown>;
  if (typeof file !== "string" || typeof name !== "string" || !file || !name) return undefined;
  return { file, name };
}

function lintLevels(value: unknown): Record<string, LintLevel> {
  const out: Record<string, LintLevel> = {};
  if (!value || typeof value !== "object") return out;
  for (const [name, level] of Object.entries(value as Record<string, unknown>)) {
    if (level === "allow" || level === "warn" || level === "deny") out[name] = level;
  }
  return out;
}
