// What a compatibility ingress (Style P, S, M, the browser SDK) hands the HTTP server: its routes
// as an encapsulated Fastify plugin, with its own authentication, body parsers and error format
// (the imitated provider's, so that its official client works unchanged), and how those routes
// appear in the OpenAPI document.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { GatepostError } from '../../errors/errors.catalog.ts';
import type { z } from 'zod';
import type { Gate } from '../../gate/gate.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { KeyRing } from '../../tenancy/keys.ts';

export interface CompatDeps {
  gate: Gate;
  catalog: Catalog;
  keys: KeyRing;
  log: (message: string, error?: unknown) => void;
}

/** One operation of a compatibility style, as the OpenAPI document shows it. */
export interface CompatOperation {
  method: 'GET' | 'POST' | 'OPTIONS';
  url: string;
  summary: string;
  tag: string;
  /** How the style authenticates, in words (it is not the native bearer key). */
  auth: string;
  /** Request body: content type → schema. */
  body?: Record<string, z.ZodType>;
  /** Status → description and, when the answer has a JSON body, its schema. */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
}

export interface CompatIngress {
  plugin: FastifyPluginAsync;
  operations: CompatOperation[];
  /**
   * For a style whose URLs take path parameters: answers the router's refusal of one (over its
   * length, or not validly percent-encoded), which comes before any scope's error handler.
   */
  refuseUrl?: (reply: FastifyReply, error: GatepostError) => FastifyReply;
}
