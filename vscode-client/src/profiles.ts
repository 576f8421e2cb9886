/** Profiles offered in the quick pick and shown in the status bar. Pure. */

export interface ProfileChoice {
  name: string;
  /** [w_CU, w_EU, w_CO2, w_USD], when known on the client. */
  weights?: readonly number[];
  source: 'built-in' | 'custom';
}

// Weights of paper eq. 7; DEFAULT's weights live in the server's cost tables.
export const BUILTIN_PROFILES: readonly ProfileChoice[] = [
  { name: 'DEFAULT', source: 'built-in' },
  { name: 'RESEARCH', weights: [0.4, 0.3, 0.25, 0.05], source: 'built-in' },
  { name: 'COMMERCIAL', weights: [0.3, 0.2, 0.2, 0.3], source: 'built-in' },
  { name: 'MOBILE', weights: [0.25, 0.5, 0.15, 0.1], source: 'built-in' },
  { name: 'HPC', weights: [0.5, 0.3, 0.15, 0.05], source: 'built-in' },
];

/** Built-ins plus well-formed entries of `ccls.customProfiles` (malformed ones are left to the server to report). */
export function profileChoices(customProfiles: unknown): ProfileChoice[] {
  const choices = [...BUILTIN_PROFILES];
  if (customProfiles !== null && typeof customProfiles === 'object' && !Array.isArray(customProfiles)) {
    for (const [name, weights] of Object.entries(customProfiles)) {
      const builtin = choices.some((c) => c.name.toUpperCase() === name.toUpperCase());
      if (!builtin && Array.isArray(weights) && weights.length === 4 && weights.every((w) => typeof w === 'number')) {
        choices.push({ name, weights, source: 'custom' });
      }
    }
  }
  return choices;
}

export interface PickItem {
  label: string;
  description: string;
  picked: boolean;
}

export function profilePickItems(customProfiles: unknown, current: string): PickItem[] {
  return profileChoices(customProfiles).map((choice) => {
    const isCurrent = choice.name.toUpperCase() === current.toUpperCase();
    const parts = [choice.weights ? formatWeights(choice.weights) : "server's default weights"];
    if (choice.source === 'custom') {
      parts.push('custom');
    }
    if (isCurrent) {
      parts.push('current');
    }
    return { label: choice.name, description: parts.join(' · '), picked: isCurrent };
  });
}

export function formatWeights(weights: readonly number[]): string {
  const names = ['CU', 'EU', 'CO2', 'USD'];
  return weights.map((w, i) => `${names[i]} ${w.toFixed(2)}`).join(' ');
}

/** Status bar text, e.g. "ccls: RESEARCH". */
export function statusText(profile: unknown): string {
  return `ccls: ${typeof profile === 'string' && profile.trim() !== '' ? profile.trim() : 'DEFAULT'}`;
}

export function statusTooltip(profile: unknown, region: unknown, serverVersion: string | undefined): string {
  const lines = [`Scoring profile: ${statusText(profile).slice('ccls: '.length)}`, `Region: ${typeof region === 'string' && region !== '' ? region : 'WORLD'}`];
  lines.push(serverVersion ? `Server: ${serverVersion}` : 'Server: not running');
  lines.push('Click to change the profile');
  return lines.join('\n');
}
