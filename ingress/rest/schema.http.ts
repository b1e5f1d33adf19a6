// Routes carry their zod schemas: Fastify validates requests with them (fastify-type-provider-zod)
// and @fastify/swagger documents them (openapi.swagger.ts). What each route's schema may say about
// its answers is written with the helpers here.
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifySchemaCompiler,
  FastifySerializerCompiler,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { validatorCompiler as zodValidator, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from './errors.http.ts';

/** A Fastify scope whose routes' handlers are typed by their zod schemas. */
export type ZodApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export const withZod = (app: FastifyInstance): ZodApp => app.withTypeProvider<ZodTypeProvider>();

const notValidated = new WeakSet<z.ZodType>();

/**
 * A schema that documents a request part without validating it: for a compatibility style that
 * parses leniently in its handler (unknown fields, forms, its own error wording), where a strict
 * schema would change an answer.
 */
export function documentationOnly<S extends z.ZodType>(schema: S): S {
  notValidated.add(schema);
  return schema;
}

export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) =>
  notValidated.has(route.schema) ? () => true : zodValidator(route);

/**
 * Answers are serialized as they were before routes carried schemas: JSON.stringify, unchecked.
 * The response schemas document the answers, and the type provider checks handlers against them
 * at build time; a zod encode on every answer would cost the hot send path and could only turn a
 * mismatch into a 500.
 */
export const serializerCompiler: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);

/** A documented answer: its description and, when it has a body, the body's schema. */
export function answer(description: string, schema?: z.ZodType, contentType = 'application/json') {
  return schema ? { description, content: { [contentType]: { schema } } } : z.null().describe(description);
}

/** A native refusal: the error body, described for this route. */
export const refusal = (description: string) => answer(description, ErrorBody);
