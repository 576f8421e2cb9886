/**
 * Stand-ins for the `vscode` module and `vscode-languageclient/node`, installed through Node's
 * module loader so src/extension.ts runs unchanged. They record what the extension asks of the
 * editor; tests assert on those records.
 */
import Module = require('module');
import * as protocol from 'vscode-languageserver-protocol';

type Listener<T> = (event: T) => unknown;

export interface Message {
  kind: 'error' | 'info' | 'warning';
  text: string;
  items: string[];
}

export class FakeClient {
  static instances: FakeClient[] = [];
  started = false;
  stopped = false;
  requests: { method: string; params: any }[] = [];
  notifications: { method: string; params: any }[] = [];

  constructor(readonly id: string, readonly name: string, readonly serverOptions: any, readonly clientOptions: any) {
    FakeClient.instances.push(this);
  }

  async start(): Promise<void> {
    if (fake.failStart !== undefined) {
      throw new Error(fake.failStart);
    }
    this.started = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  async sendRequest(type: { method: string }, params: any): Promise<unknown> {
    this.requests.push({ method: type.method, params });
    return fake.replies(type.method, params);
  }

  async sendNotification(type: { method: string }, params: any): Promise<void> {
    this.notifications.push({ method: type.method, params });
  }
}

class FakeUri {
  constructor(readonly scheme: string, readonly path: string) {}
  static parse(value: string): FakeUri {
    const i = value.indexOf(':');
    return new FakeUri(value.slice(0, i), value.slice(i + 1).replace(/^\/\//, ''));
  }
  static file(path: string): FakeUri {
    return new FakeUri('file', path);
  }
  static from(parts: { scheme: string; path: string }): FakeUri {
    return new FakeUri(parts.scheme, parts.path);
  }
  toString(): string {
    return this.scheme === 'file' ? `file://${this.path}` : `${this.scheme}:${this.path}`;
  }
}

export class FakeEditor {
  /** Mirrors what the extension reads: document uri and the cursor. */
  workspaceFolders: { uri: FakeUri }[] = [{ uri: FakeUri.file('/work/project') }];
  settings = new Map<string, unknown>();
  workspaceSettings = new Map<string, unknown>();
  updates: { key: string; value: unknown; target: number }[] = [];
  commands = new Map<string, (...args: any[]) => unknown>();
  executed: { command: string; args: unknown[] }[] = [];
  messages: Message[] = [];
  statusItems: any[] = [];
  opened: { uri: FakeUri; languageId: string; getText(): string }[] = [];
  shown: unknown[] = [];
  languageChanges: { uri: string; language: string }[] = [];
  contentProviders = new Map<string, { provideTextDocumentContent(uri: FakeUri): string }>();
  configListeners: Listener<{ affectsConfiguration(section: string): boolean }>[] = [];
  activeTextEditor: any = undefined;
  /** Which button the user clicks on the next message, and what quick pick / input box return. */
  clickOnMessage: string | undefined;
  quickPick: (items: { label: string }[]) => { label: string } | undefined = () => undefined;
  inputBox: (value: string | undefined) => string | undefined = () => undefined;
  failCommands = new Set<string>();
  failStart: string | undefined;
  replies: (method: string, params: any) => unknown = () => null;

  /** Fresh state for the next test; `vscode` itself stays, since the extension holds it. */
  reset(): void {
    const fresh = new FakeEditor() as any;
    for (const key of Object.keys(fresh)) {
      if (key !== 'vscode') {
        (this as any)[key] = fresh[key];
      }
    }
    FakeClient.instances = [];
  }

  /** Applies a settings change the way VS Code does: store, then fire onDidChangeConfiguration. */
  async change(key: string, value: unknown): Promise<void> {
    this.settings.set(key, value);
    const event = { affectsConfiguration: (section: string) => key === section || key.startsWith(`${section}.`) };
    for (const listener of this.configListeners) {
      await listener(event);
    }
  }

  readonly vscode = {
    version: '1.95.3',
    Uri: FakeUri,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    ThemeColor: class {
      constructor(readonly id: string) {}
    },
    window: {
      createOutputChannel: (name: string) => ({ name, lines: [] as string[], appendLine(line: string) { this.lines.push(line); }, dispose() {} }),
      createStatusBarItem: (alignment: number, priority: number) => {
        const item = { alignment, priority, text: '', tooltip: '', command: '', visible: false, backgroundColor: undefined, show() { item.visible = true; }, dispose() {} };
        this.statusItems.push(item);
        return item;
      },
      showErrorMessage: async (text: string, ...items: string[]) => this.message('error', text, items),
      showWarningMessage: async (text: string, ...items: string[]) => this.message('warning', text, items),
      showInformationMessage: async (text: string, ...items: string[]) => this.message('info', text, items),
      showQuickPick: async (items: { label: string }[]) => this.quickPick(items),
      showInputBox: async (options: { value?: string }) => this.inputBox(options.value),
      showTextDocument: async (doc: unknown, options: unknown) => {
        this.shown.push({ doc, options });
      },
      get activeTextEditor() {
        return fake.activeTextEditor;
      },
    },
    workspace: {
      get workspaceFolders() {
        return fake.workspaceFolders;
      },
      getConfiguration: (section: string) => this.configuration(section),
      onDidChangeConfiguration: (listener: Listener<any>) => {
        this.configListeners.push(listener);
        return { dispose() {} };
      },
      registerTextDocumentContentProvider: (scheme: string, provider: any) => {
        this.contentProviders.set(scheme, provider);
        return { dispose() {} };
      },
      openTextDocument: async (uri: FakeUri) => {
        const provider = this.contentProviders.get(uri.scheme);
        const text = provider ? provider.provideTextDocumentContent(uri) : '';
        const doc = { uri, languageId: uri.path.endsWith('.md') ? 'markdown' : 'plaintext', getText: () => text };
        this.opened.push(doc);
        return doc;
      },
    },
    languages: {
      setTextDocumentLanguage: async (doc: { uri: FakeUri; languageId: string }, language: string) => {
        this.languageChanges.push({ uri: doc.uri.toString(), language });
        doc.languageId = language;
        return doc;
      },
    },
    commands: {
      registerCommand: (id: string, handler: (...args: any[]) => unknown) => {
        if (this.commands.has(id)) {
          throw new Error(`command '${id}' already exists`);
        }
        this.commands.set(id, handler);
        return { dispose: () => this.commands.delete(id) };
      },
      executeCommand: async (command: string, ...args: unknown[]) => {
        this.executed.push({ command, args });
        if (this.failCommands.has(command)) {
          throw new Error(`command '${command}' not found`);
        }
        return this.commands.get(command)?.(...args);
      },
    },
  };

  private async message(kind: Message['kind'], text: string, items: string[]): Promise<string | undefined> {
    this.messages.push({ kind, text, items });
    const click = this.clickOnMessage;
    this.clickOnMessage = undefined;
    return click !== undefined && items.includes(click) ? click : undefined;
  }

  private configuration(section: string) {
    const full = (key: string) => (section ? `${section}.${key}` : key);
    return {
      get: (key: string, fallback?: unknown) => {
        const k = full(key);
        if (this.settings.has(k)) {
          return this.settings.get(k);
        }
        return this.workspaceSettings.has(k) ? this.workspaceSettings.get(k) : (fallback ?? packageDefault(k));
      },
      has: (key: string) => this.settings.has(full(key)),
      inspect: (key: string) => ({ key: full(key), defaultValue: packageDefault(full(key)), workspaceValue: this.workspaceSettings.get(full(key)) }),
      update: async (key: string, value: unknown, target: number) => {
        this.updates.push({ key: full(key), value, target });
        await this.change(full(key), value);
      },
    };
  }
}

// Defaults come from the real manifest, as VS Code's own configuration registry does.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const manifest = require('../../../package.json');
function packageDefault(key: string): unknown {
  return manifest.contributes.configuration.properties[key]?.default;
}

export const fake = new FakeEditor();

const languageClientModule = { ...protocol, LanguageClient: FakeClient };

// Names the extension does not use (the bundled language client subclasses e.g. CompletionItem
// at load time) get an inert class whose static members are inert too.
function inert(): any {
  return new Proxy(class {}, { get: (target: any, key) => (key in target ? target[key] : typeof key === 'symbol' || key === 'then' ? undefined : inert()) });
}
const vscodeModule = new Proxy(fake.vscode as Record<string | symbol, unknown>, {
  get: (target, key) => (key in target ? target[key] : typeof key === 'symbol' || key === 'then' ? undefined : inert()),
});

const originalLoad = (Module as any)._load;
(Module as any)._load = function load(request: string, ...rest: unknown[]) {
  if (request === 'vscode') {
    return vscodeModule;
  }
  if (request === 'vscode-languageclient/node') {
    return languageClientModule;
  }
  return originalLoad.call(this, request, ...rest);
};
