/** VS Code glue: starts the language client, status bar, commands. Logic lives in the pure modules. */
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
} from 'vscode-languageclient/node';
import { SERVER_COMMANDS, EXPLAIN_COMMAND, irLanguageId, positionArguments, replyText, routeLensCommand } from './documents';
import { documentSelector, executable, updateTarget } from './launch';
import { profilePickItems, statusText, statusTooltip } from './profiles';
import { resolveServer, type Probe } from './serverPath';
import { SECTION, serverSettings, type Json } from './settings';
import { nodeProbe } from './system';

export const COMMANDS = {
  explainFunction: EXPLAIN_COMMAND,
  showIR: 'cclsCost.showIR',
  setProfile: 'cclsCost.setProfile',
  setRegion: 'cclsCost.setRegion',
  restartServer: 'cclsCost.restartServer',
} as const;

const OPEN_SETTINGS = 'Open Settings';
const RESULT_SCHEME = 'ccls-cost';

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext, probe: Probe = nodeProbe): Promise<Controller> {
  const output = vscode.window.createOutputChannel('ccls');
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = COMMANDS.setProfile;
  const results = new ResultDocuments();
  controller = new Controller(output, status, probe, results);
  const c = controller;
  context.subscriptions.push(
    output,
    status,
    vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, results),
    vscode.commands.registerCommand(COMMANDS.explainFunction, (uri?: string, position?: { line: number; character: number }) => c.explainFunction(uri, position)),
    vscode.commands.registerCommand(COMMANDS.showIR, () => c.showIR()),
    vscode.commands.registerCommand(COMMANDS.setProfile, () => c.pickProfile()),
    vscode.commands.registerCommand(COMMANDS.setRegion, () => c.askRegion()),
    vscode.commands.registerCommand(COMMANDS.restartServer, () => c.restart()),
    vscode.workspace.onDidChangeConfiguration((event) => c.onConfigurationChanged(event)),
  );
  c.updateStatus();
  status.show();
  await c.start();
  return c;
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}

/** Read-only virtual documents for command results (no "save changes?" prompt on close). */
class ResultDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private counter = 0;

  add(name: string, extension: string, text: string): vscode.Uri {
    this.counter += 1;
    const safe = name.replace(/[^\w.-]+/g, '_').slice(0, 60) || 'result';
    const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${this.counter}/${safe}.${extension}` });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

export class Controller {
  client: LanguageClient | undefined;
  serverVersion: string | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly status: vscode.StatusBarItem,
    private readonly probe: Probe,
    private readonly results: ResultDocuments,
  ) {}

  /** Resolves the executable and starts the client; on failure says why and how to fix it. */
  async start(): Promise<boolean> {
    const resolution = await resolveServer(this.config().get<string>('server.path'), this.probe);
    if (!resolution.ok) {
      this.output.appendLine(resolution.message);
      this.updateStatus();
      void this.offerSettings(`ccls: ${resolution.message}`);
      return false;
    }
    const server = resolution.server;
    this.output.appendLine(`Starting ${server.command} ${server.args.join(' ')} (${server.version})`);
    const client = new LanguageClient('ccls', 'ccls', executable(server, process.env), this.clientOptions());
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      this.updateStatus();
      void this.offerSettings(`ccls: ${server.command} did not start as a language server: ${errorText(error)}`);
      return false;
    }
    this.serverVersion = server.version;
    this.updateStatus();
    return true;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.serverVersion = undefined;
    if (client !== undefined) {
      try {
        await client.stop();
      } catch (error) {
        this.output.appendLine(`Stopping the server: ${errorText(error)}`);
      }
    }
    this.updateStatus();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> | undefined {
    // Other settings reach the running server through didChangeConfiguration (see clientOptions).
    if (event.affectsConfiguration(`${SECTION}.profile`) || event.affectsConfiguration(`${SECTION}.region`)) {
      this.updateStatus();
    }
    if (event.affectsConfiguration(`${SECTION}.server.path`)) {
      return this.restart();
    }
    return undefined;
  }

  updateStatus(): void {
    const config = this.config();
    this.status.text = statusText(config.get('profile'));
    this.status.tooltip = statusTooltip(config.get('profile'), config.get('region'), this.serverVersion);
    this.status.backgroundColor = this.client === undefined ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  async pickProfile(): Promise<void> {
    const config = this.config();
    const current = config.get<string>('profile') ?? 'DEFAULT';
    const picked = await vscode.window.showQuickPick(profilePickItems(config.get('customProfiles'), current), {
      title: 'ccls: scoring profile',
      placeHolder: `Current: ${current}`,
    });
    if (picked !== undefined) {
      await this.write('profile', picked.label);
    }
  }

  async askRegion(): Promise<void> {
    const current = this.config().get<string>('region') ?? 'WORLD';
    const region = await vscode.window.showInputBox({
      title: 'ccls: electricity region',
      value: current,
      prompt: 'A region id from the server\'s cost_tables/regions.json (WORLD for the world average). The server reports an unknown id.',
    });
    if (region !== undefined && region.trim() !== '') {
      await this.write('region', region.trim());
    }
  }

  async explainFunction(uri?: string, position?: { line: number; character: number }): Promise<void> {
    const reply = await this.runAtPosition(SERVER_COMMANDS.explainFunction, 'explanation', uri, position);
    if (reply === undefined) {
      return;
    }
    const doc = await vscode.workspace.openTextDocument(this.results.add('explain', 'md', reply));
    try {
      await vscode.commands.executeCommand('markdown.showPreviewToSide', doc.uri);
    } catch {
      // The built-in markdown extension is disabled: show the markdown source instead.
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }
  }

  async showIR(): Promise<void> {
    const reply = await this.runAtPosition(SERVER_COMMANDS.showIR, 'IR/PTX', undefined, undefined);
    if (reply === undefined) {
      return;
    }
    const language = irLanguageId(reply);
    const doc = await vscode.workspace.openTextDocument(this.results.add('function', language === 'ptx' ? 'ptx' : 'll', reply));
    await vscode.languages.setTextDocumentLanguage(doc, language);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  private async runAtPosition(
    command: string,
    what: string,
    uri: string | undefined,
    position: { line: number; character: number } | undefined,
  ): Promise<string | undefined> {
    if (this.client === undefined) {
      void this.offerSettings('ccls: the server is not running. Run "ccls: Restart Server" after fixing ccls.server.path.');
      return undefined;
    }
    if (uri === undefined || position === undefined) {
      const editor = vscode.window.activeTextEditor;
      if (editor === undefined) {
        void vscode.window.showInformationMessage(`ccls: open a source file and put the cursor in a function to see its ${what}.`);
        return undefined;
      }
      uri = editor.document.uri.toString();
      position = { line: editor.selection.active.line, character: editor.selection.active.character };
    }
    let reply: unknown;
    try {
      reply = await this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: positionArguments(uri, position.line, position.character) });
    } catch (error) {
      void vscode.window.showErrorMessage(`ccls: ${command} failed: ${errorText(error)}`);
      return undefined;
    }
    const { text, error } = replyText(reply, what);
    if (error !== undefined) {
      void vscode.window.showInformationMessage(error);
    }
    return text;
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: documentSelector(),
      outputChannel: this.output,
      initializationOptions: this.settings(),
      synchronize: { configurationSection: SECTION },
      middleware: {
        workspace: {
          // Answer with the filtered section (no client-only keys, no "unset" placeholders).
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            if (!Array.isArray(answer)) {
              return answer;
            }
            return params.items.map((item, i) => (item.section !== undefined && item.section !== null && (item.section === SECTION || item.section.startsWith(`${SECTION}.`))
              ? subsection(this.settings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined), item.section)
              : answer[i]));
          },
          didChangeConfiguration: async () => {
            await this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: this.settings() } });
          },
        },
        provideCodeLenses: async (document, token, next) => {
          const lenses = await next(document, token);
          lenses?.forEach((lens) => { lens.command = routeLensCommand(lens.command); });
          return lenses;
        },
        resolveCodeLens: async (lens, token, next) => {
          const resolved = await next(lens, token);
          if (resolved) {
            resolved.command = routeLensCommand(resolved.command);
          }
          return resolved;
        },
      },
    };
  }

  private settings(scope?: vscode.Uri): { [key: string]: Json } {
    const config = vscode.workspace.getConfiguration(SECTION, scope);
    return serverSettings((key) => config.get(key));
  }

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(SECTION);
  }

  private async write(key: string, value: string): Promise<void> {
    const config = this.config();
    const target = updateTarget(config.inspect(key), (vscode.workspace.workspaceFolders?.length ?? 0) > 0);
    await config.update(key, value, target === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
  }

  private async offerSettings(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, OPEN_SETTINGS);
    if (choice === OPEN_SETTINGS) {
      await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.server.path`);
    }
  }
}

function subsection(section: { [key: string]: Json }, name: string): Json {
  let node: Json = section;
  for (const part of name.split('.').slice(1)) {
    node = node !== null && typeof node === 'object' && !Array.isArray(node) ? (node[part] ?? null) : null;
  }
  return node;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
