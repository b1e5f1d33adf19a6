// Validates rendered manifests against the Kubernetes schemas with kubeconform, offline: the
// tool is built once from its Go module, and its schemas are made from what the Go module proxy
// serves too (kubeconform's default schema source is a web download this machine cannot reach):
// the Kubernetes API's OpenAPI document in the k8s.io/kubernetes module, and the Dapr CRDs in
// the github.com/dapr/dapr module the Dapr build pins. Each schema is written in kubeconform's
// strict form (no field the API does not define), holding only the definitions it refers to.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const KUBECONFORM = 'github.com/yannh/kubeconform@v0.8.0';
/** The Kubernetes release whose API the chart is checked against (helm.sh's `helm template` assumes 1.34). */
const KUBERNETES = 'k8s.io/kubernetes@v1.34.4';
/** The Dapr release of dapr/build/go.mod, whose CRDs define Component, Configuration and Resiliency. */
const DAPR = 'github.com/dapr/dapr@v1.18.2';

type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const cacheRoot = () => join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gatepost', 'kubeconform');

/** The directory of a Go module version, downloaded through the module proxy if not yet there. */
function moduleDir(module: string): string {
  const out = execFileSync('go', ['mod', 'download', '-json', module], { cwd: cacheRoot(), encoding: 'utf8' });
  return (JSON.parse(out) as { Dir: string }).Dir;
}

/** The kubeconform binary, built once into the cache. */
export function kubeconformBin(): string {
  const dir = join(cacheRoot(), KUBECONFORM.split('@')[1]!);
  const bin = join(dir, 'kubeconform');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  // Built aside, then renamed: a concurrent caller never runs a partial binary.
  const tmp = mkdtempSync(join(dir, '.build-'));
  try {
    execFileSync('go', ['install', `${KUBECONFORM.replace('@', '/cmd/kubeconform@')}`], {
      cwd: tmp,
      env: { ...process.env, GOBIN: tmp },
      stdio: 'inherit',
    });
    renameSync(join(tmp, 'kubeconform'), bin);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}

/** kubeconform's file name for a kind: `{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json`. */
const fileName = (apiVersion: string, kind: string) => {
  const parts = apiVersion.split('/');
  return `${kind.toLowerCase()}-${parts[0]}-${parts.at(-1)}.json`;
};
export const SCHEMA_TEMPLATE = '{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json';

/** Strict, as kubeconform's own strict schemas are: an object with named fields takes no others. */
function strict(schema: Schema): Schema {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Schema = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'enum' || k === 'default' ? v : strict(v)]));
  if (out.properties && out.additionalProperties === undefined && !out['x-kubernetes-preserve-unknown-fields']) {
    out.additionalProperties = false;
  }
  return out;
}

/** The Kubernetes API's kinds, each as a schema holding the definitions it refers to. */
function kubernetesSchemas(): Map<string, Schema> {
  const swagger = JSON.parse(readFileSync(join(moduleDir(KUBERNETES), 'api/openapi-spec/swagger.json'), 'utf8'));
  const definitions: Record<string, Schema> = swagger.definitions;
  // A port or a percentage: a number or a name (the OpenAPI document says only "string").
  definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'] = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  const refsOf = (schema: unknown, into: Set<string>): Set<string> => {
    if (schema && typeof schema === 'object') {
      for (const [k, v] of Object.entries(schema)) {
        if (k === '$ref' && typeof v === 'string') {
          const name = v.replace('#/definitions/', '');
          if (!into.has(name)) {
            into.add(name);
            refsOf(definitions[name], into);
          }
        } else refsOf(v, into);
      }
    }
    return into;
  };
  const schemas = new Map<string, Schema>();
  for (const [name, definition] of Object.entries(definitions)) {
    for (const gvk of (definition['x-kubernetes-group-version-kind'] ?? []) as { group: string; version: string; kind: string }[]) {
      const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
      const used = [...refsOf(definition, new Set([name]))];
      schemas.set(fileName(apiVersion, gvk.kind), strict({ ...definition, definitions: Object.fromEntries(used.map((u) => [u, definitions[u]])) }));
    }
  }
  return schemas;
}

/** The Dapr CRDs' kinds, from their openAPIV3Schema. */
function daprSchemas(): Map<string, Schema> {
  const dir = join(moduleDir(DAPR), 'charts/dapr/crds');
  const schemas = new Map<string, Schema>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const crd = doc.toJS() as Schema | null;
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      for (const version of crd.spec.versions as { name: string; schema?: { openAPIV3Schema: Schema } }[]) {
        if (!version.schema) continue;
        schemas.set(fileName(`${crd.spec.group}/${version.name}`, crd.spec.names.kind), strict(version.schema.openAPIV3Schema));
      }
    }
  }
  return schemas;
}

/** The directory of every schema, made once into the cache. */
export function schemaDir(): string {
  const dir = join(cacheRoot(), 'schemas', `${KUBERNETES.split('@')[1]}-dapr-${DAPR.split('@')[1]}`);
  if (existsSync(join(dir, '.complete'))) return dir;
  mkdirSync(dir, { recursive: true });
  for (const [file, schema] of [...kubernetesSchemas(), ...daprSchemas()]) writeFileSync(join(dir, file), JSON.stringify(schema));
  writeFileSync(join(dir, '.complete'), '');
  return dir;
}

export interface Verdict {
  /** kubeconform's exit code: 0 when every resource is valid. */
  code: number;
  /** Each resource with its status (`statusValid`, `statusInvalid`, `statusError`) and message. */
  resources: { kind: string; name: string; status: string; msg: string }[];
}

/** Validates a stream of YAML documents strictly against the schemas: every kind must have one. */
export function validate(manifests: string): Verdict {
  mkdirSync(cacheRoot(), { recursive: true });
  const args = ['-strict', '-output', 'json', '-verbose', '-schema-location', join(schemaDir(), SCHEMA_TEMPLATE), '-'];
  let stdout: string;
  let code = 0;
  try {
    stdout = execFileSync(kubeconformBin(), args, { input: manifests, encoding: 'utf8', maxBuffer: 16 << 20 });
  } catch (error) {
    const e = error as { status: number; stdout: string };
    code = e.status;
    stdout = e.stdout;
  }
  return { code, resources: (JSON.parse(stdout) as { resources: Verdict['resources'] }).resources };
}
