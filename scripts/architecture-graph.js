#!/usr/bin/env node
// `npm run graph`: writes docs/architecture.md, the module graph of src/ as dependency-cruiser's mermaid
// output with folders collapsed to modules. `.ci/run` writes it to a temp file and diffs it with the
// committed one, so the picture stays current. Usage: node scripts/architecture-graph.js [output file]
'use strict';
const { execFileSync } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
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

const text = `# Architecture

How the modules of \`src/\` depend on each other (an arrow points at what a module imports). Imports only
point down, through four layers; \`npm run lint\` enforces them with the rules in
[\`.dependency-cruiser.cjs\`](../.dependency-cruiser.cjs), and CI fails when this file is not current.

| Layer      | Folders                                                                                    | May import                      |
| ---------- | ------------------------------------------------------------------------------------------ | ------------------------------- |
| top        | \`app.module.ts\`, \`app.ts\`, \`main.ts\`, \`cli.ts\` + \`cli/\`, \`openapi*.ts\`, \`entities.ts\`, \`migrations/\` | anything                        |
| resources  | \`applications\`, \`auth\`, \`tenants\`, \`tokens\`, \`proxies\`, \`reactors\`, \`reactor-formulas\`, \`health\`, \`jobs\`, \`sandbox-bridges\`, \`webhooks\` | other resources' public surface, engines, foundation |
| engines    | \`access\`, \`expressions\`, \`outbound\`, \`sandbox\`, \`metrics\`, \`audit\`, \`events\`                                 | engines, foundation             |
| foundation | \`common\`, \`config\`, \`crypto\`, \`database\`, \`logging.ts\`                                   | foundation                      |

A resource's public surface is its \`*.module.ts\`, services, entities and DTOs, plus the few files named in
the config. There are no import cycles, type-only imports included. Regenerate with \`npm run graph\`.

\`\`\`mermaid
${graph}
\`\`\`
`;
writeFileSync(out, text);
