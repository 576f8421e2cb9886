import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { affectsServer, CLIENT_KEYS, SERVER_KEYS, serverSettings } from '../../src/settings';
import { updateTarget, documentSelector, executable, LANGUAGES } from '../../src/launch';

function getter(values: Record<string, unknown>) {
  return (key: string) => values[key];
}

test('dotted settings become the nested section the server reads', () => {
  const section = serverSettings(getter({
    profile: 'RESEARCH',
    'hints.enabled': false,
    'hints.format': '{grade}',
    'hints.show': 'findings',
    'diagnostics.divisionInLoop': 'error',
    'diagnostics.minShare': 0.1,
    'compile.extraFlags': ['-DN=4'],
    customProfiles: { GREEN: [0.1, 0.6, 0.2, 0.1] },
  }));
  assert.deepEqual(section, {
    profile: 'RESEARCH',
    hints: { enabled: false, format: '{grade}', show: 'findings' },
    diagnostics: { divisionInLoop: 'error', minShare: 0.1 },
    compile: { extraFlags: ['-DN=4'] },
    customProfiles: { GREEN: [0.1, 0.6, 0.2, 0.1] },
  });
});

test('client-only keys are never sent', () => {
  const values: Record<string, unknown> = { profile: 'HPC', 'server.path': '/opt/ccls-cost', 'trace.server': 'verbose' };
  const section = serverSettings(getter(values));
  assert.deepEqual(section, { profile: 'HPC' });
  for (const key of CLIENT_KEYS) {
    assert.ok(!(SERVER_KEYS as readonly string[]).includes(key));
  }
});

test('an empty compile.flags / queryDriver list means "unset", other empty values are sent', () => {
  const section = serverSettings(getter({ 'compile.flags': [], 'compile.queryDriver': [], 'compile.extraFlags': [], parameterValues: {} }));
  assert.deepEqual(section, { compile: { extraFlags: [] }, parameterValues: {} });
  const set = serverSettings(getter({ 'compile.flags': ['-O1'], 'compile.queryDriver': ['/opt/cc*'] }));
  assert.deepEqual(set, { compile: { flags: ['-O1'], queryDriver: ['/opt/cc*'] } });
});

test('null and undefined values are skipped; invalid values pass through for the server to report', () => {
  const section = serverSettings(getter({ region: null, arch: undefined, defaultTripCount: 'lots' }));
  assert.deepEqual(section, { defaultTripCount: 'lots' });
});

test('the section is a deep copy: mutating the editor value afterwards does not change it', () => {
  const weights = [0.25, 0.25, 0.25, 0.25];
  const section = serverSettings(getter({ customProfiles: { EVEN: weights } }));
  weights[0] = 1;
  assert.deepEqual(section, { customProfiles: { EVEN: [0.25, 0.25, 0.25, 0.25] } });
});

test('affectsServer: only keys the server reads', () => {
  assert.equal(affectsServer((s) => s === 'ccls.hints.format'), true);
  assert.equal(affectsServer((s) => s === 'ccls.server.path'), false);
});

test('documentSelector covers every language, on disk only', () => {
  assert.deepEqual(documentSelector().map((f) => f.language), [...LANGUAGES]);
  assert.ok(documentSelector().every((f) => f.scheme === 'file'));
  assert.deepEqual([...LANGUAGES], ['c', 'cpp', 'cuda-cpp', 'python', 'llvm', 'ptx']);
});

test('executable: args as resolved, no transport (which would append a second --stdio)', () => {
  const exe = executable({ command: '/usr/local/bin/ccls-cost', args: ['--stdio'], version: 'ccls-cost 0.1.0' }, { PATH: '/usr/bin' });
  assert.deepEqual(exe.args, ['--stdio']);
  assert.equal(exe.command, '/usr/local/bin/ccls-cost');
  assert.equal((exe as any).transport, undefined);
  assert.equal(exe.options.env.PATH, '/usr/bin');
});

test('updateTarget: workspace when a folder is open or the workspace already sets the value', () => {
  assert.equal(updateTarget({}, true), 'workspace');
  assert.equal(updateTarget({}, false), 'global');
  assert.equal(updateTarget({ workspaceValue: 'HPC' }, false), 'workspace');
  assert.equal(updateTarget(undefined, false), 'global');
});
