/**
 * The architecture, checked by `npm run lint` (dependency-cruiser). Imports only point down:
 *
 *   top         app.module.ts, app.ts, main.ts, cli.ts + cli/, openapi*.ts, entities.ts, migrations/
 *                 (the only places that know every module)
 *   resources   applications, auth (the API-key guard), tenants, tokens, proxies, reactors,
 *               reactor-formulas, health, jobs, sandbox-bridges, webhooks: one Nest module per folder
 *   engines     access (permissions, principals, access rules, decorators), expressions, outbound,
 *               sandbox, metrics, rate-limits (the shared limiter), audit (the audit trail), events (the
 *               webhook outbox's writer), mail (the Mailer): shared machinery that knows no resource
 *   foundation  common, config, crypto, database, tracing, logging.ts: know nothing above them
 *
 * A resource uses another resource only through its public surface: the *.module.ts, services, entities
 * and DTOs, or a file named in PUBLIC below. Regenerate the picture with `npm run graph`
 * (docs/architecture.md).
 */
const RESOURCES = [
  'applications',
  'auth',
  'tenants',
  'tokens',
  'proxies',
  'reactors',
  'reactor-formulas',
  'health',
  'jobs',
  'sandbox-bridges',
  'webhooks',
];
const ENGINES = [
  'access',
  'expressions',
  'outbound',
  'sandbox',
  'metrics',
  'rate-limits',
  'audit',
  'events',
  'mail',
];
const FOUNDATION = ['common', 'config', 'crypto', 'database', 'tracing'];
const TOP =
  '^src/(app\\.module|app|main|cli|openapi|openapi-docs|openapi-examples|entities)\\.ts$|^src/(cli|migrations)/';

const folders = (names) => `^src/(${names.join('|')})/`;
/** Files of a resource other modules may import besides its module, services, entities and DTOs. */
const PUBLIC = [
  'src/tokens/write-counter\\.ts$',
  // What the sandbox-bridges module is for: the host functions reactors and proxy transforms hand the sandbox.
  'src/sandbox-bridges/(bt|fetch)-bridge\\.ts$',
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
      comment: 'common/, config/, crypto/ and database/ stay generic: no engine, resource or top-level file.',
      from: { path: folders(FOUNDATION), pathNot: SPECS },
      to: { path: `${folders([...ENGINES, ...RESOURCES])}|${TOP}` },
    },
    {
      name: 'engines-know-no-resource',
      severity: 'error',
      comment:
        'access/, expressions/, outbound/, sandbox/, metrics/ and rate-limits/ serve every resource and know none.',
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
