<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * The PHP client of Gatepost's native API, on ext-curl. Answers are the API's JSON as
 * associative arrays; a refusal is a GatepostException carrying the coded error.
 *
 * Retries: a 429 is retried (it was not acted on), after its Retry-After when that is within
 * $maxRetryWait; a 5xx or no answer is retried only when repeating is safe (GET, PATCH, DELETE,
 * or a request with an idempotency key: sends always carry one). At most $maxAttempts tries,
 * waits growing from $backoffMs, doubled each time, with full jitter.
 */
final class Client
{
    public const VERSION = '0.1.0';

    /** A message in one of these has had its last delivery outcome. */
    public const FINAL_STATUSES = ['sent', 'bounced'];

    private readonly string $baseUrl;

    public function __construct(
        private readonly string $apiKey,
        string $baseUrl = 'http://localhost:3000',
        /** Bounds each attempt, in seconds. */
        private readonly float $timeout = 30.0,
        private readonly int $maxAttempts = 3,
        private readonly int $backoffMs = 500,
        /** Bounds one wait between attempts, Retry-After included, in seconds. */
        private readonly int $maxRetryWait = 30,
    ) {
        $this->baseUrl = rtrim($baseUrl, '/');
    }

    // --- sending ---------------------------------------------------------------------------

    /**
     * Sends one email: from, to, subject and html, or a template with data. Without an
     * idempotency key (argument or `idempotency_key` field) one is made, so that a retry after a
     * lost answer cannot send twice.
     *
     * @param array<string, mixed> $email
     * @return array<string, mixed> {id, status, to, created_at, send_at, sandbox}
     */
    public function send(array $email, ?string $idempotencyKey = null): array
    {
        $key = $idempotencyKey ?? $email['idempotency_key'] ?? self::newIdempotencyKey();
        return $this->call('emails.send', [], self::objects($email), [], $key);
    }

    /**
     * Sends up to 500 emails; each is admitted or refused on its own. A batch key (given, or
     * made here) gives each item a key derived from it.
     *
     * @param list<array<string, mixed>> $emails
     * @return array<string, mixed> {results: [{index, id, …} | {index, error}], accepted, refused}
     */
    public function sendBatch(array $emails, ?string $idempotencyKey = null): array
    {
        return $this->call('emails.batch', [], array_map(self::objects(...), $emails), [], $idempotencyKey ?? self::newIdempotencyKey());
    }

    /** `data` and `headers` are JSON objects: an empty PHP array would be encoded as a list. */
    private static function objects(array $email): array
    {
        foreach (['data', 'headers'] as $field) {
            if (($email[$field] ?? null) === []) {
                $email[$field] = new \stdClass();
            }
        }
        return $email;
    }

    // --- messages, receipts, the sandbox inbox ---------------------------------------------

    /** A message and its timeline (`events`, oldest first). */
    public function getMessage(string $id): array
    {
        return $this->call('messages.get', [$id]);
    }

    /**
     * Polls the message's timeline until an event of this type is on it, and answers the message
     * then; a GatepostException `event_timeout` after $timeoutSeconds.
     */
    public function waitForEvent(string $id, string $type, float $timeoutSeconds = 30.0, int $everyMs = 100): array
    {
        $until = microtime(true) + $timeoutSeconds;
        for (;;) {
            $message = $this->getMessage($id);
            foreach ($message['events'] as $event) {
                if ($event['type'] === $type) {
                    return $message;
                }
            }
            if (microtime(true) > $until) {
                throw new GatepostException('event_timeout', "No $type on message $id within {$timeoutSeconds} s.", 0);
            }
            usleep($everyMs * 1000);
        }
    }

    /**
     * Each event of the message's timeline as it comes, the ones so far first, until the message
     * is sent or bounced (FINAL_STATUSES), the timeline read every $everyMs.
     *
     * @return \Generator<int, array<string, mixed>>
     */
    public function follow(string $id, int $everyMs = 1000): \Generator
    {
        $seen = [];
        for (;;) {
            $message = $this->getMessage($id);
            foreach ($message['events'] as $event) {
                if (!isset($seen[$event['id']])) {
                    $seen[$event['id']] = true;
                    yield $event;
                }
            }
            if (in_array($message['status'], self::FINAL_STATUSES, true)) {
                return;
            }
            usleep($everyMs * 1000);
        }
    }

    /**
     * The tenant's lifecycle events after $after (an earlier page's `cursor`; null: only what
     * comes next): {data, cursor}. With $wait (seconds, up to 25) Gatepost holds the request until
     * an event comes or the wait ends.
     */
    public function listEvents(?string $after = null, ?int $wait = null, ?int $limit = null): array
    {
        $query = array_filter(['after' => $after, 'wait' => $wait, 'limit' => $limit], static fn ($v) => $v !== null);
        // The wait is the server's: the attempt's deadline must outlast it.
        return $this->call('events.list', [], null, $query, null, max($this->timeout, ($wait ?? 0) + 10));
    }

    /** The message's latest delivery receipt {id, jws} and all of them (`receipts`); 404 receipt_not_found before any. */
    public function getReceipt(string $messageId): array
    {
        return $this->call('messages.receipt', [$messageId]);
    }

    /** The operator's JWK Set, to verify receipts with (Receipt::verify). Needs no key. */
    public function jwks(): array
    {
        return $this->call('receipts.jwks');
    }

    /** Fetches the message's latest receipt and the operator's public keys, and verifies it (Receipt::verify): its claims. */
    public function verifyMessageReceipt(string $messageId): array
    {
        return Receipt::verify($this->getReceipt($messageId)['jws'], $this->jwks());
    }

    /** A page of the sandbox inbox, newest first: {data, next_cursor}. */
    public function listCaptured(?int $limit = null, ?string $cursor = null): array
    {
        return $this->call('sandbox.list', [], null, self::page($limit, $cursor));
    }

    public function getCaptured(string $messageId): array
    {
        return $this->call('sandbox.get', [$messageId]);
    }

    // --- address validation (docs/validate.md) ------------------------------------------------

    /** The verdict on one address: {address, result, reasons, checks, suggestion}; an invalid address is a verdict, not an error. */
    public function validate(string $address): array
    {
        return $this->call('validate', [], ['address' => $address]);
    }

    /**
     * Up to 1,000 addresses: one verdict each, in order.
     *
     * @param list<string> $addresses
     */
    public function validateBatch(array $addresses): array
    {
        return $this->call('validate.batch', [], ['addresses' => $addresses])['results'];
    }

    // --- templates -------------------------------------------------------------------------

    /** @param array<string, mixed> $template slug, subject, html; name, text, from, to, reply_to */
    public function createTemplate(array $template): array
    {
        return $this->call('templates.create', [], $template);
    }

    /** Every template of the tenant, by slug. */
    public function listTemplates(): array
    {
        return $this->call('templates.list')['data'];
    }

    public function getTemplate(string $slug): array
    {
        return $this->call('templates.get', [$slug]);
    }

    /** @param array<string, mixed> $changes the fields to change (null clears an optional one) */
    public function updateTemplate(string $slug, array $changes): array
    {
        return $this->call('templates.update', [$slug], $changes);
    }

    public function deleteTemplate(string $slug): void
    {
        $this->call('templates.delete', [$slug]);
    }

    // --- suppressions ----------------------------------------------------------------------

    /** Suppresses an address; $reason is manual, unsubscribe or complaint. */
    public function suppress(string $address, string $reason = 'manual', ?string $detail = null): array
    {
        return $this->call('suppressions.create', [], array_filter(
            ['address' => $address, 'reason' => $reason, 'detail' => $detail],
            static fn ($v) => $v !== null,
        ));
    }

    /** A page of suppressions, by address: {data, next_cursor}. */
    public function listSuppressions(?int $limit = null, ?string $cursor = null): array
    {
        return $this->call('suppressions.list', [], null, self::page($limit, $cursor));
    }

    /** The suppression of an address; 404 not_found when it is not suppressed. */
    public function getSuppression(string $address): array
    {
        return $this->call('suppressions.get', [$address]);
    }

    public function unsuppress(string $address): void
    {
        $this->call('suppressions.delete', [$address]);
    }

    // --- webhooks --------------------------------------------------------------------------

    /**
     * Subscribes an https URL to event types; the answer's `secret` (whsec_…) is shown this once.
     *
     * @param list<string> $events
     */
    public function createWebhook(string $url, array $events): array
    {
        return $this->call('webhooks.create', [], ['url' => $url, 'events' => $events]);
    }

    public function listWebhooks(): array
    {
        return $this->call('webhooks.list')['data'];
    }

    public function getWebhook(string $id): array
    {
        return $this->call('webhooks.get', [$id]);
    }

    /** @param array<string, mixed> $changes url, events, enabled */
    public function updateWebhook(string $id, array $changes): array
    {
        return $this->call('webhooks.update', [$id], $changes);
    }

    public function deleteWebhook(string $id): void
    {
        $this->call('webhooks.delete', [$id]);
    }

    /** A new secret (shown once): {id, secret, previous_secret_expires_at}; both sign for 24 hours. */
    public function rotateWebhookSecret(string $id): array
    {
        return $this->call('webhooks.rotate', [$id]);
    }

    /** Sends a webhook.test event to the endpoint; answers the event. */
    public function testWebhook(string $id): array
    {
        return $this->call('webhooks.test', [$id])['event'];
    }

    /** The endpoint's last delivery attempts, newest first. */
    public function listWebhookDeliveries(string $id, ?int $limit = null): array
    {
        return $this->call('webhooks.deliveries', [$id], null, $limit === null ? [] : ['limit' => $limit])['data'];
    }

    /** Redelivers a failed event by hand; 409 webhook_delivery_not_failed otherwise. */
    public function retryWebhookDelivery(string $id, string $eventId): void
    {
        $this->call('webhooks.retry', [$id, $eventId]);
    }

    // --- domains ---------------------------------------------------------------------------

    /** Adds a sending domain: pending, with the DNS `records` to publish (and a tracking host's CNAME, if one is named). */
    public function createDomain(string $name, ?string $trackingHost = null): array
    {
        return $this->call('domains.create', [], array_filter(['name' => $name, 'tracking_host' => $trackingHost], static fn ($v) => $v !== null));
    }

    /** Names the host the domain's tracked links use, or none (null); its CNAME is pending until the next verification. */
    public function setTrackingHost(string $id, ?string $trackingHost): array
    {
        return $this->call('domains.update', [$id], ['tracking_host' => $trackingHost]);
    }

    public function listDomains(): array
    {
        return $this->call('domains.list')['data'];
    }

    public function getDomain(string $id): array
    {
        return $this->call('domains.get', [$id]);
    }

    /** Looks every record up now; verified when both DKIM records and SPF match. */
    public function verifyDomain(string $id): array
    {
        return $this->call('domains.verify', [$id]);
    }

    public function deleteDomain(string $id): void
    {
        $this->call('domains.delete', [$id]);
    }

    // --- deliverability: reports received, the reputation breakers, the queue ------------------

    /** Bounces and complaints received at the return-path domains, newest first: {data, next_cursor}. */
    public function listReports(?int $limit = null, ?string $cursor = null): array
    {
        return $this->call('reports.list', [], null, self::page($limit, $cursor));
    }

    /** The tenant's reputation breaker and each sending domain's (`domains`), with the rates of the window. */
    public function getReputation(): array
    {
        return $this->call('reputation.get');
    }

    /** The tenant's mail in the fair queue, per destination: [{destination, waiting, in_flight, oldest_age_seconds}]. */
    public function getQueue(): array
    {
        return $this->call('queue.get')['data'];
    }

    // --- inbound mail (docs/inbound.md) -----------------------------------------------------

    /**
     * Routes mail to $match on a verified domain of the tenant (422 inbound_domain_not_verified
     * otherwise): posted as email.inbound ($action webhook, the default) or only kept (store).
     */
    public function createInboundRoute(string $match, ?string $action = null, ?string $endpointId = null): array
    {
        $route = ['match' => $match, 'action' => $action, 'endpoint_id' => $endpointId];
        return $this->call('inbound.routes.create', [], array_filter($route, static fn ($v) => $v !== null));
    }

    public function listInboundRoutes(): array
    {
        return $this->call('inbound.routes.list')['data'];
    }

    public function getInboundRoute(string $id): array
    {
        return $this->call('inbound.routes.get', [$id]);
    }

    /** @param array<string, mixed> $changes match, action, endpoint_id (null: every endpoint subscribed to email.inbound) */
    public function updateInboundRoute(string $id, array $changes): array
    {
        return $this->call('inbound.routes.update', [$id], $changes);
    }

    public function deleteInboundRoute(string $id): void
    {
        $this->call('inbound.routes.delete', [$id]);
    }

    /** Mail the inbound MX received for the tenant, newest first: {data, next_cursor}. */
    public function listInboundMessages(?int $limit = null, ?string $cursor = null): array
    {
        return $this->call('inbound.messages.list', [], null, self::page($limit, $cursor));
    }

    /** A received message: its envelope and every field of its email.inbound payload. */
    public function getInboundMessage(string $id): array
    {
        return $this->call('inbound.messages.get', [$id]);
    }

    /** The received message byte for byte as the inbound MX took it (message/rfc822). */
    public function getInboundRaw(string $id): string
    {
        return $this->download('inbound.messages.raw', [$id])[1];
    }

    /**
     * Attachment $n (from 0, in the order of the message's attachments): its filename, content type
     * and bytes; 404 not_found when the message has no such attachment.
     */
    public function getInboundAttachment(string $id, int $n): InboundAttachment
    {
        [$headers, $content] = $this->download('inbound.messages.attachment', [$id, (string) $n]);
        preg_match('/filename="([^"]*)"/', $headers['content-disposition'] ?? '', $m);
        return new InboundAttachment($m[1] ?? null, $headers['content-type'] ?? 'application/octet-stream', $content);
    }

    // --- audiences and their contacts (docs/broadcasts.md) -------------------------------------

    /** A new audience: {id, name, contacts, created_at}. */
    public function createAudience(string $name): array
    {
        return $this->call('audiences.create', [], ['name' => $name]);
    }

    /** The tenant's audiences, oldest first. */
    public function listAudiences(): array
    {
        return $this->call('audiences.list')['data'];
    }

    public function getAudience(string $id): array
    {
        return $this->call('audiences.get', [$id]);
    }

    /** Deletes the audience and its contacts. */
    public function deleteAudience(string $id): void
    {
        $this->call('audiences.delete', [$id]);
    }

    /**
     * Adds a contact; 409 contact_exists when the audience has the email already.
     *
     * @param array<string, mixed> $data merge variables
     */
    public function addContact(string $audienceId, string $email, ?string $name = null, array $data = [], ?bool $unsubscribed = null): array
    {
        $contact = ['email' => $email, 'name' => $name, 'data' => $data === [] ? null : $data, 'unsubscribed' => $unsubscribed];
        return $this->call('contacts.add', [$audienceId], array_filter($contact, static fn ($v) => $v !== null));
    }

    /** A page of the audience's contacts (up to 1,000), by id: {data, next_cursor}. */
    public function listContacts(string $audienceId, ?int $limit = null, ?string $cursor = null): array
    {
        return $this->call('contacts.list', [$audienceId], null, self::page($limit, $cursor));
    }

    /**
     * Every contact of the audience, by id, a page of $pageSize read at a time.
     *
     * @return \Generator<int, array<string, mixed>>
     */
    public function contacts(string $audienceId, ?int $pageSize = null): \Generator
    {
        $cursor = null;
        do {
            $page = $this->listContacts($audienceId, $pageSize, $cursor);
            yield from $page['data'];
            $cursor = $page['next_cursor'];
        } while ($cursor !== null);
    }

    /** A contact, by its id (con_…) or its email. */
    public function getContact(string $audienceId, string $contact): array
    {
        return $this->call('contacts.get', [$audienceId, $contact]);
    }

    /** @param array<string, mixed> $changes email, name (null clears it), data (replaced whole), unsubscribed */
    public function updateContact(string $audienceId, string $contact, array $changes): array
    {
        return $this->call('contacts.update', [$audienceId, $contact], self::objects($changes));
    }

    public function removeContact(string $audienceId, string $contact): void
    {
        $this->call('contacts.remove', [$audienceId, $contact]);
    }

    /**
     * Imports a CSV file: a header row naming email, then name, unsubscribed and any data columns.
     * $csv is the file's content or a stream (fopen's); a stream that can seek is sent again whole
     * after a 429, one that cannot (a pipe) is sent once. Bad rows are refused one by one in the
     * report; a file that cannot be read is 422 csv_invalid, and nothing of it is imported.
     *
     * @param string|resource $csv
     */
    public function importContacts(string $audienceId, mixed $csv): ImportReport
    {
        return ImportReport::fromAnswer($this->call('contacts.import', [$audienceId], new Upload('text/csv', $csv)));
    }

    /** Imports the CSV file at $path, streamed from disk (see importContacts). */
    public function importContactsFile(string $audienceId, string $path): ImportReport
    {
        $file = @fopen($path, 'rb');
        if ($file === false) {
            throw new \InvalidArgumentException("Cannot open $path.");
        }
        try {
            return $this->importContacts($audienceId, $file);
        } finally {
            fclose($file);
        }
    }

    // --- broadcasts (docs/broadcasts.md) --------------------------------------------------------

    /**
     * A draft to an audience: name, audience_id, from, subject, html or template, text, data,
     * sandbox. 404 not_found for an audience that is not the tenant's, 422 template_not_found for
     * an unknown template.
     *
     * @param array<string, mixed> $broadcast
     */
    public function createBroadcast(array $broadcast): array
    {
        return $this->call('broadcasts.create', [], $broadcast);
    }

    /** One page, newest first: {data, next_cursor}. */
    public function listBroadcasts(?int $limit = null, ?string $cursor = null): array
    {
        return $this->call('broadcasts.list', [], null, self::page($limit, $cursor));
    }

    /** The broadcast with its progress (the fan-out's count) and results (its messages' events). */
    public function getBroadcast(string $id): array
    {
        return $this->call('broadcasts.get', [$id]);
    }

    /** Deletes a draft; 409 broadcast_not_draft once it has been sent (cancel it instead). */
    public function deleteBroadcast(string $id): void
    {
        $this->call('broadcasts.delete', [$id]);
    }

    /**
     * Sends a draft now, or schedules it at $sendAt (at most 30 days ahead). Not retried after a
     * failure: a send that went through answers a second one 409 broadcast_already_sent.
     */
    public function sendBroadcast(string $id, \DateTimeInterface|string|null $sendAt = null): array
    {
        if ($sendAt instanceof \DateTimeInterface) {
            $sendAt = $sendAt->format(\DateTimeInterface::RFC3339);
        }
        $body = $sendAt === null ? new \stdClass() : ['send_at' => $sendAt];
        return $this->call('broadcasts.send', [$id], $body);
    }

    /** Stops a scheduled, sending or paused broadcast: nobody not yet admitted is sent to. */
    public function cancelBroadcast(string $id): array
    {
        return $this->call('broadcasts.cancel', [$id]);
    }

    // --- automations and custom events (docs/automations.md) -----------------------------------

    /**
     * Creates it, enabled: name, audience_id, trigger, steps, sandbox. Checked whole first (422
     * automation_cycle, automation_step_unknown, …): a refusal creates nothing.
     *
     * @param array<string, mixed> $automation
     */
    public function createAutomation(array $automation): array
    {
        return $this->call('automations.create', [], $automation);
    }

    /** Every automation of the tenant, oldest first. */
    public function listAutomations(): array
    {
        return $this->call('automations.list')['data'];
    }

    public function getAutomation(string $id): array
    {
        return $this->call('automations.get', [$id]);
    }

    /** Renames it, or disables it ($enabled false: its runs stop at their next step) or enables it again. */
    public function updateAutomation(string $id, ?string $name = null, ?bool $enabled = null): array
    {
        $changes = array_filter(['name' => $name, 'enabled' => $enabled], static fn ($v) => $v !== null);
        return $this->call('automations.update', [$id], $changes);
    }

    /** Deletes it and its list of runs; its runs stop at their next step. */
    public function deleteAutomation(string $id): void
    {
        $this->call('automations.delete', [$id]);
    }

    /** One page of its runs, newest first: {data, next_cursor}. */
    public function listAutomationRuns(string $id, ?int $limit = null, ?string $cursor = null): array
    {
        return $this->call('automations.runs', [$id], null, self::page($limit, $cursor));
    }

    /** One run with its timeline. */
    public function getAutomationRun(string $id, string $runId): array
    {
        return $this->call('automations.run', [$id, $runId]);
    }

    /**
     * A custom event about the contact $email: starts a run of each enabled automation triggered
     * by $name whose audience has the contact (404 contact_not_found when none has); answers
     * {id, runs}. The same $idempotencyKey again starts nothing (runs is empty).
     *
     * @param array<string, mixed> $data
     */
    public function sendEvent(string $name, string $email, array $data = [], ?string $idempotencyKey = null): array
    {
        $event = ['name' => $name, 'email' => $email, 'data' => $data === [] ? null : $data, 'idempotency_key' => $idempotencyKey];
        return $this->call('events.send', [], array_filter($event, static fn ($v) => $v !== null));
    }

    // --- the wire --------------------------------------------------------------------------

    /**
     * Makes the request of operation $name (Operations::TABLE), its path parameters filled in
     * order, with retries; answers the decoded JSON (an empty array for a 204).
     *
     * @param list<string> $params
     * @param array<string, scalar> $query
     */
    private function call(
        string $name,
        array $params = [],
        mixed $body = null,
        array $query = [],
        ?string $idempotencyKey = null,
        ?float $timeout = null,
    ): array {
        [$status, , $answer] = $this->request($name, $params, $body, $query, $idempotencyKey, $timeout);
        return self::decode($status, $answer);
    }

    /**
     * The request of call() for an answer that is a file: [its headers (lower-case names), its bytes].
     *
     * @param list<string> $params
     * @return array{array<string, string>, string}
     */
    private function download(string $name, array $params): array
    {
        [, $headers, $answer] = $this->request($name, $params, accept: '*/*');
        return [$headers, $answer];
    }

    /**
     * call()'s request with its retries: [status, headers, body] of the first 2xx; a refusal is a
     * GatepostException.
     *
     * @param list<string> $params
     * @param array<string, scalar> $query
     * @return array{int, array<string, string>, string}
     */
    private function request(
        string $name,
        array $params = [],
        mixed $body = null,
        array $query = [],
        ?string $idempotencyKey = null,
        ?float $timeout = null,
        string $accept = 'application/json',
    ): array {
        [$method, $template] = Operations::TABLE[$name];
        $url = $this->baseUrl . self::fillPath($template, $params) . ($query ? '?' . http_build_query($query) : '');
        $payload = $body === null || $body instanceof Upload
            ? $body
            : new Upload('application/json', json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES));
        $headers = [
            'Authorization: Bearer ' . $this->apiKey,
            'Accept: ' . $accept,
            'User-Agent: gatepost-php/' . self::VERSION,
            // curl asks a large upload's server to say "100 Continue" first: a round trip for nothing.
            'Expect:',
        ];
        if ($payload !== null) {
            $headers[] = 'Content-Type: ' . $payload->contentType;
        }
        if ($idempotencyKey !== null) {
            $headers[] = 'Idempotency-Key: ' . $idempotencyKey;
        }
        $safe = $method !== 'POST' || $idempotencyKey !== null;
        // A stream read once (a pipe) cannot be sent again.
        $maxAttempts = $payload === null || $payload->replayable() ? $this->maxAttempts : 1;
        for ($attempt = 1; ; $attempt++) {
            try {
                [$status, $answerHeaders, $answer] = $this->once($method, $url, $headers, $payload, $timeout ?? $this->timeout);
            } catch (ConnectionException $e) {
                if ($attempt >= $maxAttempts || !$safe) {
                    throw $e;
                }
                usleep($this->backoff($attempt) * 1000);
                continue;
            }
            if ($status >= 200 && $status < 300) {
                return [$status, $answerHeaders, $answer];
            }
            $retryAfter = isset($answerHeaders['retry-after']) ? self::retryAfterSeconds($answerHeaders['retry-after']) : null;
            $error = self::errorOf($status, $retryAfter, $answer);
            $retryable = $status === 429 || ($status >= 500 && $safe);
            if (!$retryable || $attempt >= $maxAttempts || ($retryAfter ?? 0) > $this->maxRetryWait) {
                throw $error;
            }
            $waitMs = max($this->backoff($attempt), ($retryAfter ?? 0) * 1000);
            usleep(min($waitMs, $this->maxRetryWait * 1000) * 1000);
        }
    }

    /**
     * One attempt: [status, headers (lower-case names), body]. No answer is a ConnectionException.
     *
     * @param list<string> $headers
     * @return array{int, array<string, string>, string}
     */
    private function once(string $method, string $url, array $headers, ?Upload $payload, float $timeout): array
    {
        $answerHeaders = [];
        $curl = curl_init($url);
        curl_setopt_array($curl, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_CONNECTTIMEOUT_MS => (int) min($timeout * 1000, 10_000),
            CURLOPT_TIMEOUT_MS => (int) ($timeout * 1000),
            CURLOPT_HEADERFUNCTION => static function ($curl, string $line) use (&$answerHeaders): int {
                if (preg_match('/^([^:\s]+):\s*(.*?)\s*$/', $line, $m)) {
                    $answerHeaders[strtolower($m[1])] = $m[2];
                }
                return strlen($line);
            },
        ]);
        if ($payload !== null) {
            curl_setopt_array($curl, $payload->curlOptions());
        }
        $answer = curl_exec($curl);
        if ($answer === false) {
            $timedOut = curl_errno($curl) === CURLE_OPERATION_TIMEDOUT;
            $message = "$method $url: " . curl_error($curl);
            curl_close($curl);
            throw new ConnectionException($timedOut ? ConnectionException::TIMEOUT : ConnectionException::CODE, $message, 0);
        }
        $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        curl_close($curl);
        return [$status, $answerHeaders, (string) $answer];
    }

    /** Retry-After as seconds: a number of seconds or an HTTP date. */
    private static function retryAfterSeconds(string $value): ?int
    {
        if (ctype_digit($value)) {
            return (int) $value;
        }
        $at = strtotime($value);
        return $at === false ? null : max(0, $at - time());
    }

    /** Exponential backoff with full jitter: a random wait up to backoff·2^(attempt-1), in ms. */
    private function backoff(int $attempt): int
    {
        return random_int(0, $this->backoffMs * 2 ** ($attempt - 1));
    }

    private static function decode(int $status, string $answer): array
    {
        if ($status === 204 || $answer === '') {
            return [];
        }
        $decoded = json_decode($answer, true);
        if (!is_array($decoded)) {
            throw new GatepostException(GatepostException::INVALID_RESPONSE, "HTTP $status with an answer that is not JSON.", $status);
        }
        return $decoded;
    }

    private static function errorOf(int $status, ?int $retryAfter, string $answer): GatepostException
    {
        $error = json_decode($answer, true)['error'] ?? null;
        if (!is_array($error) || !is_string($error['code'] ?? null)) {
            return new GatepostException(GatepostException::INVALID_RESPONSE, "HTTP $status with no Gatepost error body.", $status, [], $retryAfter);
        }
        return new GatepostException($error['code'], (string) ($error['message'] ?? ''), $status, $error['details'] ?? [], $retryAfter);
    }

    /** @param list<string> $params */
    private static function fillPath(string $template, array $params): string
    {
        foreach ($params as $value) {
            if ($value === '') {
                throw new GatepostException('invalid_request', "$template: a path parameter is empty.", 0);
            }
            $template = preg_replace('/\{[a-z]+\}/', rawurlencode($value), $template, 1);
        }
        return $template;
    }

    /** @return array<string, scalar> */
    private static function page(?int $limit, ?string $cursor): array
    {
        return array_filter(['limit' => $limit, 'cursor' => $cursor], static fn ($v) => $v !== null);
    }

    private static function newIdempotencyKey(): string
    {
        return 'gp-php-' . bin2hex(random_bytes(16));
    }
}
