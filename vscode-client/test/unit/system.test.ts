import { strict as assert } from 'node:assert';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { findOnPath, runVersion } from '../../src/system';

const dir = mkdtempSync(join(tmpdir(), 'ccls-vscode-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string, mode = 0o755): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, mode);
  return path;
}

test('findOnPath: executable files only, first PATH entry wins', { skip: process.platform === 'win32' }, () => {
  const exe = script('ccls-cost', 'echo ccls-cost 9.9');
  script('not-exec', 'true', 0o644);
  assert.equal(findOnPath('ccls-cost', { PATH: `/nonexistent:${dir}` }, 'linux'), exe);
  assert.equal(findOnPath('not-exec', { PATH: dir }, 'linux'), undefined);
  assert.equal(findOnPath('ccls-cost', { PATH: '' }, 'linux'), undefined);
});

test('runVersion: output of a real process, errors for missing or failing ones', { skip: process.platform === 'win32' }, async () => {
  const ok = await runVersion(script('good', 'echo "ccls-cost 1.2.3"'));
  assert.equal(ok.output?.trim(), 'ccls-cost 1.2.3');
  const missing = await runVersion(join(dir, 'absent'));
  assert.equal(missing.error, 'ENOENT');
  const silentFailure = await runVersion(script('bad', 'exit 3'));
  assert.equal(silentFailure.output, undefined);
  assert.equal(silentFailure.error, '3');
  const noisyFailure = await runVersion(script('noisy', 'echo "ccls version 0.2022" >&2; exit 1'));
  assert.equal(noisyFailure.output, 'ccls version 0.2022');
});
