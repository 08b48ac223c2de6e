#!/bin/sh
# `npm ci [args]`, with one fallback. npm ci also rejects a package-lock.json that lacks other platforms'
# optional binaries (@swc/core-darwin-*, ...): that happens when the lock was written against a registry
# that does not serve them, and `npm install --package-lock-only` cannot add them there. npm install then
# installs the same locked versions; the lock must come out unchanged, else package.json and the lock disagree.
# Used by .ci/run and the Dockerfile.
set -eu
if npm ci "$@"; then
  exit 0
fi
echo "npm ci refused package-lock.json; installing from it with npm install instead." >&2
before="$(cksum < package-lock.json)"
npm install --no-audit --no-fund "$@"
if [ "$(cksum < package-lock.json)" != "$before" ]; then
  echo "package-lock.json is out of date with package.json: run 'npm install' and commit the lock." >&2
  exit 1
fi
