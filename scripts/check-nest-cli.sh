#!/usr/bin/env bash
# nest-cli.json: `nest build` must produce byte for byte the dist/ that `npm run build` produced (run that
# first), and `nest start` must boot the vault (answering /health/ready) and stop on Ctrl+C.
set -euo pipefail

cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

if [ ! -f dist/src/main.js ]; then
  echo "Run npm run build first: this check compares nest build with it." >&2
  exit 1
fi
work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill -KILL -- "-$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

checksums() { (cd dist && find . -type f | LC_ALL=C sort | xargs sha256sum); }
checksums >"$work/npm-build.sum"
nest build
if ! checksums | diff -u "$work/npm-build.sum" - >"$work/diff"; then
  head -40 "$work/diff" >&2
  echo "nest build produced another dist/ than npm run build." >&2
  exit 1
fi
echo "nest build: the same $(wc -l <"$work/npm-build.sum") files as npm run build."

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
# Its own process group, so the Ctrl+C below reaches nest and the vault it started, as at a terminal.
setsid env PORT="$port" HOST=127.0.0.1 DATA_DIR="$work/data" nest start >"$work/start.log" 2>&1 &
server=$!
ready=""
for _ in $(seq 1 180); do
  if curl -sf -o /dev/null "http://127.0.0.1:$port/health/ready"; then
    ready=yes
    break
  fi
  sleep 1
done
if [ -z "$ready" ]; then
  tail -30 "$work/start.log" >&2
  echo "nest start did not bring the vault up on port $port." >&2
  exit 1
fi
grep -q 'Token Vault is running' "$work/start.log"
echo "nest start: the vault answers /health/ready on port $port."
kill -INT -- "-$server"
for _ in $(seq 1 30); do
  if ! kill -0 -- "-$server" 2>/dev/null; then
    server=""
    break
  fi
  sleep 1
done
if [ -n "$server" ]; then
  echo "nest start: the vault did not stop on Ctrl+C (SIGINT to its process group)." >&2
  exit 1
fi
grep -q 'Shut down in' "$work/start.log" || { tail -5 "$work/start.log" >&2; exit 1; }
echo "nest start: stopped on Ctrl+C after finishing in-flight requests."
