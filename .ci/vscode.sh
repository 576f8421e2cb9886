#!/usr/bin/env bash
# VS Code client: install pinned deps from the npm registry (package-lock.json), typecheck, unit
# tests, the protocol test against the real server, then the .vsix.
#   CCLS_SERVER  server command for the protocol test (JSON array or words; default: python3 -m ccls --stdio)
#   PYTHON       interpreter for that default (default: the repository's .venv, as .ci/setup made it,
#                else python3)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${PYTHON:-}" ] && [ -x "$root/.venv/bin/python" ]; then
  export PYTHON="$root/.venv/bin/python"
fi
cd "$root/vscode-client"

echo "== vscode-client: node $(node --version), npm $(npm --version)"
# --prefer-offline: use the npm cache when it already holds the locked versions.
npm ci --prefer-offline --no-audit --no-fund

echo "== typecheck"
npm run --silent typecheck

echo "== unit tests (vscode module stubbed)"
npm run --silent test:unit

echo "== protocol test (spawns the real server)"
npm run --silent test:protocol

echo "== package"
rm -f ./*.vsix
# No public repository URL yet; vsce would otherwise stop to ask.
npx --no-install vsce package --allow-missing-repository
vsix="$(ls ./*.vsix)"
echo "built $root/vscode-client/${vsix#./} ($(stat -c %s "$vsix") bytes)"
