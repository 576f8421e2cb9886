/** How the language client is set up: documents, process, where a setting change is written. Pure. */
import type { ServerCommand } from './serverPath';

/** VS Code language ids the server analyses (`llvm` and `ptx` are contributed by this extension). */
export const LANGUAGES: readonly string[] = ['c', 'cpp', 'cuda-cpp', 'python', 'llvm', 'ptx'];

export interface DocumentFilter {
  scheme: string;
  language: string;
}

/** Files on disk only: the server compiles them, and compile_commands.json is keyed by path. */
export function documentSelector(): DocumentFilter[] {
  return LANGUAGES.map((language) => ({ scheme: 'file', language }));
}

export interface ExecutableOptions {
  command: string;
  args: string[];
  options: { env: Record<string, string | undefined> };
}

/** The stdio process; `transport` stays unset because TransportKind.stdio would append a second `--stdio`. */
export function executable(server: ServerCommand, env: Record<string, string | undefined>): ExecutableOptions {
  return { command: server.command, args: [...server.args], options: { env: { ...env, PYTHONUNBUFFERED: '1' } } };
}

export interface InspectedSetting {
  workspaceValue?: unknown;
}

export type UpdateTarget = 'workspace' | 'global';

/** Write to the workspace when one is open (or already sets the value, which would shadow a user setting). */
export function updateTarget(inspected: InspectedSetting | undefined, hasWorkspace: boolean): UpdateTarget {
  if (inspected?.workspaceValue !== undefined || hasWorkspace) {
    return 'workspace';
  }
  return 'global';
}
