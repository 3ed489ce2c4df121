/**
 * The layers of ARCHITECTURE.md, enforced: `npm run lint:deps` (the first step of `npm test`) fails on an import
 * that breaks one of these rules, naming the rule, the two files and why the rule exists. Every rule holds with no
 * exception. The console (console/src) is not cruised: swc, the parser used here, crashes on one of its .tsx files.
 */
const ADAPTERS_AND_IO = '^src/(http|service|cli|mcp|application|projection-engine|read-models|event-store/(sqlite|esdb)|blobs|key-store|snapshots|mail|media|webhooks|contact-forms|audit|backup|metrics|sqlite|config|outbox|translation|review-notices|data-dir|fs|logging|public-content)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other (type imports included) are one module in two files: merge them, or move what both need below both.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'The domain (events and deciders) does no I/O: it imports no adapter, store, HTTP, application or service code, nor the rendering of public content (which is built on it).',
      from: { path: '^src/domain/' },
      to: { path: ADAPTERS_AND_IO },
    },
    {
      name: 'read-models-below-the-engine',
      severity: 'error',
      comment: 'The read-model port and its adapters store documents: the projection engine drives them, never the other way round.',
      from: { path: '^src/read-models/' },
      to: { path: '^src/(projection-engine|application|audit)/' },
    },
    {
      name: 'security-below-the-domain',
      severity: 'error',
      comment: 'src/security holds primitives (hashing, keys, SSRF guard, rate limits): it knows nothing of the domain, the application or HTTP.',
      from: { path: '^src/security/' },
      to: { path: '^src/(domain|application|http|projection-engine|read-models|config|mcp)/' },
    },
    {
      name: 'mcp-above-http',
      severity: 'error',
      comment: 'The MCP tool server is a client of the admin API (it calls it over loopback HTTP and declares its outputs with its schemas): HTTP never imports it; the composition mounts its endpoint.',
      from: { path: '^src/http/' },
      to: { path: '^src/mcp/' },
    },
    {
      name: 'projections-fold-only',
      severity: 'error',
      comment: 'A projection folds events into documents: it imports the domain, the engine\'s and the read-model port\'s types, never HTTP, the application or a service.',
      from: { path: '^projections/' },
      to: { path: '^src/(http|application|service|cli|mcp|media|webhooks|contact-forms|translation|review-notices)/' },
    },
    {
      name: 'http-only-from-above',
      severity: 'error',
      comment: 'Only the composition and the entry points use the HTTP layer: features, the application and everything below it do not.',
      from: { path: '^(src|projections)/', pathNot: '^src/(http/|service/|cli/|mcp/|main\\.ts)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'service-only-from-entry-points',
      severity: 'error',
      comment: 'The composition (src/service) is used by the entry points only.',
      from: { path: '^(src|projections)/', pathNot: '^src/(service/|cli/|mcp/|main\\.ts)' },
      to: { path: '^src/service/' },
    },
    {
      name: 'no-test-code-in-production',
      severity: 'error',
      comment: 'The service, the projections and the console import nothing from test/.',
      from: { path: '^(src|projections|console/src|clients/typescript/src)/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-dev-dependencies-in-production',
      severity: 'error',
      comment: 'What the service imports must be a production dependency: npm ci --omit=dev (the Docker image) would not have it.',
      from: { path: '^(src|projections)/' },
      to: { dependencyTypes: ['npm-dev'], pathNot: 'node_modules/(tsx|@types)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|console/dist|node_modules|clients/typescript/dist)/' },
    // The project compiles with TypeScript 7 (tsgo), which dependency-cruiser cannot load: it parses with swc.
    parser: 'swc',
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
