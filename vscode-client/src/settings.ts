/**
 * Extension settings (`ccls.*`) → the `ccls` section the server receives.
 * Pure: no `vscode` import, so it is unit-tested without an editor.
 * The server (ccls/lsp/settings.py) validates values; this module only decides what is sent.
 */

export const SECTION = 'ccls';

/** Keys the server understands, as dotted paths below `ccls`. */
export const SERVER_KEYS = [
  'profile',
  'customProfiles',
  'region',
  'arch',
  'gpuArch',
  'scoring',
  'normalization',
  'hints.enabled',
  'hints.format',
  'hints.show',
  'diagnostics.divisionInLoop',
  'diagnostics.missHeavyLoop',
  'diagnostics.minShare',
  'codeLens.enabled',
  'compile.flags',
  'compile.extraFlags',
  'compile.timeoutSeconds',
  'compile.queryDriver',
  'compile.optimization',
  'compile.memoryMB',
  'machineCode',
  'defaultTripCount',
  'earlyExit',
  'parameterValues',
  'defaultParameterValue',
] as const;

/** Keys only the client reads; the server would report them as unknown settings. */
export const CLIENT_KEYS = ['server.path', 'trace.server'] as const;

// VS Code cannot express "unset" for an array setting, so the default [] stands for it:
// the server then uses compile_commands.json (flags) and its built-in compiler allow-list.
const EMPTY_MEANS_UNSET: ReadonlySet<string> = new Set(['compile.flags', 'compile.queryDriver']);

/** Reads one dotted key below `ccls` (VS Code: `workspace.getConfiguration('ccls').get(key)`). */
export type SettingGetter = (key: string) => unknown;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The nested `ccls` section for `workspace/configuration`, `didChangeConfiguration` and `initializationOptions`. */
export function serverSettings(get: SettingGetter): { [key: string]: Json } {
  const section: { [key: string]: Json } = {};
  for (const key of SERVER_KEYS) {
    const value = get(key);
    if (value === undefined || value === null) {
      continue;
    }
    if (EMPTY_MEANS_UNSET.has(key) && Array.isArray(value) && value.length === 0) {
      continue;
    }
    setPath(section, key.split('.'), toJson(value));
  }
  return section;
}

/** Whether a configuration change touches something the server reads (then it is re-sent). */
export function affectsServer(affects: (section: string) => boolean): boolean {
  return SERVER_KEYS.some((key) => affects(`${SECTION}.${key}`));
}

function setPath(target: { [key: string]: Json }, path: string[], value: Json): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      node[part] = {};
    }
    node = node[part] as { [key: string]: Json };
  }
  node[path[path.length - 1]] = value;
}

// VS Code hands out frozen proxies; a plain deep copy is safe to serialise and to mutate.
function toJson(value: unknown): Json {
  if (Array.isArray(value)) {
    return value.map(toJson);
  }
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) {
        out[k] = toJson(v);
      }
    }
    return out;
  }
  if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') {
    return value;
  }
  return null;
}
