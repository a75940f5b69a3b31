// Finding the `netc` executable: the `netc.path` setting, the server bundled in a platform
// build of the extension, `PATH`. No `vscode` import: unit-tested.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The command that installs netc, shown when it cannot be found (the wheel has the binary). */
export const INSTALL_COMMAND = "pip install netc";

/** Where a platform build of the extension carries the server, relative to the extension. */
export function bundledServer(extensionPath: string, platform: NodeJS.Platform = process.platform): string {
  const paths = platform === "win32" ? path.win32 : path.posix;
  return paths.join(extensionPath, "server", platform === "win32" ? "netc.exe" : "netc");
}

export interface Lookup {
  /** `PATH`. */
  pathEnv: string | undefined;
  /** The home directory (for `~` and `~/.cargo/bin`). */
  home: string;
  /** The first workspace folder, for relative paths and `${workspaceFolder}`. */
  workspaceFolder: string | undefined;
  /** `process.platform`. */
  platform: NodeJS.Platform;
  /** Whether a file exists and can be run. */
  isExecutable: (file: string) => boolean;
  /** The server this build of the extension carries (`server/netc`), if it is a platform build. */
  bundled?: string;
}

export function defaultLookup(workspaceFolder: string | undefined, extensionPath?: string): Lookup {
  return {
    pathEnv: process.env.PATH,
    home: os.homedir(),
    workspaceFolder,
    platform: process.platform,
    isExecutable,
    bundled: extensionPath ? bundledServer(extensionPath) : undefined,
  };
}

function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (process.platform !== "win32") fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface Resolution {
  /** The executable found, if any. */
  found?: string;
  /** Every place that was looked at, in order. */
  tried: string[];
}

/**
 * Resolves the `netc.path` setting, as rust-analyzer resolves its server: a setting the user
 * made wins; without one (empty, the default), the server bundled in a platform build of the
 * extension; without that, `netc` on `PATH`, then in `~/.cargo/bin` (where `cargo install`
 * puts it, often missing from the PATH of an editor started from a desktop).
 *
 * A bare name (`netc`) is looked up on `PATH`, then in `~/.cargo/bin`. A path (with a
 * separator) is taken as is, after expanding `~` and `${workspaceFolder}`; a relative one is
 * relative to the first workspace folder.
 */
export function resolveNetc(setting: string | undefined, lookup: Lookup): Resolution {
  let value = (setting ?? "").trim();
  const tried: string[] = [];
  if (!value) {
    if (lookup.bundled) {
      tried.push(lookup.bundled);
      if (lookup.isExecutable(lookup.bundled)) return { found: lookup.bundled, tried };
    }
    value = "netc";
  }
  const folder = lookup.workspaceFolder;
  if (folder) value = value.split("${workspaceFolder}").join(folder);
  const windows = lookup.platform === "win32";
  const paths = windows ? path.win32 : path.posix;
  if (value === "~" || value.startsWith("~/")) value = paths.join(lookup.home, value.slice(1));
  const names = windows && !/\.(exe|cmd|bat)$/i.test(value) ? [value + ".exe", value] : [value];
  const hasSeparator = value.includes("/") || (windows && value.includes("\\"));
  if (hasSeparator || paths.isAbsolute(value)) {
    const base = paths.isAbsolute(value) ? "" : folder ?? process.cwd();
    for (const name of names) {
      const file = base ? paths.resolve(base, name) : name;
      tried.push(file);
      if (lookup.isExecutable(file)) return { found: file, tried };
    }
    return { tried };
  }
  const dirs = (lookup.pathEnv ?? "").split(windows ? ";" : ":").filter((d) => d.length > 0);
  dirs.push(paths.join(lookup.home, ".cargo", "bin"));
  for (const dir of dirs) {
    for (const name of names) {
      const file = paths.join(dir, name);
      tried.push(file);
      if (lookup.isExecutable(file)) return { found: file, tried };
    }
  }
  return { tried };
}

/** The message shown when netc cannot be found: where it looked, and exactly what to install. */
export function notFoundMessage(setting: string | undefined): string {
  const value = (setting ?? "").trim();
  const where =
    value === "" || value === "netc"
      ? "this build of the extension carries no server, and `netc` is not on PATH (nor in ~/.cargo/bin)"
      : `\`netc.path\` is \`${value}\`, which is not an executable`;
  return (
    `netc was not found: ${where}. Install it with \`${INSTALL_COMMAND}\` (Python 3.9 or newer) or ` +
    "`cargo install netc-cli` (Rust 1.88 or newer), or install the extension's build for your platform, " +
    "which carries the server; or set `netc.path` to the binary. Then run “netc: Restart Language Server”."
  );
}
