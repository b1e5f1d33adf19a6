// The OpenAPI 3.1 document, built from the same route definitions and zod schemas that serve
// and validate the requests.
import { z } from 'zod';
import { ErrorBody, type Access, type AnyRoute } from './route.ts';
import type { CompatOperation } from '../compat/compat.ingress.ts';

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

/** `/v1/messages/:id` → `/v1/messages/{id}` */
export const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

const operationId = (method: string, url: string) =>
  `${method.toLowerCase()}${openApiPath(url)
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9]+(.)/g, (_m, c: string) => c.toUpperCase())}`;

/** A compatibility operation: the imitated provider's wire format and its own authentication. */
function compatOperation(op: CompatOperation): Record<string, unknown> {
  return {
    summary: op.summary,
    tags: [op.tag],
    operationId: operationId(op.method, op.url),
    description: `Authentication: ${op.auth}.`,
    security: [],
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              Object.entries(op.body).map(([type, schema]) => [type, { schema: jsonSchema(schema, 'input') }]),
            ),
          },
        }
      : {}),
    responses: Object.fromEntries(
      Object.entries(op.responses).map(([status, res]) => [
        status,
        {
          description: res.description,
          ...(res.schema
            ? { content: { [res.contentType ?? 'application/json']: { schema: jsonSchema(res.schema, 'output') } } }
            : {}),
        },
      ]),
    ),
  };
}

/** The answers of a route's authentication hooks, for every route that has them (a route's own description wins). */
function authResponses(access: Access): Record<number, { description: string; schema: z.ZodType }> {
  if (access === 'none') return {};
  const answers: Record<number, { description: string; schema: z.ZodType }> = {
    401: {
      description: access === 'admin' ? 'No admin token, or a wrong one.' : 'No key, or an unknown or revoked one.',
      schema: ErrorBody as z.ZodType,
    },
    429: {
      description: 'Too many failed authentications from this client address; see Retry-After.',
      schema: ErrorBody as z.ZodType,
    },
  };
  if (access !== 'admin') {
    answers[403] = {
      description: `The key does not hold the \`${access}\` permission (insufficient_scope), or is a public key (key_not_allowed); see docs/security.md.`,
      schema: ErrorBody as z.ZodType,
    };
  }
  return answers;
}

export function buildOpenApi(routes: AnyRoute[], version: string, compat: CompatOperation[] = []): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of compat) (paths[openApiPath(op.url)] ??= {})[op.method.toLowerCase()] = compatOperation(op);
  for (const r of routes) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ['path', r.params],
      ['query', r.query],
    ] as const) {
      if (!schema) continue;
      const s = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, prop] of Object.entries(s.properties ?? {})) {
        parameters.push({ name, in: where, required: where === 'path' || (s.required ?? []).includes(name), schema: prop });
      }
    }
    const body = r.bodyDoc ?? r.body;
    const operation: Record<string, unknown> = {
      summary: r.summary,
      tags: [r.tag],
      operationId: operationId(r.method, r.url),
      ...(r.access === 'none'
        ? { security: [] }
        : r.access === 'admin'
          ? { security: [{ adminToken: [] }] }
          : { 'x-permission': r.access }),
      ...(parameters.length ? { parameters } : {}),
      ...(body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(body, 'input') } } } }
        : {}),
      responses: Object.fromEntries(
        Object.entries({ ...authResponses(r.access), ...r.responses }).map(([status, res]) => [
          status,
          {
            description: res.description,
            ...(res.schema ? { content: { 'application/json': { schema: jsonSchema(res.schema, 'output') } } } : {}),
          },
        ]),
      ),
    };
    (paths[openApiPath(r.url)] ??= {})[r.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatepost',
      version,
      description:
        'Self-hostable transactional email: the native API (errors are `{"error": {"code", "message", "details"}}`) and the compatibility endpoints, which answer in the imitated provider\'s own shapes.',
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'A gp_live_ or gp_sandbox_ key.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'GATEPOST_ADMIN_TOKEN.' },
      },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}
