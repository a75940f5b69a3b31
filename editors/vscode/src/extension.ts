// The netc extension: starts `netc lsp` with vscode-languageclient, and adds what the
// protocol alone does not give: choosing the active scenario, the report view, the status-bar
// item with the active scenario's memory against its budget, and restarting the server.
//
// What the server offers is in spec/lsp.md. The pure parts (finding netc, reading the lenses,
// the settings, the report page, the timeline) are in modules of their own, unit-tested
// without VS Code.
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CodeLensRequest,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  SymbolKind,
  WorkspaceSymbolRequest,
} from "vscode-languageclient/node";

import { ScenarioLens, SET_ACTIVE_SCENARIO, parseLens, statusOf } from "./lenses";
import { report } from "./netcCli";
import { INSTALL_COMMAND, defaultLookup, notFoundMessage, resolveNetc } from "./netcPath";
import { reportHtml } from "./report";
import { ScenarioChoice, serverSettings } from "./settings";
import { WHAT_IF, whatIfMessage } from "./whatIf";

const LANGUAGE = "netc";
const CHOSEN_KEY = "netc.chosenScenario";

let extension: NetcExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new NetcExtension(context);
  await extension.start();
}

export async function deactivate(): Promise<void> {
  await extension?.stopClient();
  extension = undefined;
}

function isNetc(document: vscode.TextDocument | undefined): document is vscode.TextDocument {
  return document?.languageId === LANGUAGE;
}

/** The active editor's document, when it is a `.net` file. */
function activeNetcDocument(): vscode.TextDocument | undefined {
  const document = vscode.window.activeTextEditor?.document;
  return isNetc(document) ? document : undefined;
}

class NetcExtension {
  private client: LanguageClient | undefined;
  private readonly output: vscode.LogOutputChannel;
  private readonly status: vscode.StatusBarItem;
  private statusTimer: NodeJS.Timeout | undefined;
  private statusGeneration = 0;
  private netc: string | undefined;
  private reportPanel: vscode.WebviewPanel | undefined;
  private reportDocument: vscode.Uri | undefined;
  private lastNetcDocument: vscode.Uri | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel("netc", { log: true });
    this.status = vscode.window.createStatusBarItem("netc.activeScenario", vscode.StatusBarAlignment.Left, 100);
    this.status.name = "netc: active scenario";
    this.status.command = "netc.selectActiveScenario";
    context.subscriptions.push(
      this.output,
      this.status,
      vscode.commands.registerCommand("netc.selectActiveScenario", () => this.selectActiveScenario()),
      vscode.commands.registerCommand("netc.showReport", (uri?: vscode.Uri) => this.showReport(uri)),
      vscode.commands.registerCommand("netc.restartServer", () => this.restart()),
      vscode.commands.registerCommand("netc.askWhatIf", () => this.askWhatIf()),
      vscode.workspace.registerTextDocumentContentProvider("netc-std", {
        provideTextDocumentContent: (uri) => this.stdlibSource(uri),
      }),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (isNetc(editor?.document)) this.lastNetcDocument = editor.document.uri;
        this.scheduleStatus(0);
      }),
      vscode.workspace.onDidSaveTextDocument((document) => {
        if (this.reportPanel && this.reportDocument?.toString() === document.uri.toString()) {
          void this.showReport(document.uri, false);
        }
      }),
    );
    if (isNetc(vscode.window.activeTextEditor?.document)) {
      this.lastNetcDocument = vscode.window.activeTextEditor.document.uri;
    }
  }

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration("netc");
  }

  private workspaceFolder(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  /** The `netc` executable, or `undefined` after telling the user how to install it. */
  private findNetc(quiet = false): string | undefined {
    const setting = this.config().get<string>("path");
    const { found, tried } = resolveNetc(setting, defaultLookup(this.workspaceFolder(), this.context.extensionPath));
    if (found) return found;
    this.output.appendLine(`netc not found; looked at:\n  ${tried.join("\n  ")}`);
    if (!quiet) {
      void vscode.window.showErrorMessage(notFoundMessage(setting), "Copy Install Command", "Open Settings").then((choice) => {
        if (choice === "Copy Install Command") void vscode.env.clipboard.writeText(INSTALL_COMMAND);
        if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "netc.path");
      });
    }
    return undefined;
  }

  private chosen(): ScenarioChoice | undefined {
    return this.context.workspaceState.get<ScenarioChoice>(CHOSEN_KEY);
  }

  private settings() {
    const config = this.config();
    const folder = this.workspaceFolder();
    const toUri = (file: string) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(file) && !/^[a-z]:[\\/]/i.test(file)) return file;
      const absolute = path.isAbsolute(file) ? file : path.resolve(folder ?? process.cwd(), file);
      return vscode.Uri.file(absolute).toString();
    };
    return serverSettings((key) => config.get(key), this.chosen(), toUri);
  }

  async start(): Promise<void> {
    await this.startClient();
  }

  async startClient(): Promise<void> {
    const netc = this.findNetc();
    this.netc = netc;
    if (!netc) {
      this.status.text = "$(error) netc not found";
      this.status.tooltip = notFoundMessage(this.config().get<string>("path"));
      this.status.command = "netc.restartServer";
      this.status.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      this.updateStatusVisibility();
      return;
    }
    this.status.command = "netc.selectActiveScenario";
    this.output.appendLine(`starting ${netc} lsp`);
    const serverOptions: ServerOptions = {
      run: { command: netc, args: ["lsp"] },
      debug: { command: netc, args: ["lsp"] },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: LANGUAGE },
        { scheme: "untitled", language: LANGUAGE },
      ],
      initializationOptions: { netc: this.settings() },
      outputChannel: this.output,
      middleware: {
        // Keep the status bar in step with what the editor shows. The client keeps each
        // lens's `data` on the lens it hands VS Code (its ProtocolCodeLens).
        provideCodeLenses: async (document, token, next) => {
          const lenses = await next(document, token);
          if (lenses && vscode.window.activeTextEditor?.document.uri.toString() === document.uri.toString()) {
            this.showStatus(lenses.map((l) => parseLens(l.command?.title ?? "", l.command?.command, l.command?.arguments, (l as { data?: unknown }).data)).filter((l): l is ScenarioLens => !!l));
          }
          return lenses;
        },
        handleDiagnostics: (uri, diagnostics, next) => {
          next(uri, diagnostics);
          if (vscode.window.activeTextEditor?.document.uri.toString() === uri.toString()) this.scheduleStatus();
        },
        // A click on a lens: remember the choice for the next start.
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          if (command === SET_ACTIVE_SCENARIO && typeof args[0] === "string" && typeof args[1] === "string") {
            await this.context.workspaceState.update(CHOSEN_KEY, { file: args[0], name: args[1] });
            this.scheduleStatus();
          }
          return result;
        },
      },
    };
    const client = new LanguageClient("netc", "netc", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped) this.scheduleStatus(0);
    });
    try {
      await client.start();
    } catch (e) {
      this.output.appendLine(`cannot start ${netc} lsp: ${e}`);
      void vscode.window.showErrorMessage(`netc: cannot start \`${netc} lsp\`: ${e instanceof Error ? e.message : e}. Is it netc 0.1 or newer?`);
    }
    this.scheduleStatus(0);
  }

  async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      if (client.isRunning()) await client.stop(3000);
    } catch (e) {
      this.output.appendLine(`stopping the server: ${e}`);
    }
  }

  async restart(): Promise<void> {
    await this.stopClient();
    await this.startClient();
    if (this.client?.isRunning()) void vscode.window.setStatusBarMessage("netc: language server restarted", 3000);
  }

  private async configurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration("netc")) return;
    if (e.affectsConfiguration("netc.path")) {
      await this.restart();
      return;
    }
    if (e.affectsConfiguration("netc.activeScenario")) {
      // The setting wins over an earlier choice made with the command.
      await this.context.workspaceState.update(CHOSEN_KEY, undefined);
    }
    if (this.client?.isRunning()) {
      await this.client.sendNotification("workspace/didChangeConfiguration", { settings: { netc: this.settings() } });
    }
    this.scheduleStatus();
  }

  private async stdlibSource(uri: vscode.Uri): Promise<string> {
    const text = this.client?.isRunning()
      ? await this.client.sendRequest<string | null>("netc/stdlibSource", { uri: uri.toString() })
      : null;
    return text ?? "# The standard library's source is not available (is the netc language server running?)\n";
  }

  // ---- The active scenario -------------------------------------------------------------------

  private async lenses(document: vscode.TextDocument): Promise<ScenarioLens[]> {
    const client = this.client;
    if (!client?.isRunning()) return [];
    const result = await client.sendRequest(CodeLensRequest.type, {
      textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
    });
    return (result ?? [])
      .map((l) => parseLens(l.command?.title ?? "", l.command?.command, l.command?.arguments, l.data))
      .filter((l): l is ScenarioLens => !!l);
  }

  /** The language client when it runs; otherwise `undefined`, after saying so. */
  private runningClient(): LanguageClient | undefined {
    if (this.client?.isRunning()) return this.client;
    void vscode.window.showWarningMessage("netc: the language server is not running (netc: Restart Language Server).");
    return undefined;
  }

  /** What the active scenario would need with other settings (the server's `netc.whatIf`):
   * the file is not edited. */
  private async askWhatIf(): Promise<void> {
    const client = this.runningClient();
    if (!client) return;
    const document = activeNetcDocument();
    if (!document) {
      void vscode.window.showWarningMessage("netc: open a .net file to ask what its scenario would need.");
      return;
    }
    const lenses = await this.lenses(document).catch(() => []);
    const scenario = lenses.find((l) => l.active) ?? lenses[0];
    if (!scenario) {
      void vscode.window.showWarningMessage("netc: this file has no scenario.");
      return;
    }
    const settings = await vscode.window.showInputBox({
      title: `netc: what would scenario \`${scenario.name}\` need with…`,
      prompt: "Settings as a scenario writes them; the file is not changed",
      placeHolder: "batch 64  device h100_80gb  precision bf16",
    });
    if (!settings?.trim()) return;
    const answer = await client
      .sendRequest(ExecuteCommandRequest.type, { command: WHAT_IF, arguments: [scenario.uri, scenario.name, settings] })
      .catch((e: unknown) => ({ errors: [String(e)] }));
    const message = whatIfMessage(scenario.name, settings, answer);
    if (message.error) void vscode.window.showErrorMessage(message.text);
    else void vscode.window.showInformationMessage(message.text);
  }

  private async selectActiveScenario(): Promise<void> {
    const client = this.runningClient();
    if (!client) return;
    const document = activeNetcDocument();
    type Item = vscode.QuickPickItem & { choice?: ScenarioChoice };
    const items: Item[] = [];
    const seen = new Set<string>();
    if (document) {
      const lenses = await this.lenses(document).catch(() => []);
      if (lenses.length > 0) items.push({ label: "This file", kind: vscode.QuickPickItemKind.Separator });
      for (const l of lenses) {
        seen.add(`${l.uri}\n${l.name}`);
        items.push({
          label: `${l.active ? "$(check) " : ""}${l.name}`,
          description: l.memory ?? "",
          detail: l.figures,
          choice: { file: l.uri, name: l.name },
        });
      }
    }
    // The other scenarios of the workspace (a file of blocks takes its figures from them).
    const symbols = await client.sendRequest(WorkspaceSymbolRequest.type, { query: "" }).catch(() => null);
    const others: Item[] = [];
    for (const s of symbols ?? []) {
      if (s.kind !== SymbolKind.Event || !("uri" in s.location)) continue;
      const uri = s.location.uri;
      if (!uri.startsWith("file:") || seen.has(`${uri}\n${s.name}`)) continue;
      seen.add(`${uri}\n${s.name}`);
      others.push({
        label: s.name,
        description: vscode.workspace.asRelativePath(vscode.Uri.parse(uri)),
        choice: { file: uri, name: s.name },
      });
    }
    if (others.length > 0) items.push({ label: "Other files of the workspace", kind: vscode.QuickPickItemKind.Separator }, ...others);
    if (items.length === 0) {
      void vscode.window.showInformationMessage("netc: no scenario (`train` or `infer`) in this file or the workspace.");
      return;
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: "netc: active scenario",
      placeHolder: "The scenario whose figures hints, hovers, lenses and the status bar show",
      matchOnDescription: true,
    });
    if (!picked?.choice) return;
    await this.setActiveScenario(picked.choice);
  }

  private async setActiveScenario(choice: ScenarioChoice): Promise<void> {
    const client = this.client;
    if (!client?.isRunning()) return;
    await client.sendRequest(ExecuteCommandRequest.type, { command: SET_ACTIVE_SCENARIO, arguments: [choice.file, choice.name] });
    await this.context.workspaceState.update(CHOSEN_KEY, choice);
    this.scheduleStatus(0);
  }

  // ---- The status bar ------------------------------------------------------------------------

  private updateStatusVisibility(): void {
    const enabled = this.config().get<boolean>("statusBar.enabled", true);
    if (enabled && isNetc(vscode.window.activeTextEditor?.document)) this.status.show();
    else this.status.hide();
  }

  private scheduleStatus(delay = 300): void {
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => void this.updateStatus(), delay);
  }

  private async updateStatus(): Promise<void> {
    this.updateStatusVisibility();
    const document = vscode.window.activeTextEditor?.document;
    if (!isNetc(document) || !this.netc) return;
    if (!this.client?.isRunning()) {
      this.status.text = "$(warning) netc: server stopped";
      this.status.tooltip = "The netc language server is not running. Click to restart it.";
      this.status.command = "netc.restartServer";
      this.status.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
      return;
    }
    const generation = ++this.statusGeneration;
    try {
      const lenses = await this.lenses(document);
      if (generation === this.statusGeneration) this.showStatus(lenses);
    } catch {
      // Content modified while computing: the next change schedules another update.
    }
  }

  private showStatus(lenses: ScenarioLens[]): void {
    const s = statusOf(lenses);
    this.status.text = s.text;
    this.status.tooltip = new vscode.MarkdownString(s.tooltip);
    this.status.command = "netc.selectActiveScenario";
    this.status.backgroundColor =
      s.level === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : s.level === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
    this.updateStatusVisibility();
  }

  // ---- The report ----------------------------------------------------------------------------

  private async showReport(uri?: vscode.Uri, reveal = true): Promise<void> {
    const target = uri ?? (isNetc(vscode.window.activeTextEditor?.document) ? vscode.window.activeTextEditor.document.uri : this.lastNetcDocument);
    if (!target) {
      void vscode.window.showInformationMessage("netc: open a .net file to see its report.");
      return;
    }
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
    if (target.scheme !== "file") {
      void vscode.window.showWarningMessage("netc: save the file first; `netc report` reads files from disk.");
      return;
    }
    const netc = this.netc ?? this.findNetc();
    if (!netc) return;
    const filePath = target.fsPath;
    const folder = vscode.workspace.getWorkspaceFolder(target)?.uri.fsPath ?? path.dirname(filePath);
    const file = path.relative(folder, filePath).split(path.sep).join("/");
    const result = await report(netc, file, folder);
    if (result.error) this.output.appendLine(`netc report ${file}: ${result.error}`);
    if (!this.reportPanel) {
      this.reportPanel = vscode.window.createWebviewPanel("netc.report", "netc report", { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: false,
        localResourceRoots: [],
      });
      this.reportPanel.onDidDispose(() => {
        this.reportPanel = undefined;
        this.reportDocument = undefined;
      });
    } else if (reveal) {
      this.reportPanel.reveal(vscode.ViewColumn.Beside, true);
    }
    this.reportDocument = target;
    this.reportPanel.title = `Report: ${path.basename(filePath)}`;
    this.reportPanel.webview.html = reportHtml({
      fileName: file,
      markdown: result.markdown,
      scenarios: result.scenarios,
      svgs: result.svgs,
      error: result.error,
      dirty: document?.isDirty ?? false,
      cspSource: this.reportPanel.webview.cspSource,
    });
  }
}
