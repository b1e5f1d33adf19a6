// dapr.yaml (Dapr Multi-App Run) and tye.yaml (Project Tye) describe, for people with those tools,
// the topology `npm run start:dapr` starts: an actor host and an ingress, each with its app id,
// role and ports, on the components in ./components. Neither tool runs here, so this checks what
// can be checked without them: the two files agree with each other and with the cluster
// launcher, and each app's environment is one Gatepost starts with.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../config/config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => parse(readFileSync(`${ROOT}/${file}`, 'utf8'));

interface App {
  id: string;
  env: Record<string, string>;
  command: string[];
}

function multiAppRun(): App[] {
  const doc = read('dapr.yaml');
  expect(doc.common.resourcesPaths).toEqual(['./components']);
  return doc.apps.map((a: any) => ({
    id: a.appID,
    env: Object.fromEntries(
      Object.entries({ ...doc.common.env, ...a.env, ...(a.appPort ? { APP_PORT: a.appPort } : {}) }).map(([k, v]) => [
        k,
        String(v),
      ]),
    ),
    command: a.command,
  }));
}

function tye(): App[] {
  const doc = read('tye.yaml');
  expect(doc.extensions).toContainEqual(expect.objectContaining({ name: 'dapr', 'components-path': './components' }));
  return doc.services.map((s: any) => ({
    id: s.name,
    env: {
      ...Object.fromEntries(s.env.map((e: { name: string; value: string }) => [e.name, String(e.value)])),
      ...Object.fromEntries(s.bindings.map((b: { port: number; env: string }) => [b.env, String(b.port)])),
    },
    command: [s.executable, ...s.args.split(' ')],
  }));
}

describe('dapr.yaml', () => {
  it('has daprd check the actor host\u2019s health where it names a health path (the CLI checks only with enableAppHealthCheck)', () => {
    for (const app of read('dapr.yaml').apps) {
      if (app.appHealthCheckPath) expect(app.enableAppHealthCheck, app.appID).toBe(true);
    }
  });
});

describe.each([
  ['dapr.yaml', multiAppRun],
  ['tye.yaml', tye],
])('%s', (_file, apps) => {
  it('describes the launcher’s topology: an actor host and an ingress on Dapr, started as npm start does', () => {
    const byId = new Map(apps().map((a) => [a.id, a]));
    // The app ids the cluster launcher gives its sidecars (dapr/cluster/cluster.ts).
    const launcher = readFileSync(`${ROOT}/dapr/cluster/cluster.ts`, 'utf8');
    for (const id of byId.keys()) expect(launcher).toContain(`'${id}'`);
    expect([...byId.keys()].sort()).toEqual(['gatepost-actors', 'gatepost-ingress']);

    const actors = loadConfig(byId.get('gatepost-actors')!.env);
    expect(actors).toMatchObject({ runtime: 'dapr', role: 'actors', appPort: 3001 });
    const ingress = loadConfig(byId.get('gatepost-ingress')!.env);
    expect(ingress).toMatchObject({ runtime: 'dapr', role: 'ingress', port: 3000 });
    for (const app of byId.values()) expect(app.command).toEqual(['node', '--import', 'tsx', 'main.ts']);
    expect(existsSync(`${ROOT}/components`)).toBe(true);
  });

  it('gives every listener of the two apps a port of its own (the actor host serves its metrics on PORT)', () => {
    // The sidecars' ports are the tool's to give (Tye's Dapr extension picks them).
    const ports = apps().flatMap((a) => {
      const c = loadConfig(a.env);
      return c.role === 'ingress' ? [c.port, c.smtpPort, c.inboundPort] : [c.port, c.appPort];
    });
    expect(new Set(ports).size).toBe(ports.length);
  });
});
