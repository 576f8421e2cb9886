import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { isCostServer, resolveServer, type Probe, type VersionResult } from '../../src/serverPath';

// Debian's ccls 0.20220729 prints this for --version.
const DEBIAN_CCLS = 'ccls version 0.20220729-1\nclang version 14.0.6\n';

function probe(onPath: Record<string, string>, versions: Record<string, VersionResult>): Probe & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    homeDir: '/home/me',
    findOnPath: (name) => onPath[name],
    version: async (path) => {
      asked.push(path);
      return versions[path] ?? { error: 'ENOENT' };
    },
  };
}

test('isCostServer matches our version line only', () => {
  assert.equal(isCostServer('ccls-cost 0.1.0\n'), true);
  assert.equal(isCostServer('warning: x\nccls-cost 0.1.0'), true);
  assert.equal(isCostServer(DEBIAN_CCLS), false);
  assert.equal(isCostServer('my-ccls-cost 1'), false);
});

test('prefers ccls-cost on PATH', async () => {
  const p = probe({ 'ccls-cost': '/usr/local/bin/ccls-cost', ccls: '/usr/bin/ccls' }, { '/usr/local/bin/ccls-cost': { output: 'ccls-cost 0.1.0\n' } });
  const r = await resolveServer('', p);
  assert.deepEqual(r, { ok: true, server: { command: '/usr/local/bin/ccls-cost', args: ['--stdio'], version: 'ccls-cost 0.1.0' } });
  assert.deepEqual(p.asked, ['/usr/local/bin/ccls-cost']);
});

test('falls back to a ccls on PATH that is ours', async () => {
  const p = probe({ ccls: '/home/me/.local/bin/ccls' }, { '/home/me/.local/bin/ccls': { output: 'ccls-cost 0.1.0' } });
  const r = await resolveServer(undefined, p);
  assert.equal(r.ok && r.server.command, '/home/me/.local/bin/ccls');
});

test("refuses Debian's C++ ccls and says how to install ours", async () => {
  const p = probe({ ccls: '/usr/bin/ccls' }, { '/usr/bin/ccls': { output: DEBIAN_CCLS } });
  const r = await resolveServer('', p);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.problem, 'foreign');
    assert.match(r.message, /\/usr\/bin\/ccls is not the cost server/);
    assert.match(r.message, /ccls version 0\.20220729-1/);
    assert.match(r.message, /pip install/);
    assert.match(r.message, /ccls\.server\.path/);
  }
});

test('nothing on PATH: "not found" with the install hint', async () => {
  const r = await resolveServer('  ', probe({}, {}));
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.problem, 'missing');
    assert.match(r.message, /not found: `ccls-cost` is not on PATH; `ccls` is not on PATH/);
    assert.match(r.message, /pip install <path to the ccls repository>/);
  }
});

test('configured path: used as given, ~ expanded, bare names looked up on PATH', async () => {
  const versions = { '/home/me/venv/bin/ccls-cost': { output: 'ccls-cost 0.2.0' }, '/opt/bin/ccls-cost': { output: 'ccls-cost 0.2.0' } };
  const tilde = await resolveServer('~/venv/bin/ccls-cost', probe({}, versions));
  assert.equal(tilde.ok && tilde.server.command, '/home/me/venv/bin/ccls-cost');
  const bare = await resolveServer('ccls-cost', probe({ 'ccls-cost': '/opt/bin/ccls-cost' }, versions));
  assert.equal(bare.ok && bare.server.command, '/opt/bin/ccls-cost');
  const absent = await resolveServer('ccls-cost', probe({}, versions));
  assert.ok(!absent.ok && absent.problem === 'missing' && /not on PATH/.test(absent.message));
});

test('configured path that is Debian ccls or cannot run is refused, never silently replaced', async () => {
  const p = probe({ 'ccls-cost': '/usr/local/bin/ccls-cost' }, { '/usr/bin/ccls': { output: DEBIAN_CCLS }, '/usr/local/bin/ccls-cost': { output: 'ccls-cost 0.1.0' } });
  const foreign = await resolveServer('/usr/bin/ccls', p);
  assert.ok(!foreign.ok && foreign.problem === 'foreign');
  const broken = await resolveServer('/nope/ccls-cost', p);
  assert.ok(!broken.ok && broken.problem === 'broken' && /ENOENT/.test(broken.message));
  assert.deepEqual(p.asked, ['/usr/bin/ccls', '/nope/ccls-cost']);
});
