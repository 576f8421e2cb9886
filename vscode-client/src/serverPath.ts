/**
 * Which executable to launch. Pure logic over an injected probe (PATH lookup, `--version`),
 * so the Debian-`ccls` refusal and the error texts are unit-tested without spawning anything.
 */

/** Arguments the server is always started with. */
export const SERVER_ARGS: readonly string[] = ['--stdio'];

/** Looked up on PATH in this order when `ccls.server.path` is empty. `ccls-cost` first:
 * Debian's unrelated C++ language server installs /usr/bin/ccls. */
export const CANDIDATE_NAMES: readonly string[] = ['ccls-cost', 'ccls'];

export const INSTALL_HINT =
  'Install it with `pip install <path to the ccls repository>` (this provides the `ccls-cost` and `ccls` commands), or set `ccls.server.path` to the cost server executable.';

export interface VersionResult {
  /** stdout + stderr of `<path> --version`, when it ran and exited 0. */
  output?: string;
  /** Why it could not be run (ENOENT, exit status, timeout). */
  error?: string;
}

export interface Probe {
  /** Absolute path of an executable named `name` on PATH, or undefined. */
  findOnPath(name: string): string | undefined;
  /** Runs `<path> --version`. */
  version(path: string): Promise<VersionResult>;
  /** For `~/` in a configured path. */
  homeDir: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** First line of `--version`, e.g. "ccls-cost 0.1.0". */
  version: string;
}

export type Problem = 'missing' | 'foreign' | 'broken';

export type Resolution =
  | { ok: true; server: ServerCommand }
  | { ok: false; problem: Problem; message: string };

/** Our `ccls --version` prints "ccls-cost <version>"; Debian's prints "ccls version …". */
export function isCostServer(versionOutput: string): boolean {
  return /^ccls-cost\b/m.test(versionOutput);
}

export async function resolveServer(configuredPath: string | undefined, probe: Probe): Promise<Resolution> {
  const configured = (configuredPath ?? '').trim();
  if (configured !== '') {
    return checkConfigured(configured, probe);
  }
  const notes: string[] = [];
  let foreign = false;
  for (const name of CANDIDATE_NAMES) {
    const path = probe.findOnPath(name);
    if (path === undefined) {
      notes.push(`\`${name}\` is not on PATH`);
      continue;
    }
    const result = await probe.version(path);
    if (result.output !== undefined && isCostServer(result.output)) {
      return { ok: true, server: command(path, result.output) };
    }
    if (result.output !== undefined) {
      foreign = true;
      notes.push(`${path} is not the cost server (\`--version\` says "${firstLine(result.output)}"; Debian's \`ccls\` package installs an unrelated C++ server there)`);
    } else {
      notes.push(`${path} could not be run (${result.error ?? 'unknown error'})`);
    }
  }
  const what = foreign ? 'Only a different program named ccls was found' : 'The ccls cost server was not found';
  return { ok: false, problem: foreign ? 'foreign' : 'missing', message: `${what}: ${notes.join('; ')}. ${INSTALL_HINT}` };
}

async function checkConfigured(configured: string, probe: Probe): Promise<Resolution> {
  let path = configured.startsWith('~/') ? joinHome(probe.homeDir, configured.slice(2)) : configured;
  if (!/[\\/]/.test(path)) {
    const found = probe.findOnPath(path);
    if (found === undefined) {
      return { ok: false, problem: 'missing', message: `\`ccls.server.path\` is "${configured}", which is not on PATH. ${INSTALL_HINT}` };
    }
    path = found;
  }
  const result = await probe.version(path);
  if (result.output === undefined) {
    return { ok: false, problem: 'broken', message: `\`ccls.server.path\` is "${configured}", which could not be run (${result.error ?? 'unknown error'}). ${INSTALL_HINT}` };
  }
  if (!isCostServer(result.output)) {
    return {
      ok: false,
      problem: 'foreign',
      message: `\`ccls.server.path\` is "${configured}", which is not the cost server (\`--version\` says "${firstLine(result.output)}"). ${INSTALL_HINT}`,
    };
  }
  return { ok: true, server: command(path, result.output) };
}

function command(path: string, versionOutput: string): ServerCommand {
  const line = versionOutput.split(/\r?\n/).find((l) => isCostServer(l)) ?? firstLine(versionOutput);
  return { command: path, args: [...SERVER_ARGS], version: line.trim() };
}

function firstLine(text: string): string {
  return (text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '').trim().slice(0, 120);
}

function joinHome(home: string, rest: string): string {
  return home.endsWith('/') || home.endsWith('\\') ? home + rest : `${home}/${rest}`;
}
