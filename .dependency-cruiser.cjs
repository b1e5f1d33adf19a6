// The allowed imports between Gatepost's folders, checked by `npm run lint:deps` (in `npm test`).
// Each folder's README says the same in words. Tests (`*.test.ts`, and store/catalog.contract.ts,
// the tests both catalogs pass), test/, bench/ and helm/ may import anything: they start and poke
// the real parts.

const TESTS = '\\.(test|contract)\\.ts$';

/** Files held to a rule: the service's own code, not its tests. */
const source = (folder) => ({ path: `^${folder}`, pathNot: TESTS });

/** A rule: code in `folder` imports, of Gatepost's own files, only `allowed` (and its own folder). */
const onlyImports = (name, folder, allowed, comment) => ({
  name,
  comment,
  severity: 'error',
  from: source(folder),
  to: { dependencyTypes: ['local'], pathNot: [`^${folder}`, ...allowed] },
});

const RUNTIME_PORT = '^runtime/runtime\\.port\\.ts$';
/** What the service counts and logs through: plain functions, so prom-client stays in ops/. */
const METRICS_PORT = '^ops/metrics\\.port\\.ts$';
const CATALOG_PORT = '^store/catalog\\.port\\.ts$';
/** An actor's client: its `*.actor.ts` (the typed proxy), and the types of its calls in its `*.state.ts`. */
const ACTOR_CLIENTS = '^actors/[^/]+/[^/]+\\.actor\\.ts$';
const ACTOR_STATES = '^actors/[^/]+/[^/]+\\.state\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    onlyImports('lib', 'lib/', [], 'lib/ holds small helpers with no Gatepost knowledge.'),
    onlyImports('errors', 'errors/', ['^lib/'], 'The error catalogue sits under everything.'),
    onlyImports('sdk', 'sdk/', [], 'The Node SDK ships on its own: nothing of the service.'),
    onlyImports('cli', 'cli/', ['^sdk/node/'], 'The CLI talks to Gatepost over HTTP through the Node SDK, like any user.'),
    // mail/render.limits.ts: the render limits' shape and defaults, which the settings override.
    onlyImports('config', 'config/', ['^lib/', '^errors/', '^mail/render\\.limits\\.ts$']),
    onlyImports('mail', 'mail/', ['^lib/', '^errors/']),
    onlyImports('events', 'events/', ['^lib/', '^errors/']),
    // The signing code is the SDK's own (sdk/node/webhooks.ts), so that both sign alike.
    onlyImports('webhooks', 'webhooks/', ['^lib/', '^errors/', '^sdk/']),
    // The receipt signing keys live in the catalog, so every host signs with the same one.
    onlyImports('mta', 'mta/', ['^lib/', '^errors/', '^mail/', CATALOG_PORT]),
    onlyImports('store', 'store/', ['^lib/', '^errors/', '^mail/', '^events/']),
    onlyImports('tenancy', 'tenancy/', ['^lib/', '^errors/', '^mail/', CATALOG_PORT]),
    onlyImports('runtime', 'runtime/', ['^lib/'], 'The runtime port and its embedded adapter know no domain.'),
    onlyImports('ops', 'ops/', ['^lib/'], 'Metrics and logs know the names of what they count, nothing of the code that counts it.'),
    // Coded errors cross the sidecar as their bodies and are rebuilt on the caller's side
    // (errors/errors.catalog.ts), so the adapter reads the catalogue too.
    onlyImports('dapr-adapter', 'dapr/adapter/', ['^runtime/(?!embedded/)', '^lib/', '^errors/']),
    onlyImports(
      'dapr-tooling',
      'dapr/(?!adapter/)',
      ['^lib/'],
      'Building daprd and the local topology start processes; they import no service code.',
    ),
    // mta/: DeliveryActor is handed the relay it delivers through (mta/relay.smtp.ts).
    onlyImports('actors', 'actors/', [
      RUNTIME_PORT,
      '^events/',
      '^mail/',
      '^webhooks/',
      '^mta/',
      '^errors/',
      '^lib/',
      CATALOG_PORT,
      METRICS_PORT,
    ]),
    // tenancy/permissions.ts: the read clients read for a key, by the one table of what keys may do.
    // actors/recipient/suppression.index.ts: the list of suppressions a recipient check reads first.
    onlyImports('gate', 'gate/', [
      ACTOR_CLIENTS,
      '^tenancy/permissions\\.ts$',
      '^actors/recipient/suppression\\.index\\.ts$',
      ACTOR_STATES,
      '^mail/',
      '^events/',
      '^errors/',
      '^lib/',
      CATALOG_PORT,
      RUNTIME_PORT,
      METRICS_PORT,
    ]),
    {
      name: 'gate-actor-state',
      comment: "The gate takes only types from an actor's state file: its state and code stay the actor's.",
      severity: 'error',
      from: source('gate/'),
      to: { path: ACTOR_STATES, dependencyTypesNot: ['type-only'] },
    },
    // webhooks/: the webhook routes check an endpoint's URL with the SSRF guard and make its secret.
    onlyImports(
      'ingress',
      'ingress/',
      // ops/log.ts: the request log and request ids of the HTTP server.
      [
        '^gate/',
        '^errors/',
        '^lib/',
        '^mail/',
        '^events/',
        '^tenancy/',
        '^webhooks/',
        '^config/',
        '^ops/log\\.ts$',
        CATALOG_PORT,
        RUNTIME_PORT,
      ],
      'Ingresses parse, authenticate and call the gate: never the embedded runtime, Dapr, or an actor.',
    ),
    {
      name: 'composition',
      comment: 'Only app/ and main.ts compose everything: no service folder imports them.',
      severity: 'error',
      from: { pathNot: ['^(app/|main\\.ts$|test/|bench/|helm/)', TESTS] },
      to: { path: '^(app/|main\\.ts$)' },
    },
    {
      name: 'production-dependencies',
      comment: 'The image installs `dependencies` only (npm ci --omit=dev): the service imports nothing else.',
      severity: 'error',
      // cli/gatepost.js runs the CLI's sources through tsx where tsx is installed (a checkout), dist/ elsewhere.
      from: { pathNot: ['^(test/|bench/|helm/|dapr/(build|cluster)/|vitest\\.config\\.ts$|cli/gatepost\\.js$)', TESTS] },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '((^|/)(dist|data)|^\\.vitest-tmp)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
