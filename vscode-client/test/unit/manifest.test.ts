// The manifest (package.json) and the code must agree: commands, settings, languages.
import { fake } from './fakes';
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { activate, COMMANDS, deactivate } from '../../src/extension';
import { LANGUAGES } from '../../src/launch';
import { CLIENT_KEYS, SERVER_KEYS } from '../../src/settings';

const root = join(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const properties: Record<string, any> = manifest.contributes.configuration.properties;

test('every contributed command is registered by activate, and vice versa', async () => {
  fake.reset();
  await activate({ subscriptions: [] } as any, { homeDir: '/', findOnPath: () => undefined, version: async () => ({ error: 'ENOENT' }) });
  const contributed = manifest.contributes.commands.map((c: any) => c.command).sort();
  assert.deepEqual(contributed, Object.values(COMMANDS).sort());
  assert.deepEqual([...fake.commands.keys()].sort(), contributed);
  // The server registers ccls.* itself through vscode-languageclient; ours must not collide.
  assert.ok(contributed.every((c: string) => !c.startsWith('ccls.')));
  await deactivate();
});

test('every ccls.* setting is either sent to the server or read by the client', () => {
  const declared = Object.keys(properties).map((k) => k.replace(/^ccls\./, '')).sort();
  assert.deepEqual(declared, [...SERVER_KEYS, ...CLIENT_KEYS].sort());
});

test('manifest defaults match the server contract', () => {
  const defaults = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v.default]));
  assert.equal(defaults['ccls.profile'], 'DEFAULT');
  assert.equal(defaults['ccls.region'], 'WORLD');
  assert.equal(defaults['ccls.hints.enabled'], true);
  assert.equal(defaults['ccls.hints.format'], '{grade} · {cu} CU · {energy}');
  assert.equal(defaults['ccls.hints.show'], 'costly');
  assert.equal(defaults['ccls.diagnostics.divisionInLoop'], 'warning');
  assert.equal(defaults['ccls.diagnostics.missHeavyLoop'], 'information');
  assert.equal(defaults['ccls.diagnostics.minShare'], 0.05);
  assert.equal(defaults['ccls.codeLens.enabled'], false);
  assert.equal(defaults['ccls.compile.timeoutSeconds'], 30);
  assert.equal(defaults['ccls.defaultTripCount'], 100);
  assert.deepEqual(properties['ccls.diagnostics.divisionInLoop'].enum, ['error', 'warning', 'information', 'hint', 'off']);
});

test('the server knows every key the client sends (ccls/lsp/settings.py, ccls/options.py)', (t) => {
  const serverFile = join(root, '..', 'ccls', 'lsp', 'settings.py');
  const optionsFile = join(root, '..', 'ccls', 'options.py');
  if (!existsSync(serverFile) || !existsSync(optionsFile)) {
    t.skip(`${serverFile} not present (client checked out alone)`);
    return;
  }
  const source = readFileSync(serverFile, 'utf8');
  const table = source.slice(source.indexOf('_FIELDS'));
  // Editor-only settings are in settings.py's table; analysis options in options.py's OPTION_SPECS.
  const specs = readFileSync(optionsFile, 'utf8');
  const known = new Set([
    ...[...table.matchAll(/^\s*"([\w.]+)":\s*\(/gm)].map((m) => m[1]),
    ...[...specs.matchAll(/OptionSpec\("\w+",\s*"([\w.]+)"/g)].map((m) => m[1]),
  ]);
  assert.ok(known.size > 10, `could not read the server's settings table from ${serverFile}`);
  assert.deepEqual(SERVER_KEYS.filter((k) => !known.has(k)), []);
});

test('activation events and contributed languages cover every analysed language', () => {
  assert.deepEqual(manifest.activationEvents.sort(), LANGUAGES.map((l) => `onLanguage:${l}`).sort());
  const languages = Object.fromEntries(manifest.contributes.languages.map((l: any) => [l.id, l]));
  assert.deepEqual(languages.llvm.extensions, ['.ll']);
  assert.deepEqual(languages.ptx.extensions, ['.ptx']);
  assert.equal(JSON.parse(readFileSync(join(root, languages.llvm.configuration), 'utf8')).comments.lineComment, ';');
  assert.equal(JSON.parse(readFileSync(join(root, languages.ptx.configuration), 'utf8')).comments.lineComment, '//');
});

test('vsce requirements: publisher, license, engines, bundle entry point', () => {
  assert.ok(manifest.publisher);
  assert.equal(manifest.license, 'MIT');
  assert.ok(existsSync(join(root, 'LICENSE')));
  assert.ok(existsSync(join(root, 'README.md')));
  assert.match(manifest.engines.vscode, /^\^1\.\d+\.0$/);
  assert.equal(manifest.main, './dist/extension.js');
  assert.equal(manifest.dependencies['vscode-languageclient'].split('.')[0], '9');
});
