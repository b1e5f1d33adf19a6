// The actor runtime port, modeled on Dapr's actor contract. Actor code is written against these
// types only; runtime/embedded implements them on one SQLite file, and the Dapr adapter on a sidecar.
//
// Semantics every adapter keeps:
// - One turn at a time per actor (type, id). No reentrancy: an actor must never call, directly or
//   through others, an actor that is waiting on it.
// - State read and written inside a turn is saved atomically at the end of the turn, together
//   with the reminders set and the messages published in it. A turn that throws saves nothing.
// - Reminders survive restarts and fire at least once, as a turn on their actor.
// - Published messages are delivered at least once to every subscriber of the topic. Where the
//   runtime or its broker delivers them until handled (ActorTurn.deliversUntilHandled), also
//   never lost to a subscriber that died after taking one.
// - A call to `invoke` resolves only after the turn it ran is durable.
// - Turns are made durable in the order they ran.

export interface Invoker {
  invoke<R>(actorType: string, actorId: string, method: string, args?: unknown): Promise<R>;
}

export interface ActorTurn extends Invoker {
  readonly actorType: string;
  readonly actorId: string;
  get<T>(key: string): Promise<T | undefined>;
  /**
   * `get`, in a turn that creates its actor's state under an id made new for this call (nobody
   * else can have chosen it: a message without an idempotency key), where the key can be there
   * only if the runtime ran the same call again after a commit whose answer was lost. A runtime
   * may answer it as absent without reading, and commit the turn only if none of the keys it
   * writes exists by then; if one does, nothing of the turn is saved and the turn runs again,
   * reading. What it did before its commit (a handOver, a call to another actor, a count) is
   * then done twice, so it must be safe to repeat (Dapr: an admission's one state read goes).
   */
  getNew<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): void;
  delete(key: string): void;
  /** Registers (or replaces) the reminder `name`, due at `dueAt` (ms since epoch). */
  setReminder(name: string, dueAt: number, data?: unknown): void;
  deleteReminder(name: string): void;
  /** Publishes `data` on `topic` once the turn is committed. */
  publish(topic: string, data: unknown): void;
  /**
   * Publishes `data` on `topic` for a turn that creates its actor's state (the actor had none
   * before it), to a subscriber that acts only through this actor. It may be delivered before the
   * turn commits, or though it never does: the subscriber's turn on this actor then comes after
   * this one and finds no state. So a runtime may publish it ahead of the commit instead of
   * keeping it for after (Dapr: no outbox key and no ledger entry on the hot path; the broker is
   * the outbox, as in Dapr's own transactional outbox, whose subscriber checks the state store).
   * And once the turn commits, the actor has only what it wrote: a runtime that reads state key
   * by key may take any other key as absent without reading it (Dapr, while the actor stays on
   * the host that ran the turn).
   */
  handOver(topic: string, data: unknown): void;
  /**
   * Publishes `data` on `topic` once the turn commits, from a turn run for a publication that is
   * delivered until handled (where `deliversUntilHandled`), by a subscriber that returns only
   * after the turn; the actor promises to publish the same again, with the same event ids, when a
   * redelivery finds the turn's work done. The redelivery then stands for the runtime's outbox,
   * so a runtime may publish straight after the commit and keep nothing (Dapr: no outbox key, no
   * ledger page, no follow-up turn). Where not `deliversUntilHandled`, it is kept as `publish` is.
   */
  publishAgainOnReplay(topic: string, data: unknown): void;
  /**
   * True where each publication is handed to every subscriber again and again until the
   * subscriber returns: by the runtime itself (the embedded outbox), or by a broker that
   * redelivers what a subscriber has not acknowledged (Dapr with Redis Streams): what a subscriber
   * has not finished with stays owed, whatever dies. False where a broker may hold a message for a
   * consumer that died: an actor that must see a publication handled sets a reminder of its own
   * to publish again.
   */
  readonly deliversUntilHandled: boolean;
}

export type ActorMethod<A = any, R = any> = (turn: ActorTurn, args: A) => Promise<R>;

export interface ActorDefinition<M extends Record<string, ActorMethod> = Record<string, ActorMethod>> {
  /** Registered by this string, never by a class or function name (minifiers rename those). */
  readonly type: string;
  readonly methods: M;
  readonly onReminder?: (turn: ActorTurn, name: string, data: unknown) => Promise<void>;
}

export interface Delivery {
  /** The id of this publication; stable across redeliveries so consumers can deduplicate. */
  id: string;
  topic: string;
  data: unknown;
}

/**
 * What a subscriber answers: nothing once it has handled the delivery, or `Held` when it has taken
 * the delivery on and finishes with it later, in memory (a live message waiting in the fair
 * queue). A held delivery is acknowledged, and the runtime delivers it again, at least once,
 * should `until` reject, or this process die before `until` resolves (about `leaseMs` after; a
 * runtime may also deliver it again then while it is still held, which the subscriber takes as a
 * repeat). So a message waiting in memory needs no reminder of its own.
 */
export interface Held {
  until: Promise<void>;
  leaseMs: number;
}

export type Subscriber = (delivery: Delivery) => Promise<void | Held>;

/**
 * Publishes outside any turn: what happens apart from every actor (a group of clicks on many
 * messages) reaches the subscribers like a turn's publication, delivered at least once.
 */
export interface Publisher {
  /** Resolves once the publication is durable (it will be delivered, whatever dies after). */
  publish(topic: string, data: unknown): Promise<void>;
}

export interface ActorRuntime extends Invoker, Publisher {
  register(definition: ActorDefinition): void;
  /** A subscriber that throws is called again later with the same delivery. */
  subscribe(topic: string, subscriber: Subscriber): void;
  start(): Promise<void>;
  /** Stops firing reminders and dispatching, waits for running work, makes everything durable. */
  stop(): Promise<void>;
}

/** A typed client for one actor: `actor(runtime, recipientActor, id).check(args)`. */
export type ActorClient<M extends Record<string, ActorMethod>> = {
  [K in keyof M]: (args: Parameters<M[K]>[1]) => ReturnType<M[K]>;
};

export function actor<M extends Record<string, ActorMethod>>(
  invoker: Invoker,
  definition: ActorDefinition<M>,
  actorId: string,
): ActorClient<M> {
  return new Proxy({ invoker, actorId }, clientHandler(definition.type)) as unknown as ActorClient<M>;
}

interface ClientTarget {
  invoker: Invoker;
  actorId: string;
}

// One proxy handler per actor type, made once, not one per call: there are several actor calls a
// send, and each function made with a name is renamed on creation by the TypeScript loader
// (esbuild's keepNames), which cost the event loop more than the call itself.
const clientHandlers = new Map<string, ProxyHandler<ClientTarget>>();

function clientHandler(type: string): ProxyHandler<ClientTarget> {
  let handler = clientHandlers.get(type);
  if (!handler) {
    handler = { get: (target, method) => (args: unknown) => target.invoker.invoke(type, target.actorId, String(method), args) };
    clientHandlers.set(type, handler);
  }
  return handler;
}

export function defineActor<M extends Record<string, ActorMethod>>(definition: ActorDefinition<M>): ActorDefinition<M> {
  return definition;
}
