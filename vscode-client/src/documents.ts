/** What the extension does with server results: pure helpers for the command handlers. */

export const EXPLAIN_COMMAND = 'cclsCost.explainFunction';
/** The server's command ids (workspace/executeCommand). */
export const SERVER_COMMANDS = {
  explainFunction: 'ccls.explainFunction',
  showIR: 'ccls.showIR',
  setProfile: 'ccls.setProfile',
  setRegion: 'ccls.setRegion',
} as const;

/** Language id for an untitled document holding `ccls.showIR` output. */
export function irLanguageId(text: string): 'ptx' | 'llvm' {
  // PTX modules always declare `.version` and `.target sm_XX`; LLVM IR never has these directives.
  return /^\s*\.(version\s+\d|target\s+sm_)/m.test(text) ? 'ptx' : 'llvm';
}

export interface LensCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}

/**
 * The server's code lens runs `ccls.explainFunction`, which VS Code would send to the server
 * and then discard the markdown it returns; route it to our command, which shows the result.
 */
export function routeLensCommand<T extends LensCommand | undefined>(command: T): T {
  if (command !== undefined && command.command === SERVER_COMMANDS.explainFunction) {
    return { ...command, command: EXPLAIN_COMMAND };
  }
  return command;
}

/** `ccls.explainFunction`/`ccls.showIR` arguments: [uri, {line, character}] (0-based, UTF-16). */
export function positionArguments(uri: string, line: number, character: number): [string, { line: number; character: number }] {
  return [uri, { line, character }];
}

/** Server replies are strings; anything else is reported, not shown as "[object Object]". */
export function replyText(reply: unknown, what: string): { text?: string; error?: string } {
  if (typeof reply === 'string' && reply.trim() !== '') {
    return { text: reply };
  }
  if (reply === null || reply === undefined || reply === '') {
    return { error: `ccls: no ${what} here — put the cursor inside a function the server has analysed.` };
  }
  return { error: `ccls: unexpected ${what} reply from the server (${typeof reply}).` };
}
