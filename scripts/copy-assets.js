#!/usr/bin/env node
'use strict';
/**
 * Copies the plain JavaScript files under src/ that tsc does not emit (the sandbox worker, which runs in
 * its own process without a TypeScript loader) to the same place under dist/src/. Part of `npm run build`.
 */
const { cpSync, readdirSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');

function copyJs(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      copyJs(path);
    } else if (entry.isFile() && entry.name.endsWith('.js')) {
      cpSync(path, join(root, 'dist', relative(root, path)));
    }
  }
}

copyJs(join(root, 'src'));
