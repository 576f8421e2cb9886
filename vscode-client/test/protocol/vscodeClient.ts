/**
 * The `initialize` request VS Code sends for this extension, built by the real
 * vscode-languageclient (the version the extension ships) rather than written by hand: its
 * `computeClientCapabilities()` runs with a placeholder `vscode` module (the capability code
 * only reads enum values from it), so the test sees exactly the capabilities that client declares.
 */
import Module = require('module');
import { pathToFileURL } from 'node:url';
import type { InitializeParams, ClientCapabilities } from 'vscode-languageserver-protocol';

/** The VS Code version we claim; vscode-languageclient 9 requires ≥ 1.82. */
export const VSCODE_VERSION = '1.95.3';

function placeholder(): any {
  const target = function () {} as any;
  return new Proxy(target, {
    get(t, key) {
      if (key === 'then' || typeof key === 'symbol') {
        return undefined;
      }
      if (key === 'version') {
        return VSCODE_VERSION;
      }
      if (!(key in t)) {
        t[key] = placeholder();
      }
      return t[key];
    },
    construct: () => placeholder(),
    apply: () => placeholder(),
  });
}

export function vscodeCapabilities(): ClientCapabilities {
  const load = (Module as any)._load;
  const stub = placeholder();
  (Module as any)._load = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? stub : load.call(this, request, ...rest);
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { LanguageClient } = require('vscode-languageclient/node');
    const client = new LanguageClient('ccls', 'ccls', { command: 'unused' }, { documentSelector: [{ scheme: 'file', language: 'c' }] });
    // Round-trip through JSON, as on the wire (drops anything the placeholder contributed).
    return JSON.parse(JSON.stringify(client.computeClientCapabilities()));
  } finally {
    (Module as any)._load = load;
  }
}

export function initializeParams(rootPath: string, initializationOptions: unknown, processId: number): InitializeParams {
  const rootUri = pathToFileURL(rootPath).href;
  return {
    processId,
    clientInfo: { name: 'Visual Studio Code', version: VSCODE_VERSION },
    locale: 'en',
    rootPath,
    rootUri,
    capabilities: vscodeCapabilities(),
    initializationOptions,
    trace: 'off',
    workspaceFolders: [{ uri: rootUri, name: 'ccls' }],
  };
}
