#!/usr/bin/env node
// `npm run graph`: writes docs/architecture.md, the layer table of .dependency-cruiser.cjs (LAYERS) and the
// module graph of src/ as dependency-cruiser's mermaid output with folders collapsed to modules. `.ci/run`
// writes it to a temp file and diffs it with the committed one, so the picture stays current. Fails when an
// entry of src/ is in no layer. Usage: node scripts/architecture-graph.js [output file]
'use strict';
const { execFileSync } = require('node:child_process');
const { readdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const { LAYERS } = require(join(root, '.dependency-cruiser.cjs'));

const outside = readdirSync(join(root, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() || !entry.name.endsWith('.spec.ts'))
  .map((entry) => entry.name)
  .filter((name) => !LAYERS.some(({ folders, files }) => folders.includes(name) || files.includes(name)));
if (outside.length > 0) {
  process.stderr.write(
    `In no layer of .dependency-cruiser.cjs: ${outside.map((n) => `src/${n}`).join(', ')}\n`,
  );
  process.exit(1);
}
const out = process.argv[2] ?? join(root, 'docs', 'architecture.md');
const mermaid = execFileSync(
  join(root, 'node_modules', '.bin', 'depcruise'),
  [
    'src',
    '--config',
    '.dependency-cruiser.cjs',
    '--include-only',
    '^src/',
    '--exclude',
    '\\.spec\\.ts$',
    '--collapse',
    '^src/[^/]+',
    '--output-type',
    'mermaid',
  ],
  { cwd: root, encoding: 'utf8' },
);

// Edges sorted, so the file changes only when a dependency between modules appears or goes.
const lines = mermaid.trim().split('\n');
const edges = lines.filter((line) => line.includes('-->')).sort();
const graph = [...lines.filter((line) => !line.includes('-->')), ...edges].join('\n');

const code = (name) => `\`${name}\``;
const rows = LAYERS.map(({ name, folders, files, role, mayImport }) => {
  const entries = [...files.map(code), ...folders.map((f) => code(`${f}/`))].join(', ');
  return `| ${name} | ${entries} | ${role} | ${mayImport} |`;
});

const text = `# Architecture

How the modules of \`src/\` depend on each other (an arrow points at what a module imports). Every file of
\`src/\` sits in one of four layers and imports only point down; \`npm run lint\` enforces them with the rules
in [\`.dependency-cruiser.cjs\`](../.dependency-cruiser.cjs), and CI fails when this file is not current. The
table below is written from that file's \`LAYERS\`.

| Layer | Folders and files | What they are | May import |
| --- | --- | --- | --- |
${rows.join('\n')}

A resource's public surface is its \`*.module.ts\`, services, entities and DTOs, plus the few files named in
the config. There are no import cycles, type-only imports included. Regenerate with \`npm run graph\`.

\`\`\`mermaid
${graph}
\`\`\`
`;
writeFileSync(out, text);
