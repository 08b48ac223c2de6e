/**
 * The architecture, checked by `npm run lint` (dependency-cruiser): every file of src/ sits in one of the
 * layers below, and imports only point down. scripts/architecture-graph.js writes docs/architecture.md from
 * LAYERS, so the table there is this one. A resource uses another resource only through its public surface:
 * the *.module.ts, services, entities and DTOs, or a file named in PUBLIC below.
 */
const LAYERS = [
  {
    name: 'top',
    folders: ['cli', 'migrations'],
    files: [
      'app.module.ts',
      'app.ts',
      'main.ts',
      'cli.ts',
      'openapi.ts',
      'openapi-docs.ts',
      'openapi-examples.ts',
      'entities.ts',
    ],
    role: 'the only places that know every module',
    mayImport: 'anything',
  },
  {
    name: 'resources',
    folders: [
      'applications',
      'auth',
      'tenants',
      'tokens',
      'token-intents',
      'proxies',
      'reactors',
      'reactor-formulas',
      'health',
      'jobs',
      'sandbox-bridges',
      'sessions',
      'webhooks',
      'client-keys',
      'documents',
    ],
    files: [],
    role: 'one Nest module per folder',
    mayImport: "other resources' public surface, engines, foundation",
  },
  {
    name: 'engines',
    folders: [
      'access',
      'expressions',
      'outbound',
      'sandbox',
      'metrics',
      'rate-limits',
      'audit',
      'events',
      'mail',
      'idempotency',
    ],
    files: [],
    role: 'shared machinery that knows no resource',
    mayImport: 'engines, foundation',
  },
  {
    name: 'foundation',
    folders: ['common', 'config', 'crypto', 'database', 'tracing'],
    files: ['logging.ts'],
    role: 'generic parts that know nothing above them',
    mayImport: 'foundation',
  },
];
const layer = (name) => LAYERS.find((l) => l.name === name);
const escape = (text) => text.replace(/[.]/g, '\\.');
/** A path pattern for a layer's folders and files. */
const layerPath = ({ folders, files }) =>
  [
    ...(folders.length > 0 ? [`^src/(${folders.join('|')})/`] : []),
    ...(files.length > 0 ? [`^src/(${files.map(escape).join('|')})$`] : []),
  ].join('|');
const RESOURCES = layer('resources').folders;
const ENGINES = layer('engines').folders;
const FOUNDATION = layerPath(layer('foundation'));
const TOP = layerPath(layer('top'));
const LAYERED = LAYERS.map(layerPath).join('|');

const folders = (names) => `^src/(${names.join('|')})/`;
/** Files of a resource other modules may import besides its module, services, entities and DTOs. */
const PUBLIC = [
  'src/tokens/write-counter\\.ts$',
  // What the sandbox-bridges module is for: the host functions reactors and proxy transforms hand the sandbox.
  'src/sandbox-bridges/(bt|fetch)-bridge\\.ts$',
  // The outbox senders, whose polls the jobs table (src/jobs/jobs.module.ts) schedules.
  'src/webhooks/webhook-sender\\.ts$',
  'src/tenants/invitations/invitation-mail-sender\\.ts$',
];
/**
 * Unit specs sit beside the code and may build their inputs from any layer or from test/support; nothing
 * imports a spec, so they cannot carry a dependency into the product.
 */
const SPECS = '\\.spec\\.ts$';
const publicSurface = `(\\.module|\\.service|\\.entity)\\.ts$|/dto/|${PUBLIC.join('|')}`;

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle (type-only imports included) means two files cannot be understood apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'foundation-knows-nothing-above',
      severity: 'error',
      comment: 'The foundation stays generic: no engine, resource or top-level file.',
      from: { path: FOUNDATION, pathNot: SPECS },
      to: { path: `${folders([...ENGINES, ...RESOURCES])}|${TOP}` },
    },
    {
      name: 'engines-know-no-resource',
      severity: 'error',
      comment: 'Engines serve every resource and know none.',
      from: { path: folders(ENGINES), pathNot: SPECS },
      to: { path: `${folders(RESOURCES)}|${TOP}` },
    },
    {
      name: 'resources-know-nothing-on-top',
      severity: 'error',
      comment: 'Only the top wires every module together (app.module.ts, entities.ts, the CLI).',
      from: { path: folders(RESOURCES), pathNot: SPECS },
      to: { path: TOP },
    },
    {
      name: 'resources-meet-through-their-public-surface',
      severity: 'error',
      comment:
        'Another module is used through its *.module.ts exports, services, entities and DTOs (or PUBLIC files), not its internals.',
      from: { path: folders(RESOURCES), pathNot: SPECS },
      to: {
        path: folders(RESOURCES),
        pathNot: [`^src/$1/`, publicSurface],
      },
    },
    {
      name: 'every-file-in-a-layer',
      severity: 'error',
      comment: 'A file of src/ outside every layer would be checked by no rule: add its folder to LAYERS.',
      from: { path: '^src/', pathNot: [LAYERED, SPECS] },
      to: {},
    },
    {
      name: 'nothing-imports-a-file-outside-the-layers',
      severity: 'error',
      comment: 'A file of src/ outside every layer would be checked by no rule: add its folder to LAYERS.',
      from: {},
      to: { path: '^src/', pathNot: [LAYERED, SPECS] },
    },
    {
      name: 'src-never-imports-tests',
      severity: 'error',
      from: { path: '^src/', pathNot: SPECS },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: {
      mermaid: { minify: false },
      archi: { collapsePattern: '^src/[^/]+/' },
    },
  },
};
// Not enumerable: dependency-cruiser refuses options it does not know; scripts/architecture-graph.js reads it.
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS });
