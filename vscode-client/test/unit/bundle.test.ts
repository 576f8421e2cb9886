// The esbuild bundle (what the .vsix ships) loads with only `vscode` external and activates.
import { fake, FakeClient } from './fakes';
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const bundle = join(__dirname, '..', '..', '..', 'dist', 'extension.js');

test('dist/extension.js is self-contained and activates', async () => {
  assert.ok(existsSync(bundle), `${bundle} missing: run \`npm run build\``);
  const text = readFileSync(bundle, 'utf8');
  const required = [...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
  const external = required.filter((r) => !r.startsWith('node:') && !['child_process', 'fs', 'os', 'path', 'net', 'crypto', 'util', 'events', 'stream', 'url', 'assert', 'tty', 'buffer'].includes(r));
  assert.deepEqual([...new Set(external)], ['vscode'], 'only `vscode` may stay external');
  // Our fake `vscode-languageclient/node` is not used: the bundle carries the real client.
  const ext = require(bundle);
  assert.equal(typeof ext.activate, 'function');
  assert.equal(typeof ext.deactivate, 'function');
  fake.reset();
  await ext.activate({ subscriptions: [] }, { homeDir: '/', findOnPath: () => undefined, version: async () => ({ error: 'ENOENT' }) });
  assert.equal(FakeClient.instances.length, 0);
  assert.match(fake.messages[0].text, /not found.*pip install/s);
  assert.equal(fake.statusItems[0].text, 'ccls: DEFAULT');
  await ext.deactivate();
});
