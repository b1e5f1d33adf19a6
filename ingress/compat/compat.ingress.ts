// What a compatibility ingress (Style P, S, M, the browser SDK) hands the HTTP server: its routes
// as an encapsulated Fastify plugin, with its own authentication, body parsers and error format
// (the imitated provider's, so that its official client works unchanged); each route's schema
// documents it in the OpenAPI document.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { GatepostError } from '../../errors/errors.catalog.ts';
import type { Gate } from '../../gate/gate.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { KeyRing } from '../../tenancy/keys.ts';

export interface CompatDeps {
  gate: Gate;
  catalog: Catalog;
  keys: KeyRing;
  log: (message: string, error?: unknown) => void;
}

/**
 * How a compatibility route appears in the OpenAPI document beside its summary, tags and
 * (documentation-only) schemas: it authenticates in its provider's way, not with the native key.
 */
export const compatDoc = (auth: string) => ({ description: `Authentication: ${auth}.`, security: [] });

export interface CompatIngress {
  plugin: FastifyPluginAsync;
  /**
   * For a style whose URLs take path parameters: those URLs, and how it answers the router's
   * refusal of one (over its length, or not validly percent-encoded), which comes before any
   * scope's error handler.
   */
  refuseUrl?: { urls: string[]; answer: (reply: FastifyReply, error: GatepostError) => FastifyReply };
}
