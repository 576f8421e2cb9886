// The initialize capabilities the protocol test sends are those vscode-languageclient declares.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { initializeParams, vscodeCapabilities } from '../protocol/vscodeClient';

test('captured VS Code capabilities include what the server relies on', () => {
  const caps = vscodeCapabilities();
  assert.equal(caps.workspace?.configuration, true);
  assert.equal(caps.workspace?.inlayHint?.refreshSupport, true);
  assert.equal(caps.workspace?.codeLens?.refreshSupport, true);
  assert.equal(caps.workspace?.didChangeConfiguration?.dynamicRegistration, true);
  assert.deepEqual(caps.general?.positionEncodings, ['utf-16']);
  assert.deepEqual(caps.textDocument?.hover?.contentFormat, ['markdown', 'plaintext']);
  assert.equal(caps.textDocument?.inlayHint?.dynamicRegistration, true);
  assert.ok(caps.textDocument?.inlayHint?.resolveSupport?.properties.includes('tooltip'));
  assert.equal(caps.textDocument?.codeLens?.dynamicRegistration, true);
  assert.equal(caps.textDocument?.publishDiagnostics?.relatedInformation, true);
  assert.equal(caps.textDocument?.publishDiagnostics?.codeDescriptionSupport, true);
});

test('initialize params look like VS Code 1.9x', () => {
  const params = initializeParams('/work/project', { profile: 'DEFAULT' }, 42);
  assert.equal(params.clientInfo?.name, 'Visual Studio Code');
  assert.equal(params.rootUri, 'file:///work/project');
  assert.deepEqual(params.workspaceFolders, [{ uri: 'file:///work/project', name: 'ccls' }]);
  assert.deepEqual(params.initializationOptions, { profile: 'DEFAULT' });
});
