// The Helm chart in helm/gatepost: `helm lint` passes, `helm template` renders what a Dapr
// cluster needs, with the default values and with a second set, and every manifest it renders
// (with each values file in helm/examples/ too) is valid against the Kubernetes and Dapr schemas
// (helm/kubeconform.ts: kubeconform and its schemas, made from Go modules). helm comes from
// helm/helm.sh, which builds it once from the helm.sh/helm/v3 Go module (minutes the first
// time, then cached outside the repository), or from GATEPOST_HELM.
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { validate } from './kubeconform.ts';
import { V8_FLAGS } from '../app/launch.ts';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CHART = join(ROOT, 'helm', 'gatepost');

const hasGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// Loosely typed access to rendered Kubernetes objects.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

let helmBin = '';

async function helm(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(helmBin, args, { cwd: ROOT, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `helm template`'s output with the default values and `--set` each of `set` (and `-f` each of `files`). */
async function rendered(set: string[], files: string[] = []): Promise<string> {
  const args = ['template', 'gatepost', CHART, '--namespace', 'mail'];
  for (const s of set) args.push('--set', s);
  for (const f of files) args.push('-f', f);
  const { code, stdout, stderr } = await helm(...args);
  expect(stderr.replace(/^WARNING: .*\n?/gm, ''), 'helm template stderr').toBe('');
  expect(code).toBe(0);
  return stdout;
}

async function render(...set: string[]): Promise<Obj[]> {
  const docs = parseAllDocuments(await rendered(set));
  for (const doc of docs) expect(doc.errors, 'rendered YAML parses').toEqual([]);
  return docs.map((doc) => doc.toJS() as Obj | null).filter((o): o is Obj => o !== null);
}

function find(objects: Obj[], kind: string, name: string): Obj {
  const found = objects.filter((o) => o.kind === kind && o.metadata?.name === name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!;
}

const container = (deployment: Obj): Obj => deployment.spec.template.spec.containers[0];
const annotations = (deployment: Obj): Record<string, string> => deployment.spec.template.metadata.annotations;
const envOf = (deployment: Obj): Map<string, Obj> =>
  new Map((container(deployment).env as Obj[]).map((e) => [e.name as string, e]));

describe('the image the chart runs', () => {
  it('starts with the command the Dockerfile gives it', () => {
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Obj;
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
    expect(cmd, 'the Dockerfile has a CMD in exec form').toBeDefined();
    expect(values.command).toEqual(JSON.parse(cmd!));
    expect(values.image.repository).toBe('gatepost');
  });
});

describe.skipIf(!hasGo && !process.env.GATEPOST_HELM)('helm chart helm/gatepost', () => {
  beforeAll(() => {
    // Builds helm on the first run (module download and build), then prints the cached path.
    helmBin = execFileSync('bash', [join(ROOT, 'helm', 'helm.sh')], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
  }, 20 * 60_000);

  it('lints without errors, with the default values and with existingSecret', async () => {
    for (const set of [[], ['existingSecret=mine', 'ingress.autoscaling.enabled=false']]) {
      const args = ['lint', '--strict', CHART];
      for (const s of set) args.push('--set', s);
      const { code, stdout, stderr } = await helm(...args);
      expect(stdout + stderr).not.toContain('[ERROR]');
      expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(code).toBe(0);
    }
  });

  it('renders the ingress and the actor host as Dapr apps (default values)', async () => {
    const objects = await render();
    const ingress = find(objects, 'Deployment', 'gatepost-ingress');
    const actors = find(objects, 'Deployment', 'gatepost-actors');

    for (const [deployment, appId] of [
      [ingress, 'gatepost-ingress'],
      [actors, 'gatepost-actors'],
    ] as const) {
      const a = annotations(deployment);
      expect(a['dapr.io/enabled']).toBe('true');
      expect(a['dapr.io/app-id']).toBe(appId);
      expect(a['dapr.io/config']).toBe('gatepost');
      expect(a['dapr.io/log-level']).toBe('info');
      expect(a['dapr.io/sidecar-cpu-request']).toBe('100m');
      expect(a['dapr.io/sidecar-memory-limit']).toBe('256Mi');
      expect(a['checksum/secret']).toMatch(/^[0-9a-f]{64}$/);
      const c = container(deployment);
      expect(c.image).toBe('gatepost:0.1.0');
      expect(c.command).toEqual(['node', ...V8_FLAGS, 'dist/main.js']);
      expect(c.resources.requests).toEqual({ cpu: '250m', memory: '256Mi' });
      expect(c.resources.limits).toEqual({ cpu: '1', memory: '512Mi' });
      const env = envOf(deployment);
      expect(env.get('GATEPOST_RUNTIME')?.value).toBe('dapr');
      expect(env.get('GATEPOST_PUBSUB')?.value).toBe('pubsub');
      expect(env.get('DATABASE_URL')?.valueFrom.secretKeyRef).toEqual({ name: 'gatepost', key: 'DATABASE_URL' });
      for (const key of ['GATEPOST_ADMIN_TOKEN', 'GATEPOST_SMTP_RELAY']) {
        expect(env.get(key)?.valueFrom.secretKeyRef).toEqual({ name: 'gatepost', key, optional: true });
      }
      expect(env.get('GATEPOST_HOSTNAME')?.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    }

    // The ingress: the HTTP API on 3000, probed on /healthz; no app port for its sidecar.
    expect(annotations(ingress)['dapr.io/app-port']).toBeUndefined();
    expect(envOf(ingress).get('GATEPOST_ROLE')?.value).toBe('ingress');
    expect(envOf(ingress).get('PORT')?.value).toBe('3000');
    const ic = container(ingress);
    expect(ic.ports).toEqual([
      { name: 'http', containerPort: 3000, protocol: 'TCP' },
      { name: 'smtp', containerPort: 2587, protocol: 'TCP' },
      { name: 'inbound', containerPort: 2525, protocol: 'TCP' },
    ]);
    // SMTP submission: its port, and a generated certificate in the pod's data volume (no TLS Secret).
    expect(envOf(ingress).get('GATEPOST_SMTP_PORT')?.value).toBe('2587');
    expect(envOf(ingress).get('GATEPOST_DATA_DIR')?.value).toBe('/var/lib/gatepost');
    expect(envOf(ingress).has('GATEPOST_SMTP_TLS_CERT')).toBe(false);
    expect(ic.volumeMounts).toEqual([{ name: 'data', mountPath: '/var/lib/gatepost' }]);
    expect(ingress.spec.template.spec.volumes).toEqual([{ name: 'data', emptyDir: {} }]);
    expect(ic.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(ic.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    // With the HPA on, the Deployment leaves the replica count to it.
    expect(ingress.spec.replicas).toBeUndefined();

    // The actor host: Dapr's callbacks on 3001, the sidecar told so and checking /healthz there.
    const aa = annotations(actors);
    expect(aa['dapr.io/app-port']).toBe('3001');
    expect(aa['dapr.io/app-health-check-path']).toBe('/healthz');
    expect(envOf(actors).get('GATEPOST_ROLE')?.value).toBe('actors');
    expect(envOf(actors).get('APP_PORT')?.value).toBe('3001');
    expect(envOf(actors).has('PORT')).toBe(false);
    expect(actors.spec.replicas).toBe(2);
    // It listens on 127.0.0.1 only, so the default probes run inside the container.
    const ac = container(actors);
    for (const probe of [ac.readinessProbe, ac.livenessProbe]) {
      expect(probe.httpGet).toBeUndefined();
      expect(probe.exec.command.slice(0, 2)).toEqual(['node', '-e']);
      expect(probe.exec.command[2]).toContain("fetch('http://127.0.0.1:3001/healthz')");
    }

    // The Services: the HTTP API, SMTP submission and the inbound MX, each its own, selecting the ingress only.
    const svc = find(objects, 'Service', 'gatepost');
    expect(svc.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
    expect(find(objects, 'Service', 'gatepost-smtp').spec).toMatchObject({
      type: 'ClusterIP',
      ports: [{ name: 'smtp', port: 587, targetPort: 'smtp', protocol: 'TCP' }],
      selector: ingress.spec.selector.matchLabels,
    });
    expect(find(objects, 'Service', 'gatepost-inbound').spec).toMatchObject({
      type: 'ClusterIP',
      ports: [{ name: 'inbound', port: 25, targetPort: 'inbound', protocol: 'TCP' }],
      selector: ingress.spec.selector.matchLabels,
    });
    expect(envOf(ingress).get('GATEPOST_INBOUND_PORT')?.value).toBe('2525');
    expect(envOf(ingress).get('GATEPOST_INBOUND_MAX_BYTES')?.value).toBe('26214400');
    expect(svc.spec.selector).toEqual(ingress.spec.selector.matchLabels);
    expect(svc.spec.selector['app.kubernetes.io/component']).toBe('ingress');
    expect(ingress.spec.template.metadata.labels).toMatchObject(ingress.spec.selector.matchLabels);
    expect(actors.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('actors');

    // The HPA.
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'gatepost-ingress');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gatepost-ingress' });
    expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 10 });
    expect(hpa.spec.metrics[0].resource).toEqual({
      name: 'cpu',
      target: { type: 'Utilization', averageUtilization: 70 },
    });

    // The chart's Secret holds DATABASE_URL (empty here), and nothing unset.
    const secret = find(objects, 'Secret', 'gatepost');
    expect(Object.keys(secret.data)).toEqual(['DATABASE_URL']);

    // The Dapr resources, as in components/.
    const store = find(objects, 'Component', 'statestore');
    expect(store.apiVersion).toBe('dapr.io/v1alpha1');
    expect(store.spec.type).toBe('state.redis');
    const storeMeta = new Map((store.spec.metadata as Obj[]).map((m) => [m.name as string, m]));
    expect(storeMeta.get('actorStateStore')?.value).toBe('true');
    expect(storeMeta.get('redisHost')?.value).toBe('redis-master:6379');
    expect(storeMeta.get('redisPassword')?.secretKeyRef).toEqual({ name: 'redis', key: 'redis-password' });
    expect(store.auth).toEqual({ secretStore: 'kubernetes' });
    expect(store.scopes).toEqual(['gatepost-ingress', 'gatepost-actors']);

    const pubsub = find(objects, 'Component', 'pubsub');
    expect(pubsub.apiVersion).toBe('dapr.io/v1alpha1');
    expect(pubsub.spec.type).toBe('pubsub.redis');
    const pubsubMeta = new Map((pubsub.spec.metadata as Obj[]).map((m) => [m.name as string, m.value]));
    expect(pubsubMeta.get('processingTimeout')).toBe('15s');
    expect(pubsubMeta.get('redeliverInterval')).toBe('5000');
    expect(pubsubMeta.get('concurrency')).toBe('64');
    expect(pubsubMeta.has('actorStateStore')).toBe(false);

    const resiliency = find(objects, 'Resiliency', 'gatepost');
    expect(resiliency.apiVersion).toBe('dapr.io/v1alpha1');
    expect(resiliency.spec.policies.retries.actorCalls).toEqual({
      policy: 'constant',
      duration: '250ms',
      maxRetries: 40,
    });
    expect(Object.keys(resiliency.spec.targets.actors).sort()).toEqual([
      'AutomationRunActor',
      'BatchActor',
      'DeliveryActor',
      'MessageActor',
      'RecipientActor',
      'SourceIpActor',
      'TenantActor',
    ]);
    // DeliveryActor is never retried by daprd: a retried delivery attempt could send twice.
    expect(resiliency.spec.targets.actors.DeliveryActor).toEqual({ retry: 'never' });
    expect(resiliency.spec.policies.retries.never.maxRetries).toBe(0);
    // Failed deliveries to a subscriber are retried by daprd (the component would acknowledge them).
    expect(resiliency.spec.targets.components).toEqual({ pubsub: { inbound: { retry: 'subscriberRetry' } } });

    const configuration = find(objects, 'Configuration', 'gatepost');
    expect(configuration.apiVersion).toBe('dapr.io/v1alpha1');

    expect(objects.map((o) => o.kind).sort()).toEqual([
      'Component',
      'Component',
      'Configuration',
      'Deployment',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'PodDisruptionBudget',
      'Resiliency',
      'Secret',
      'Service',
      'Service',
      'Service',
    ]);
    // A node drain leaves one pod of each.
    for (const [deployment, name] of [
      [ingress, 'gatepost-ingress'],
      [actors, 'gatepost-actors'],
    ] as const) {
      const pdb = find(objects, 'PodDisruptionBudget', name);
      expect(pdb.apiVersion).toBe('policy/v1');
      expect(pdb.spec).toEqual({ minAvailable: 1, selector: { matchLabels: deployment.spec.selector.matchLabels } });
    }
  });

  it('follows a second values set: no HPA, replica counts, an existing Secret, httpGet probes', async () => {
    const objects = await render(
      'ingress.autoscaling.enabled=false',
      'ingress.replicas=4',
      'actors.replicas=3',
      'existingSecret=mine',
      'actors.probeMode=httpGet',
      'redis.passwordSecret.name=',
      'dapr.logLevel=debug',
      'image.tag=1.2.3',
      'ingress.smtp.tlsSecret=mail-tls',
      'ingress.smtp.port=2465',
      'ingress.smtp.service.type=LoadBalancer',
      'ingress.smtp.service.port=465',
      'ingress.inbound.service.type=LoadBalancer',
    );
    expect(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);

    const ingress = find(objects, 'Deployment', 'gatepost-ingress');
    const actors = find(objects, 'Deployment', 'gatepost-actors');
    expect(ingress.spec.replicas).toBe(4);
    expect(actors.spec.replicas).toBe(3);
    // SMTP submission with the operator's certificate, from a TLS Secret mounted read-only.
    const smtpEnv = envOf(ingress);
    expect(smtpEnv.get('GATEPOST_SMTP_PORT')?.value).toBe('2465');
    expect(smtpEnv.get('GATEPOST_SMTP_TLS_CERT')?.value).toBe('/etc/gatepost/smtp-tls/tls.crt');
    expect(smtpEnv.get('GATEPOST_SMTP_TLS_KEY')?.value).toBe('/etc/gatepost/smtp-tls/tls.key');
    expect(container(ingress).volumeMounts).toContainEqual({
      name: 'smtp-tls',
      mountPath: '/etc/gatepost/smtp-tls',
      readOnly: true,
    });
    expect(ingress.spec.template.spec.volumes).toContainEqual({ name: 'smtp-tls', secret: { secretName: 'mail-tls' } });
    // The inbound MX presents the same certificate: the app falls back to submission's.
    expect(smtpEnv.has('GATEPOST_INBOUND_TLS_CERT')).toBe(false);
    expect(ingress.spec.template.spec.volumes.map((v: { name: string }) => v.name)).not.toContain('inbound-tls');
    expect(container(ingress).ports).toContainEqual({ name: 'smtp', containerPort: 2465, protocol: 'TCP' });
    // Exposed as load balancers that keep the client's address (rate limits, SPF).
    expect(find(objects, 'Service', 'gatepost-smtp').spec).toMatchObject({
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'smtp', port: 465, targetPort: 'smtp', protocol: 'TCP' }],
    });
    expect(find(objects, 'Service', 'gatepost-inbound').spec).toMatchObject({
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'inbound', port: 25, targetPort: 'inbound', protocol: 'TCP' }],
    });
    expect(find(objects, 'Service', 'gatepost').spec.type).toBe('ClusterIP');
    for (const deployment of [ingress, actors]) {
      const env = envOf(deployment);
      expect(env.get('DATABASE_URL')?.valueFrom.secretKeyRef).toEqual({ name: 'mine', key: 'DATABASE_URL' });
      expect(env.get('GATEPOST_ADMIN_TOKEN')?.valueFrom.secretKeyRef.name).toBe('mine');
      expect(annotations(deployment)['dapr.io/log-level']).toBe('debug');
      expect(annotations(deployment)['checksum/secret']).toBeUndefined();
      expect(container(deployment).image).toBe('gatepost:1.2.3');
    }
    const ac = container(actors);
    expect(ac.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'dapr-app' });
    expect(ac.ports).toEqual([{ name: 'dapr-app', containerPort: 3001, protocol: 'TCP' }]);
    expect(ac.readinessProbe.exec).toBeUndefined();

    // Without a Redis password Secret, neither Component refers to one.
    for (const name of ['statestore', 'pubsub']) {
      const component = find(objects, 'Component', name);
      expect((component.spec.metadata as Obj[]).map((m) => m.name)).not.toContain('redisPassword');
      expect(component.auth).toBeUndefined();
    }
  });

  it('mounts a TLS Secret of the inbound MX\u2019s own and passes it as GATEPOST_INBOUND_TLS_CERT/KEY, beside submission\u2019s', async () => {
    const objects = await render('ingress.smtp.tlsSecret=submission-tls', 'ingress.inbound.tlsSecret=mx-tls');
    const ingress = find(objects, 'Deployment', 'gatepost-ingress');
    const env = envOf(ingress);
    expect(env.get('GATEPOST_SMTP_TLS_CERT')?.value).toBe('/etc/gatepost/smtp-tls/tls.crt');
    expect(env.get('GATEPOST_INBOUND_TLS_CERT')?.value).toBe('/etc/gatepost/inbound-tls/tls.crt');
    expect(env.get('GATEPOST_INBOUND_TLS_KEY')?.value).toBe('/etc/gatepost/inbound-tls/tls.key');
    expect(container(ingress).volumeMounts).toEqual([
      { name: 'data', mountPath: '/var/lib/gatepost' },
      { name: 'smtp-tls', mountPath: '/etc/gatepost/smtp-tls', readOnly: true },
      { name: 'inbound-tls', mountPath: '/etc/gatepost/inbound-tls', readOnly: true },
    ]);
    expect(ingress.spec.template.spec.volumes).toEqual([
      { name: 'data', emptyDir: {} },
      { name: 'smtp-tls', secret: { secretName: 'submission-tls' } },
      { name: 'inbound-tls', secret: { secretName: 'mx-tls' } },
    ]);
    // The actor host serves no SMTP: neither Secret is mounted there.
    expect(envOf(find(objects, 'Deployment', 'gatepost-actors')).has('GATEPOST_INBOUND_TLS_CERT')).toBe(false);
  });

  it(
    'renders manifests valid against the Kubernetes 1.34 and Dapr 1.18 schemas (kubeconform, strict), with every values file',
    async () => {
      const examples = join(ROOT, 'helm', 'examples');
      const sets: [string, string[], string[]][] = [
        ['the default values', [], []],
        [
          'no HPA, an existing Secret, httpGet probes',
          ['ingress.autoscaling.enabled=false', 'existingSecret=mine', 'actors.probeMode=httpGet'],
          [],
        ],
        ...readdirSync(examples).map((f): [string, string[], string[]] => [f, [], [join(examples, f)]]),
      ];
      for (const [name, set, files] of sets) {
        const manifests = await rendered(set, files);
        const verdict = validate(manifests);
        const documents = parseAllDocuments(manifests).filter((d) => d.toJS() !== null).length;
        expect(
          verdict.resources.filter((r) => r.status !== 'statusValid'),
          name,
        ).toEqual([]);
        expect(verdict.resources.length, name).toBe(documents);
        expect(verdict.code, name).toBe(0);
      }
      // The check refuses what Kubernetes would: a field the API does not define, a port that is not one.
      const wrong = validate('apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  portz: []\n');
      expect(wrong.code).not.toBe(0);
      expect(wrong.resources[0]?.msg).toContain("'portz' not allowed");
      const port = validate('apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports: [{port: eighty}]\n');
      expect(port.resources[0]?.status).toBe('statusInvalid');
    },
    20 * 60_000,
  );

  it('puts the chart Secret\u2019s values in its data and refuses an unknown probe mode', async () => {
    const objects = await render('secret.databaseUrl=postgres://gp@db:5432/gp', 'secret.adminToken=tok');
    const secret = find(objects, 'Secret', 'gatepost');
    const decoded = Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
    expect(decoded).toEqual({ DATABASE_URL: 'postgres://gp@db:5432/gp', GATEPOST_ADMIN_TOKEN: 'tok' });

    const bad = await helm('template', 'gatepost', CHART, '--set', 'actors.probeMode=tcp');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('actors.probeMode must be exec or httpGet');
  });
});
