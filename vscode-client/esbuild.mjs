// Bundles the extension into dist/extension.js; `vscode` is provided by the editor at run time.
import { build } from 'esbuild';

const production = process.argv.includes('--production');
await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  external: ['vscode'],
  outfile: 'dist/extension.js',
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'info',
});
