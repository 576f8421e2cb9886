// `fakes` must load first: it installs the stand-in `vscode` and language client modules.
import { fake, FakeClient } from './fakes';
import { strict as assert } from 'node:assert';
import { beforeEach, test } from 'node:test';
import { activate, COMMANDS, deactivate } from '../../src/extension';
import type { Probe, VersionResult } from '../../src/serverPath';

const OURS = '/usr/local/bin/ccls-cost';

function probe(onPath: Record<string, string> = { 'ccls-cost': OURS }, versions: Record<string, VersionResult> = { [OURS]: { output: 'ccls-cost 0.1.0\n' } }): Probe {
  return { homeDir: '/home/me', findOnPath: (n) => onPath[n], version: async (p) => versions[p] ?? { error: 'ENOENT' } };
}

function context() {
  return { subscriptions: [] as { dispose(): unknown }[] };
}

function lastClient(): FakeClient {
  const client = FakeClient.instances[FakeClient.instances.length - 1];
  assert.ok(client, 'no language client was created');
  return client;
}

beforeEach(async () => {
  await deactivate();
  fake.reset();
});

test('activate starts the client on `ccls-cost --stdio` with the filtered settings', async () => {
  fake.settings.set('ccls.profile', 'RESEARCH');
  fake.settings.set('ccls.server.path', '');
  await activate(context() as any, probe());
  const client = lastClient();
  assert.equal(client.id, 'ccls'); // also makes vscode-languageclient read `ccls.trace.server`
  assert.equal(client.started, true);
  assert.equal(client.serverOptions.command, OURS);
  assert.deepEqual(client.serverOptions.args, ['--stdio']);
  assert.deepEqual(client.clientOptions.documentSelector.map((f: any) => f.language), ['c', 'cpp', 'cuda-cpp', 'python', 'llvm', 'ptx']);
  assert.equal(client.clientOptions.synchronize.configurationSection, 'ccls');
  const init = client.clientOptions.initializationOptions;
  assert.equal(init.profile, 'RESEARCH');
  assert.equal(init.hints.format, '{grade} · {cu} CU · {energy}'); // the manifest default
  assert.equal(init.server, undefined);
  assert.equal(init.trace, undefined);
  assert.equal(init.compile.flags, undefined); // [] = use compile_commands.json
  assert.equal(fake.statusItems[0].text, 'ccls: RESEARCH');
  assert.equal(fake.statusItems[0].command, COMMANDS.setProfile);
  assert.equal(fake.statusItems[0].visible, true);
  assert.deepEqual(fake.messages, []);
});

test("Debian's ccls on PATH: no client, an error naming the fix, and a button to the setting", async () => {
  fake.clickOnMessage = 'Open Settings';
  await activate(context() as any, probe({ ccls: '/usr/bin/ccls' }, { '/usr/bin/ccls': { output: 'ccls version 0.20220729-1' } }));
  await new Promise((r) => setImmediate(r));
  assert.equal(FakeClient.instances.length, 0);
  const [message] = fake.messages;
  assert.equal(message.kind, 'error');
  assert.match(message.text, /\/usr\/bin\/ccls is not the cost server/);
  assert.match(message.text, /pip install <path to the ccls repository>/);
  assert.deepEqual(message.items, ['Open Settings']);
  assert.deepEqual(fake.executed.at(-1), { command: 'workbench.action.openSettings', args: ['ccls.server.path'] });
  assert.equal(fake.statusItems[0].backgroundColor.id, 'statusBarItem.warningBackground');
});

test('a server that fails to start is reported, not thrown', async () => {
  fake.failStart = 'Server initialization failed.';
  await activate(context() as any, probe());
  assert.match(fake.messages[0].text, /did not start as a language server: Server initialization failed\./);
});

test('a settings change reaches the running server without a restart', async () => {
  await activate(context() as any, probe());
  const client = lastClient();
  await fake.change('ccls.profile', 'MOBILE');
  await fake.change('ccls.hints.format', '{grade} {cu}');
  assert.equal(FakeClient.instances.length, 1);
  assert.equal(client.stopped, false);
  assert.equal(fake.statusItems[0].text, 'ccls: MOBILE');
  // vscode-languageclient calls this middleware on every change to the `ccls` section.
  await client.clientOptions.middleware.workspace.didChangeConfiguration(['ccls'], async () => assert.fail('default sender used'));
  const sent = client.notifications.at(-1)!;
  assert.equal(sent.method, 'workspace/didChangeConfiguration');
  assert.equal(sent.params.settings.ccls.profile, 'MOBILE');
  assert.equal(sent.params.settings.ccls.hints.format, '{grade} {cu}');
  assert.equal(sent.params.settings.ccls.server, undefined);
});

test('changing ccls.server.path restarts the client on the new executable', async () => {
  const other = '/opt/venv/bin/ccls-cost';
  await activate(context() as any, probe({ 'ccls-cost': OURS }, { [OURS]: { output: 'ccls-cost 0.1.0' }, [other]: { output: 'ccls-cost 0.2.0' } }));
  const first = lastClient();
  await fake.change('ccls.server.path', other);
  assert.equal(first.stopped, true);
  assert.equal(FakeClient.instances.length, 2);
  assert.equal(lastClient().serverOptions.command, other);
  assert.equal(lastClient().started, true);
});

test('workspace/configuration answers: our section filtered, other sections untouched', async () => {
  fake.settings.set('ccls.diagnostics.divisionInLoop', 'error');
  await activate(context() as any, probe());
  const middleware = lastClient().clientOptions.middleware.workspace.configuration;
  const params = { items: [{ section: 'ccls' }, { section: 'editor' }, { section: 'ccls.diagnostics' }] };
  const answer = await middleware(params, undefined, () => [{ raw: true }, { tabSize: 4 }, { raw: true }]);
  assert.equal(answer[0].diagnostics.divisionInLoop, 'error');
  assert.equal(answer[0].server, undefined);
  assert.deepEqual(answer[1], { tabSize: 4 });
  assert.deepEqual(answer[2], { divisionInLoop: 'error', missHeavyLoop: 'information', minShare: 0.05 });
});

test('status bar click: quick pick of profiles writes ccls.profile to the workspace', async () => {
  fake.settings.set('ccls.customProfiles', { GREEN: [0.1, 0.6, 0.2, 0.1] });
  let offered: string[] = [];
  fake.quickPick = (items) => {
    offered = items.map((i) => i.label);
    return items.find((i) => i.label === 'GREEN');
  };
  await activate(context() as any, probe());
  await fake.vscode.commands.executeCommand(fake.statusItems[0].command);
  assert.deepEqual(offered, ['DEFAULT', 'RESEARCH', 'COMMERCIAL', 'MOBILE', 'HPC', 'GREEN']);
  assert.deepEqual(fake.updates, [{ key: 'ccls.profile', value: 'GREEN', target: 2 }]);
  assert.equal(fake.statusItems[0].text, 'ccls: GREEN');
});

test('Set Region writes ccls.region; cancelling writes nothing', async () => {
  fake.workspaceFolders = [];
  await activate(context() as any, probe());
  fake.inputBox = () => undefined;
  await fake.vscode.commands.executeCommand(COMMANDS.setRegion);
  assert.deepEqual(fake.updates, []);
  fake.inputBox = (value) => (value === 'WORLD' ? ' FR ' : 'unexpected');
  await fake.vscode.commands.executeCommand(COMMANDS.setRegion);
  assert.deepEqual(fake.updates, [{ key: 'ccls.region', value: 'FR', target: 1 }]);
});

test('Explain Function sends ccls.explainFunction at the cursor and previews the markdown', async () => {
  fake.replies = (method, params) => (method === 'workspace/executeCommand' && params.command === 'ccls.explainFunction' ? '### sum\nB · 1.2k CU' : null);
  await activate(context() as any, probe());
  fake.activeTextEditor = { document: { uri: fake.vscode.Uri.file('/work/project/a.c') }, selection: { active: { line: 7, character: 4 } } };
  await fake.vscode.commands.executeCommand(COMMANDS.explainFunction);
  assert.deepEqual(lastClient().requests, [{ method: 'workspace/executeCommand', params: { command: 'ccls.explainFunction', arguments: ['file:///work/project/a.c', { line: 7, character: 4 }] } }]);
  const doc = fake.opened.at(-1)!;
  assert.equal(doc.getText(), '### sum\nB · 1.2k CU');
  assert.equal(doc.languageId, 'markdown');
  assert.deepEqual(fake.executed.at(-1), { command: 'markdown.showPreviewToSide', args: [doc.uri] });
});

test('a code lens click (uri, position arguments) explains that function; without markdown preview the source is shown', async () => {
  fake.replies = () => '### kernel';
  fake.failCommands.add('markdown.showPreviewToSide');
  await activate(context() as any, probe());
  await fake.vscode.commands.executeCommand(COMMANDS.explainFunction, 'file:///k.cu', { line: 2, character: 0 });
  assert.deepEqual(lastClient().requests[0].params.arguments, ['file:///k.cu', { line: 2, character: 0 }]);
  assert.equal(fake.shown.length, 1);
});

test('Show IR/PTX opens the text with the ptx or llvm language', async () => {
  fake.replies = () => '.version 8.5\n.target sm_80\n.visible .entry saxpy()\n{\n ret;\n}\n';
  await activate(context() as any, probe());
  fake.activeTextEditor = { document: { uri: fake.vscode.Uri.file('/k.cu') }, selection: { active: { line: 1, character: 1 } } };
  await fake.vscode.commands.executeCommand(COMMANDS.showIR);
  assert.equal(lastClient().requests[0].params.command, 'ccls.showIR');
  assert.equal(fake.languageChanges.at(-1)!.language, 'ptx');
  assert.ok(fake.opened.at(-1)!.uri.path.endsWith('.ptx'));
});

test('commands explain what to do when there is no editor, no answer, or no server', async () => {
  fake.replies = () => null;
  await activate(context() as any, probe());
  await fake.vscode.commands.executeCommand(COMMANDS.explainFunction);
  assert.match(fake.messages.at(-1)!.text, /open a source file/);
  fake.activeTextEditor = { document: { uri: fake.vscode.Uri.file('/a.py') }, selection: { active: { line: 0, character: 0 } } };
  await fake.vscode.commands.executeCommand(COMMANDS.explainFunction);
  assert.match(fake.messages.at(-1)!.text, /no explanation here/);
  await fake.vscode.commands.executeCommand(COMMANDS.restartServer);
  assert.equal(FakeClient.instances.length, 2);
  await deactivate();
  fake.reset();
  await activate(context() as any, probe({}, {}));
  fake.activeTextEditor = { document: { uri: fake.vscode.Uri.file('/a.py') }, selection: { active: { line: 0, character: 0 } } };
  await fake.vscode.commands.executeCommand(COMMANDS.showIR);
  assert.match(fake.messages.at(-1)!.text, /server is not running/);
});

test('code lens middleware routes the server command to the client command', async () => {
  await activate(context() as any, probe());
  const middleware = lastClient().clientOptions.middleware;
  const lens = { command: { title: 'B', command: 'ccls.explainFunction', arguments: ['file:///a.c', { line: 0, character: 0 }] } };
  const lenses = await middleware.provideCodeLenses({}, undefined, async () => [lens]);
  assert.equal(lenses[0].command.command, COMMANDS.explainFunction);
  const resolved = await middleware.resolveCodeLens({}, undefined, async () => ({ command: { title: 'C', command: 'ccls.explainFunction' } }));
  assert.equal(resolved.command.command, COMMANDS.explainFunction);
});
