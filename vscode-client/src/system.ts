/** The real `Probe`: PATH lookup and `<path> --version` through Node (no `vscode`). */
import { execFile } from 'child_process';
import { accessSync, constants, statSync } from 'fs';
import { homedir } from 'os';
import { delimiter, join } from 'path';
import type { Probe, VersionResult } from './serverPath';

const VERSION_TIMEOUT_MS = 15_000;

export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? '').split(delimiter).filter((d) => d !== '');
  const suffixes = platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').map((s) => s.toLowerCase())] : [''];
  for (const dir of dirs) {
    for (const suffix of suffixes) {
      const candidate = join(dir, name + suffix);
      if (isExecutableFile(candidate, platform)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function isExecutableFile(path: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(path).isFile()) {
      return false;
    }
    if (platform !== 'win32') {
      accessSync(path, constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

export function runVersion(path: string): Promise<VersionResult> {
  return new Promise((resolve) => {
    execFile(path, ['--version'], { timeout: VERSION_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
      if (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const reason = error.killed ? `no answer to --version within ${VERSION_TIMEOUT_MS / 1000} s` : code !== undefined ? String(code) : error.message;
        // Keep what it printed: Debian's ccls may exit non-zero yet still identify itself.
        const printed = `${stdout}${stderr}`.trim();
        resolve(printed !== '' && !error.killed && typeof code === 'number' ? { output: printed } : { error: reason });
        return;
      }
      resolve({ output: `${stdout}${stderr}` });
    });
  });
}

export const nodeProbe: Probe = { findOnPath: (name) => findOnPath(name), version: runVersion, homeDir: homedir() };
