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

## The data layer

Services reach the database only through repositories: one per aggregate (\`*.repository.ts\`, its
statement-building parts beside it as \`*.statements.ts\`), a tenant's rows always addressed by tenant id first. Every
repository sends its statements through \`Database\` (\`src/database/database.service.ts\`), which owns the one
transaction mechanism (\`db.transaction(work)\`: every statement sent inside \`work\`, through any repository,
joins it), named prepared statements and the pooler switch (\`DATABASE_PREPARED_STATEMENTS\`), and batching
per tenant (never across tenants). \`npm run lint\` refuses SQL text and TypeORM's data access anywhere else.
Outboxes (webhook deliveries, invitation mail, async react runs) share one durable queue
(\`src/database/durable-queue.ts\`), and every timer is a row of the jobs table (\`src/jobs/\`).

\`\`\`mermaid
${graph}
\`\`\`
`;
writeFileSync(out, text);
