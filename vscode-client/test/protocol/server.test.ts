/**
 * Drives the real server (`ccls --stdio`, or $CCLS_SERVER) over stdio the way VS Code does:
 * VS Code's initialize capabilities, workspace/configuration answers, didOpen of an example,
 * then inlay hints, hover, diagnostics, code lens, the commands, and a live settings change.
 *
 * $CCLS_SERVER: the command line (a JSON array, or words split on spaces). Default:
 * `python3 -m ccls --stdio` run from the repository root ($PYTHON overrides `python3`).
 */
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import {
  CodeLensRequest,
  CodeLensResolveRequest,
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  InlayHintRequest,
  InlayHintResolveRequest,
  PublishDiagnosticsNotification,
  RegistrationRequest,
  ShutdownRequest,
  type CodeLens,
  type Diagnostic,
  type Hover,
  type InitializeResult,
  type InlayHint,
  type MarkupContent,
} from 'vscode-languageserver-protocol';
import { serverSettings, type Json } from '../../src/settings';
import { initializeParams } from './vscodeClient';

const clientRoot = resolve(__dirname, '..', '..', '..');
const repoRoot = resolve(clientRoot, '..');
const manifest = JSON.parse(readFileSync(join(clientRoot, 'package.json'), 'utf8'));
const ANALYSIS_TIMEOUT_MS = Number(process.env.CCLS_TEST_TIMEOUT_MS ?? 240_000);

// A C example with a run-time modulo inside a loop (examples/kernels.c: checksum_mod).
const EXAMPLE = join(repoRoot, 'examples', 'kernels.c');
const EXAMPLE_URI = pathToFileURL(EXAMPLE).href;
const FUNCTION = 'checksum_mod';

// Letter grades: "A+ … F" (paper §3); the label starts with one under the default template.
const GRADE_AT_START = /^([A-F][+-]?)(?=\s|$)/;

function serverCommand(): { command: string; args: string[] } {
  const raw = process.env.CCLS_SERVER?.trim();
  const words = raw ? (raw.startsWith('[') ? (JSON.parse(raw) as string[]) : raw.split(/\s+/)) : [process.env.PYTHON ?? 'python3', '-m', 'ccls', '--stdio'];
  return { command: words[0], args: words.slice(1) };
}

/** The `ccls` section VS Code sends with the manifest defaults, plus the overrides under test. */
function settingsWith(overrides: Record<string, unknown>): { [key: string]: Json } {
  const properties = manifest.contributes.configuration.properties;
  return serverSettings((key) => (key in overrides ? overrides[key] : properties[`ccls.${key}`]?.default));
}

function hintText(hint: InlayHint): string {
  return typeof hint.label === 'string' ? hint.label : hint.label.map((part) => part.value).join('');
}

function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  assert.ok(index >= 0, `${needle} not found in ${EXAMPLE}`);
  return index;
}

describe('ccls --stdio under VS Code\'s client capabilities', { timeout: ANALYSIS_TIMEOUT_MS * 3 }, () => {
  let server: ChildProcess;
  let connection: MessageConnection;
  let init: InitializeResult;
  let stderr = '';
  // Every function's hint (the default, hints.show = costly, shows the costly ones only).
  let settings = settingsWith({ 'codeLens.enabled': true, 'hints.show': 'all' });
  const configurationRequests: unknown[] = [];
  const diagnostics = new Map<string, Diagnostic[]>();
  const diagnosticWaiters: (() => void)[] = [];
  const source = existsSync(EXAMPLE) ? readFileSync(EXAMPLE, 'utf8') : '';

  async function waitForDiagnostics(predicate: (d: Diagnostic[]) => boolean, what: string): Promise<Diagnostic[]> {
    const deadline = Date.now() + ANALYSIS_TIMEOUT_MS;
    while (!predicate(diagnostics.get(EXAMPLE_URI) ?? [])) {
      const left = deadline - Date.now();
      assert.ok(left > 0, `timed out waiting for ${what}; got ${JSON.stringify(diagnostics.get(EXAMPLE_URI) ?? null)}\nserver stderr:\n${stderr.slice(-3000)}`);
      await new Promise<void>((done) => {
        const timer = setTimeout(done, Math.min(left, 1000));
        diagnosticWaiters.push(() => { clearTimeout(timer); done(); });
      });
    }
    return diagnostics.get(EXAMPLE_URI) ?? [];
  }

  async function hints(): Promise<InlayHint[]> {
    const lines = source.split('\n').length;
    const result = await connection.sendRequest(InlayHintRequest.type, {
      textDocument: { uri: EXAMPLE_URI },
      range: { start: { line: 0, character: 0 }, end: { line: lines, character: 0 } },
    });
    return result ?? [];
  }

  before(async () => {
    assert.ok(existsSync(EXAMPLE), `example missing: ${EXAMPLE}`);
    const { command, args } = serverCommand();
    server = spawn(command, args, { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    server.stderr!.on('data', (chunk) => { stderr += chunk.toString(); });
    const spawned = new Promise<void>((ok, fail) => {
      server.once('spawn', ok);
      server.once('error', (error) => fail(new Error(`cannot start ${command} ${args.join(' ')}: ${error.message}`)));
    });
    await spawned;
    connection = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
    // Requests VS Code answers on its own.
    connection.onRequest(ConfigurationRequest.type, (params) => {
      configurationRequests.push(params);
      return params.items.map((item) => (item.section === 'ccls' ? settings : null));
    });
    connection.onRequest(RegistrationRequest.type, () => null);
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onRequest('workspace/inlayHint/refresh', () => null);
    connection.onRequest('workspace/codeLens/refresh', () => null);
    connection.onRequest('workspace/semanticTokens/refresh', () => null);
    connection.onRequest('workspace/diagnostic/refresh', () => null);
    connection.onRequest('window/showMessageRequest', () => null);
    connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
      diagnostics.set(params.uri, params.diagnostics);
      diagnosticWaiters.splice(0).forEach((wake) => wake());
    });
    connection.onNotification(() => undefined); // logMessage, showMessage, $/progress
    connection.listen();

    // The user opened the examples folder (the server also analyses the workspace in the background).
    init = await connection.sendRequest(InitializeRequest.type, initializeParams(join(repoRoot, 'examples'), settings, process.pid));
    await connection.sendNotification(InitializedNotification.type, {});
    // vscode-languageclient sends the synchronized section right after `initialized`.
    await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { ccls: settings } });
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: EXAMPLE_URI, languageId: 'c', version: 1, text: source },
    });
  });

  after(async () => {
    if (connection !== undefined && server.exitCode === null) {
      await connection.sendRequest(ShutdownRequest.type);
      await connection.sendNotification(ExitNotification.type);
      const exited = await Promise.race([
        new Promise<number | null>((done) => server.once('exit', (code) => done(code))),
        new Promise<'hung'>((done) => setTimeout(() => done('hung'), 10_000)),
      ]);
      connection.dispose();
      if (exited === 'hung') {
        server.kill();
      }
      assert.equal(exited, 0, 'the server should exit with 0 after shutdown/exit');
    } else {
      server?.kill();
    }
  });

  test('initialize: the server offers what the extension uses', () => {
    const caps = init.capabilities;
    assert.ok(caps.hoverProvider, 'hoverProvider');
    assert.ok(caps.inlayHintProvider, 'inlayHintProvider');
    assert.ok(caps.codeLensProvider, 'codeLensProvider');
    const commands = caps.executeCommandProvider?.commands ?? [];
    for (const command of ['ccls.explainFunction', 'ccls.showIR', 'ccls.setProfile', 'ccls.setRegion']) {
      assert.ok(commands.includes(command), `executeCommandProvider lacks ${command}: ${commands.join(', ')}`);
    }
    assert.ok(!caps.positionEncoding || caps.positionEncoding === 'utf-16', `VS Code offered only utf-16, server chose ${caps.positionEncoding}`);
  });

  test('diagnostics include division-in-loop inside checksum_mod', async (t) => {
    const found = await waitForDiagnostics((d) => d.some((x) => x.code === 'division-in-loop'), 'a division-in-loop diagnostic');
    t.diagnostic(`diagnostics: ${found.map((d) => `${d.range.start.line + 1}:${d.code}:${d.severity}`).join(', ')}`);
    const division = found.filter((d) => d.code === 'division-in-loop');
    const moduloLine = lineOf(source, 's += a[i] % m;');
    assert.ok(division.some((d) => d.range.start.line === moduloLine), `expected one on line ${moduloLine + 1}: ${JSON.stringify(division)}`);
    for (const d of division) {
      assert.equal(d.source, 'ccls');
      assert.equal(d.severity, 2, 'default severity is warning');
    }
    // checksum_add has no division: no finding of that kind in its lines.
    const addLines = [lineOf(source, 'long checksum_add('), lineOf(source, 'double sum_rows(')];
    assert.ok(!division.some((d) => d.range.start.line > addLines[0] && d.range.start.line < addLines[1]), 'division reported in checksum_add');
  });

  test('inlay hints: one per function, each starting with a grade', async (t) => {
    const all = await hints();
    const labels = all.map(hintText);
    t.diagnostic(`inlay hints: ${all.map((h) => `${h.position.line + 1}: ${hintText(h)}`).join(' | ')}`);
    assert.ok(labels.length >= 6, `expected hints for the 6 functions, got ${JSON.stringify(labels)}`);
    for (const label of labels) {
      assert.match(label, GRADE_AT_START);
      assert.match(label, / · [\d.]+[a-zA-Zµ]* CU · /, `label ${label} does not follow "{grade} · {cu} CU · {energy}"`);
    }
    const line = lineOf(source, `${FUNCTION}(`);
    assert.ok(all.some((h) => h.position.line === line), `no hint on ${FUNCTION}'s line ${line + 1}`);
    const withResolve = init.capabilities.inlayHintProvider;
    if (typeof withResolve === 'object' && withResolve.resolveProvider) {
      const resolved = await connection.sendRequest(InlayHintResolveRequest.type, all[0]);
      assert.equal(hintText(resolved), labels[0]);
    }
  });

  test('hover on a function returns markdown with CU and the same grade as its hint', async (t) => {
    const line = lineOf(source, `${FUNCTION}(`);
    const character = source.split('\n')[line].indexOf(FUNCTION) + 2;
    const hover = (await connection.sendRequest(HoverRequest.type, { textDocument: { uri: EXAMPLE_URI }, position: { line, character } })) as Hover | null;
    assert.ok(hover, 'no hover');
    const contents = hover.contents as MarkupContent;
    t.diagnostic(`hover: ${contents.value.split('\n').slice(0, 3).join(' / ')}`);
    assert.equal(contents.kind, 'markdown');
    assert.match(contents.value, /\bCU\b/);
    assert.ok(contents.value.includes(FUNCTION), 'hover does not name the function');
    const hint = (await hints()).find((h) => h.position.line === line)!;
    const grade = GRADE_AT_START.exec(hintText(hint))![1];
    const gradeToken = new RegExp(`(^|[^A-Za-z])${grade.replace('+', '\\+')}([^A-Za-z+-]|$)`, 'm');
    assert.match(contents.value, gradeToken, `hover lacks the grade ${grade}`);
  });

  test('code lens (enabled in settings) carries a title and the explain command', async () => {
    const lenses = (await connection.sendRequest(CodeLensRequest.type, { textDocument: { uri: EXAMPLE_URI } })) ?? [];
    assert.ok(lenses.length >= 6, `expected a lens per function, got ${lenses.length}`);
    const resolved: CodeLens[] = [];
    for (const lens of lenses) {
      resolved.push(lens.command ? lens : await connection.sendRequest(CodeLensResolveRequest.type, lens));
    }
    for (const lens of resolved) {
      assert.ok(lens.command, 'lens without a command after resolve');
      assert.match(lens.command.title, GRADE_AT_START);
      assert.equal(lens.command.command, 'ccls.explainFunction');
      assert.equal(lens.command.arguments?.[0], EXAMPLE_URI);
    }
  });

  test('ccls.explainFunction and ccls.showIR answer with text for the function at a position', async () => {
    const line = lineOf(source, `${FUNCTION}(`);
    const position = { line: line + 2, character: 4 };
    const explained = await connection.sendRequest(ExecuteCommandRequest.type, { command: 'ccls.explainFunction', arguments: [EXAMPLE_URI, position] });
    assert.equal(typeof explained, 'string');
    assert.ok((explained as string).includes(FUNCTION));
    const ir = await connection.sendRequest(ExecuteCommandRequest.type, { command: 'ccls.showIR', arguments: [EXAMPLE_URI, position] });
    assert.equal(typeof ir, 'string');
    assert.match(ir as string, new RegExp(`define\\b.*@${FUNCTION}\\(`));
  });

  test('an LLVM IR file opened with the extension\'s `llvm` language id gets hints', async (t) => {
    const ll = join(repoRoot, 'examples', 'horner.ll');
    const uri = pathToFileURL(ll).href;
    const text = readFileSync(ll, 'utf8');
    await connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'llvm', version: 1, text } });
    const range = { start: { line: 0, character: 0 }, end: { line: text.split('\n').length, character: 0 } };
    const deadline = Date.now() + ANALYSIS_TIMEOUT_MS;
    let labels: string[] = [];
    while (labels.length === 0 && Date.now() < deadline) {
      labels = ((await connection.sendRequest(InlayHintRequest.type, { textDocument: { uri }, range })) ?? []).map(hintText);
      if (labels.length === 0) {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    t.diagnostic(`horner.ll hints: ${labels.join(' | ')}`);
    assert.ok(labels.length > 0, 'no hints for horner.ll');
    assert.ok(labels.every((l) => GRADE_AT_START.test(l)), JSON.stringify(labels));
  });

  test('a settings change reaches the running server: new hint format, division diagnostics off', async () => {
    settings = settingsWith({ 'codeLens.enabled': true, 'hints.show': 'all', 'hints.format': '{grade}|{cu}', 'diagnostics.divisionInLoop': 'off', profile: 'MOBILE' });
    await connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { ccls: settings } });
    await waitForDiagnostics((d) => !d.some((x) => x.code === 'division-in-loop'), 'division-in-loop to disappear');
    const deadline = Date.now() + 30_000;
    let labels: string[] = [];
    while (Date.now() < deadline) {
      labels = (await hints()).map(hintText);
      if (labels.length > 0 && labels.every((l) => /^[A-F][+-]?\|[^ ]+$/.test(l))) {
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(labels.length > 0 && labels.every((l) => /^[A-F][+-]?\|[^ ]+$/.test(l)), `hints did not switch format: ${JSON.stringify(labels)}`);
  });
});
