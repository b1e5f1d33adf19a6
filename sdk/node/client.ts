// The Gatepost API client: `new Gatepost({ apiKey, baseUrl })`, one method per operation of
// operations.ts, grouped by resource. Every call goes through transport.ts (timeout, retries,
// idempotency keys) and throws a GatepostError carrying the API's error code.
import type { GatepostError } from './errors.ts';
import { verifyReceipt, type ReceiptClaims } from './receipts.ts';
import { Transport, type CallOptions, type ClientOptions } from './transport.ts';
import type {
  Audience,
  Broadcast,
  BroadcastFields,
  BroadcastSummary,
  Automation,
  AutomationCreate,
  AutomationRun,
  AutomationRunListed,
  CustomEvent,
  BatchResult,
  Contact,
  ContactFields,
  ImportReport,
  CapturedMessage,
  Domain,
  Event,
  EventFeedPage,
  InboundAttachment,
  InboundMessage,
  InboundRoute,
  InboundRouteFields,
  QueueEntry,
  Report,
  Reputation,
  JsonWebKeySet,
  Message,
  MessageReceipt,
  MessageStatus,
  Page,
  PageOptions,
  SendRequest,
  SendResponse,
  SendResult,
  Suppression,
  SuppressionCreate,
  Validation,
  Template,
  TemplateFields,
  Webhook,
  WebhookCreated,
  WebhookDelivery,
  WebhookEventType,
  WebhookUpdate,
} from './types.ts';

/** The filename of `Content-Disposition: attachment; filename="…"`, or null. */
const filenameOf = (disposition: string | null): string | null => /filename="([^"]*)"/.exec(disposition ?? '')?.[1] ?? null;

/** A message in one of these has had its last delivery outcome. */
export const FINAL_STATUSES: ReadonlySet<MessageStatus> = new Set(['sent', 'bounced']);

export interface FollowOptions {
  /** How often the timeline is read, ms (default 1,000). */
  intervalMs?: number;
  signal?: AbortSignal;
}

/** Waits `ms`, or less if the signal aborts; leaves no listener behind (a long follow waits many times). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

export class Gatepost {
  private readonly http: Transport;

  constructor(opts: ClientOptions = {}) {
    this.http = new Transport(opts);
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** Sends one email. The idempotency key is `req.idempotency_key`, `opts.idempotencyKey`, or one made for this call. */
  async send(req: SendRequest, opts: CallOptions = {}): Promise<SendResult> {
    const { idempotency_key, ...body } = req;
    const res = await this.http.call<SendResponse>('send', {
      ...opts,
      idempotencyKey: idempotency_key ?? opts.idempotencyKey,
      body,
    });
    return { ...res.body, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  /** Sends up to 500 emails, each admitted on its own; item i's idempotency key is `<key>:<i>`. */
  async batch(items: SendRequest[], opts: CallOptions = {}): Promise<BatchResult> {
    return (await this.http.call<BatchResult>('batch', { ...opts, body: items })).body;
  }

  /** Checks an address before a send: syntax, DNS, disposable, role, suppression (docs/validate.md). An invalid address is a verdict, not an error. */
  async validate(address: string, opts?: CallOptions): Promise<Validation> {
    return (await this.http.call<Validation>('validate', { ...opts, body: { address } })).body;
  }

  /** Checks up to 1,000 addresses; one verdict each, in order. */
  async validateBatch(addresses: string[], opts?: CallOptions): Promise<Validation[]> {
    return (await this.http.call<{ results: Validation[] }>('validateBatch', { ...opts, body: { addresses } })).body.results;
  }

  readonly messages = {
    /** A message and its timeline. */
    get: async (id: string, opts?: CallOptions): Promise<Message> =>
      (await this.http.call<Message>('getMessage', { ...opts, params: { id } })).body,

    /** A message's events so far, oldest first. */
    timeline: async (id: string, opts?: CallOptions): Promise<Event[]> => (await this.messages.get(id, opts)).events,

    /**
     * Each event of the message's timeline as it comes, the ones so far first, until the message
     * is sent or bounced (FINAL_STATUSES) or the signal aborts.
     */
    follow: (id: string, opts: FollowOptions = {}): AsyncGenerator<Event> => this.follow(id, opts),

    /** Its signed delivery receipts; 404 `receipt_not_found` until a server has accepted it. */
    receipt: async (id: string, opts?: CallOptions): Promise<MessageReceipt> =>
      (await this.http.call<MessageReceipt>('getReceipt', { ...opts, params: { id } })).body,

    /** Fetches the message's latest receipt and the operator's public keys, and verifies it (verifyReceipt). */
    verifyReceipt: async (id: string, opts?: CallOptions): Promise<ReceiptClaims> => {
      const [receipt, jwks] = await Promise.all([this.messages.receipt(id, opts), this.jwks(opts)]);
      return verifyReceipt(receipt.jws, jwks);
    },
  };

  /** The public keys that verify delivery receipts (`/.well-known/jwks.json`, no key needed). */
  async jwks(opts?: CallOptions): Promise<JsonWebKeySet> {
    return (await this.http.call<JsonWebKeySet>('jwks', opts)).body;
  }

  readonly templates = {
    create: async (t: TemplateFields, opts?: CallOptions): Promise<Template> =>
      (await this.http.call<Template>('createTemplate', { ...opts, body: t })).body,
    list: async (opts?: CallOptions): Promise<Template[]> =>
      (await this.http.call<{ data: Template[] }>('listTemplates', opts)).body.data,
    get: async (slug: string, opts?: CallOptions): Promise<Template> =>
      (await this.http.call<Template>('getTemplate', { ...opts, params: { slug } })).body,
    update: async (slug: string, changes: Partial<TemplateFields>, opts?: CallOptions): Promise<Template> =>
      (await this.http.call<Template>('updateTemplate', { ...opts, params: { slug }, body: changes })).body,
    delete: async (slug: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('deleteTemplate', { ...opts, params: { slug } });
    },
  };

  readonly suppressions = {
    list: async (page: PageOptions = {}, opts?: CallOptions): Promise<Page<Suppression>> =>
      (await this.http.call<Page<Suppression>>('listSuppressions', { ...opts, query: { ...page } })).body,
    add: async (s: SuppressionCreate, opts?: CallOptions): Promise<Suppression> =>
      (await this.http.call<Suppression>('addSuppression', { ...opts, body: s })).body,
    /** The suppression in force; 404 `not_found` when the address is not suppressed. */
    get: async (address: string, opts?: CallOptions): Promise<Suppression> =>
      (await this.http.call<Suppression>('getSuppression', { ...opts, params: { address } })).body,
    remove: async (address: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('removeSuppression', { ...opts, params: { address } });
    },
  };

  readonly webhooks = {
    /** A new endpoint; its `secret` is answered this once. */
    create: async (w: { url: string; events: WebhookEventType[] }, opts?: CallOptions): Promise<WebhookCreated> =>
      (await this.http.call<WebhookCreated>('createWebhook', { ...opts, body: w })).body,
    list: async (opts?: CallOptions): Promise<Webhook[]> =>
      (await this.http.call<{ data: Webhook[] }>('listWebhooks', opts)).body.data,
    get: async (id: string, opts?: CallOptions): Promise<Webhook> =>
      (await this.http.call<Webhook>('getWebhook', { ...opts, params: { id } })).body,
    update: async (id: string, changes: WebhookUpdate, opts?: CallOptions): Promise<Webhook> =>
      (await this.http.call<Webhook>('updateWebhook', { ...opts, params: { id }, body: changes })).body,
    delete: async (id: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('deleteWebhook', { ...opts, params: { id } });
    },
    /** A new secret (answered this once); the previous one keeps signing for 24 hours. */
    rotate: async (id: string, opts?: CallOptions) =>
      (
        await this.http.call<{ id: string; secret: string; previous_secret_expires_at: string }>('rotateWebhookSecret', {
          ...opts,
          params: { id },
        })
      ).body,
    test: async (id: string, opts?: CallOptions): Promise<Event> =>
      (await this.http.call<{ event: Event }>('testWebhook', { ...opts, params: { id } })).body.event,
    deliveries: async (id: string, limit?: number, opts?: CallOptions): Promise<WebhookDelivery[]> =>
      (await this.http.call<{ data: WebhookDelivery[] }>('listWebhookDeliveries', { ...opts, params: { id }, query: { limit } }))
        .body.data,
    /** One more attempt of a failed event, now. */
    retry: async (id: string, eventId: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('retryWebhookDelivery', { ...opts, params: { id, evt: eventId } });
    },
  };

  readonly domains = {
    /** A new sending domain, pending, with the DNS records to publish (and a tracking host's CNAME, if one is named). */
    create: async (name: string, opts?: CallOptions & { tracking_host?: string }): Promise<Domain> => {
      const { tracking_host, ...call } = opts ?? {};
      return (
        await this.http.call<Domain>('createDomain', { ...call, body: { name, ...(tracking_host ? { tracking_host } : {}) } })
      ).body;
    },
    /** Names the domain's tracking host, or none (null); its CNAME is pending until the next verification. */
    setTrackingHost: async (id: string, trackingHost: string | null, opts?: CallOptions): Promise<Domain> =>
      (await this.http.call<Domain>('updateDomain', { ...opts, params: { id }, body: { tracking_host: trackingHost } })).body,
    list: async (opts?: CallOptions): Promise<Domain[]> =>
      (await this.http.call<{ data: Domain[] }>('listDomains', opts)).body.data,
    get: async (id: string, opts?: CallOptions): Promise<Domain> =>
      (await this.http.call<Domain>('getDomain', { ...opts, params: { id } })).body,
    /** Looks the records up; the domain, with what each record showed. */
    verify: async (id: string, opts?: CallOptions): Promise<Domain> =>
      (await this.http.call<Domain>('verifyDomain', { ...opts, params: { id } })).body,
    delete: async (id: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('deleteDomain', { ...opts, params: { id } });
    },
  };

  readonly audiences = {
    create: async (name: string, opts?: CallOptions): Promise<Audience> =>
      (await this.http.call<Audience>('createAudience', { ...opts, body: { name } })).body,
    list: async (opts?: CallOptions): Promise<Audience[]> =>
      (await this.http.call<{ data: Audience[] }>('listAudiences', opts)).body.data,
    get: async (id: string, opts?: CallOptions): Promise<Audience> =>
      (await this.http.call<Audience>('getAudience', { ...opts, params: { id } })).body,
    /** Deletes the audience and its contacts. */
    delete: async (id: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('deleteAudience', { ...opts, params: { id } });
    },
    /** Refused with 409 `contact_exists` when the audience has the email already. */
    addContact: async (id: string, c: ContactFields, opts?: CallOptions): Promise<Contact> =>
      (await this.http.call<Contact>('addContact', { ...opts, params: { id }, body: c })).body,
    listContacts: async (id: string, page: PageOptions = {}, opts?: CallOptions): Promise<Page<Contact>> =>
      (await this.http.call<Page<Contact>>('listContacts', { ...opts, params: { id }, query: { ...page } })).body,
    /** By the contact's id (`con_…`) or its email. */
    getContact: async (id: string, contact: string, opts?: CallOptions): Promise<Contact> =>
      (await this.http.call<Contact>('getContact', { ...opts, params: { id, contact } })).body,
    updateContact: async (id: string, contact: string, changes: Partial<ContactFields>, opts?: CallOptions): Promise<Contact> =>
      (await this.http.call<Contact>('updateContact', { ...opts, params: { id, contact }, body: changes })).body,
    removeContact: async (id: string, contact: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('removeContact', { ...opts, params: { id, contact } });
    },
    /**
     * Imports a CSV file (a header row naming `email`, then `name`, `unsubscribed` and any data
     * columns). Pass a Blob from `fs.openAsBlob(path)` to stream a large file from disk.
     */
    importContacts: async (id: string, csv: string | Blob, opts?: CallOptions): Promise<ImportReport> =>
      (await this.http.call<ImportReport>('importContacts', { ...opts, params: { id }, csv })).body,
  };

  /** Broadcasts: one message to each contact of an audience, through the gate (docs/broadcasts.md). */
  readonly broadcasts = {
    /** A draft; 404 `not_found` for an audience of no such id, 422 `template_not_found` for an unknown template. */
    create: async (fields: BroadcastFields, opts?: CallOptions): Promise<Broadcast> =>
      (await this.http.call<Broadcast>('createBroadcast', { ...opts, body: fields })).body,
    /** Newest first. */
    list: async (page: PageOptions = {}, opts?: CallOptions): Promise<Page<BroadcastSummary>> =>
      (await this.http.call<Page<BroadcastSummary>>('listBroadcasts', { ...opts, query: { ...page } })).body,
    /** With its progress and results. */
    get: async (id: string, opts?: CallOptions): Promise<Broadcast> =>
      (await this.http.call<Broadcast>('getBroadcast', { ...opts, params: { id } })).body,
    /** Deletes a draft; 409 `broadcast_not_draft` once it has been sent. */
    delete: async (id: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('deleteBroadcast', { ...opts, params: { id } });
    },
    /** Sends a draft now, or at `sendAt` (at most 30 days ahead); 409 `broadcast_already_sent` if it is no draft. */
    send: async (id: string, sendAt?: Date | string, opts?: CallOptions): Promise<Broadcast> => {
      const body = sendAt === undefined ? {} : { send_at: typeof sendAt === 'string' ? sendAt : sendAt.toISOString() };
      return (await this.http.call<Broadcast>('sendBroadcast', { ...opts, params: { id }, body })).body;
    },
    /** Stops a scheduled, sending or paused broadcast: nobody not yet admitted is sent to. */
    cancel: async (id: string, opts?: CallOptions): Promise<Broadcast> =>
      (await this.http.call<Broadcast>('cancelBroadcast', { ...opts, params: { id } })).body,
  };

  /** Inbound routes and the mail the inbound MX received (docs/inbound.md). */
  readonly inbound = {
    /** Refused with 422 `inbound_domain_not_verified` unless the domain is a verified domain of the tenant with its inbound MX found. */
    createRoute: async (route: InboundRouteFields, opts?: CallOptions): Promise<InboundRoute> =>
      (await this.http.call<InboundRoute>('createInboundRoute', { ...opts, body: route })).body,
    listRoutes: async (opts?: CallOptions): Promise<InboundRoute[]> =>
      (await this.http.call<{ data: InboundRoute[] }>('listInboundRoutes', opts)).body.data,
    getRoute: async (id: string, opts?: CallOptions): Promise<InboundRoute> =>
      (await this.http.call<InboundRoute>('getInboundRoute', { ...opts, params: { id } })).body,
    updateRoute: async (id: string, changes: Partial<InboundRouteFields>, opts?: CallOptions): Promise<InboundRoute> =>
      (await this.http.call<InboundRoute>('updateInboundRoute', { ...opts, params: { id }, body: changes })).body,
    deleteRoute: async (id: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('deleteInboundRoute', { ...opts, params: { id } });
    },
    /** Newest first. */
    listMessages: async (page: PageOptions = {}, opts?: CallOptions): Promise<Page<InboundMessage>> =>
      (await this.http.call<Page<InboundMessage>>('listInboundMessages', { ...opts, query: { ...page } })).body,
    getMessage: async (id: string, opts?: CallOptions): Promise<InboundMessage> =>
      (await this.http.call<InboundMessage>('getInboundMessage', { ...opts, params: { id } })).body,
    /** The message byte for byte as the inbound MX received it (message/rfc822). */
    raw: async (id: string, opts?: CallOptions): Promise<Uint8Array> =>
      (await this.http.call<Uint8Array>('getInboundRaw', { ...opts, params: { id }, bytes: true })).body,
    /** Attachment `n` (from 0, in the order of the message's `attachments`): its bytes, content type and filename. */
    attachment: async (id: string, n: number, opts?: CallOptions): Promise<InboundAttachment> => {
      const res = await this.http.call<Uint8Array>('getInboundAttachment', {
        ...opts,
        params: { id, n: String(n) },
        bytes: true,
      });
      return {
        filename: filenameOf(res.headers.get('content-disposition')),
        content_type: res.headers.get('content-type') ?? 'application/octet-stream',
        content: res.body,
      };
    },
  };

  /** The tenant's reputation breakers, its own and each sending domain's, with the rates of the window. */
  async reputation(opts?: CallOptions): Promise<Reputation> {
    return (await this.http.call<Reputation>('getReputation', opts)).body;
  }

  /** The tenant's mail in the fair queue, per destination. */
  async queue(opts?: CallOptions): Promise<QueueEntry[]> {
    return (await this.http.call<{ data: QueueEntry[] }>('getQueue', opts)).body.data;
  }

  /** Bounces and complaints received at the return-path domains, newest first. */
  async reports(page: PageOptions = {}, opts?: CallOptions): Promise<Page<Report>> {
    return (await this.http.call<Page<Report>>('listReports', { ...opts, query: { ...page } })).body;
  }

  /** The capture inbox: what sandbox keys sent, rendered, newest first. */
  readonly sandbox = {
    list: async (page: PageOptions = {}, opts?: CallOptions): Promise<Page<CapturedMessage>> =>
      (await this.http.call<Page<CapturedMessage>>('listCaptures', { ...opts, query: { ...page } })).body,
    get: async (messageId: string, opts?: CallOptions): Promise<CapturedMessage> =>
      (await this.http.call<CapturedMessage>('getCapture', { ...opts, params: { id: messageId } })).body,
  };

  readonly events = {
    /**
     * The tenant's lifecycle events after `after` (a cursor from an earlier page; none: only what
     * comes next). With `waitSeconds`, Gatepost holds the request until an event comes or the wait ends.
     */
    list: async (q: { after?: string; waitSeconds?: number; limit?: number } = {}, opts?: CallOptions): Promise<EventFeedPage> =>
      (
        await this.http.call<EventFeedPage>('listEvents', {
          ...opts,
          // The wait is the server's: the attempt's deadline must outlast it.
          timeoutMs: Math.max(opts?.timeoutMs ?? this.http.timeoutMs, ((q.waitSeconds ?? 0) + 10) * 1000),
          query: { after: q.after, wait: q.waitSeconds, limit: q.limit },
        })
      ).body,
    /** Posts a custom event; answers its id and the automation runs it started (none for a repeat). */
    post: async (event: CustomEvent, opts?: CallOptions): Promise<{ id: string; runs: string[] }> =>
      (await this.http.call<{ id: string; runs: string[] }>('postEvent', { ...opts, body: event })).body,
  };

  /** Sequences of waits, sends and conditions run per contact of an audience (docs/automations.md). */
  readonly automations = {
    create: async (a: AutomationCreate, opts?: CallOptions): Promise<Automation> =>
      (await this.http.call<Automation>('createAutomation', { ...opts, body: a })).body,
    list: async (opts?: CallOptions): Promise<Automation[]> =>
      (await this.http.call<{ data: Automation[] }>('listAutomations', opts)).body.data,
    get: async (id: string, opts?: CallOptions): Promise<Automation> =>
      (await this.http.call<Automation>('getAutomation', { ...opts, params: { id } })).body,
    /** Renames it, or disables (`enabled: false`: its runs stop at their next step) or enables it. */
    update: async (id: string, changes: { name?: string; enabled?: boolean }, opts?: CallOptions): Promise<Automation> =>
      (await this.http.call<Automation>('updateAutomation', { ...opts, params: { id }, body: changes })).body,
    delete: async (id: string, opts?: CallOptions): Promise<void> => {
      await this.http.call('deleteAutomation', { ...opts, params: { id } });
    },
    /** Its runs, newest first. */
    runs: async (id: string, page: PageOptions = {}, opts?: CallOptions): Promise<Page<AutomationRunListed>> =>
      (await this.http.call<Page<AutomationRunListed>>('listAutomationRuns', { ...opts, params: { id }, query: { ...page } }))
        .body,
    run: async (id: string, run: string, opts?: CallOptions): Promise<AutomationRun> =>
      (await this.http.call<AutomationRun>('getAutomationRun', { ...opts, params: { id, run } })).body,
  };

  private async *follow(id: string, opts: FollowOptions): AsyncGenerator<Event> {
    const seen = new Set<string>();
    for (;;) {
      let message: Message;
      try {
        message = await this.messages.get(id, { signal: opts.signal });
      } catch (error) {
        if ((error as GatepostError).code === 'aborted') return;
        throw error;
      }
      for (const event of message.events) {
        if (seen.has(event.id)) continue;
        seen.add(event.id);
        yield event;
      }
      if (FINAL_STATUSES.has(message.status)) return;
      await sleep(opts.intervalMs ?? 1_000, opts.signal);
      if (opts.signal?.aborted) return;
    }
  }
}
