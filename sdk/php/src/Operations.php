<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * The one table of the API operations the client calls: every request goes through
 * Client::call with one of these names, so the table is all the SDK claims. `php
 * bin/operations.php` prints it as JSON; a test holds it to the served /openapi.json.
 */
final class Operations
{
    /** name => [method, path template with {name} parameters, as the OpenAPI document writes them] */
    public const TABLE = [
        'emails.send' => ['POST', '/v1/emails'],
        'emails.batch' => ['POST', '/v1/emails/batch'],
        'validate' => ['POST', '/v1/validate'],
        'validate.batch' => ['POST', '/v1/validate/batch'],
        'messages.get' => ['GET', '/v1/messages/{id}'],
        'messages.receipt' => ['GET', '/v1/messages/{id}/receipt'],
        'receipts.jwks' => ['GET', '/.well-known/jwks.json'],
        'sandbox.list' => ['GET', '/v1/sandbox/messages'],
        'sandbox.get' => ['GET', '/v1/sandbox/messages/{id}'],
        'templates.create' => ['POST', '/v1/templates'],
        'templates.list' => ['GET', '/v1/templates'],
        'templates.get' => ['GET', '/v1/templates/{slug}'],
        'templates.update' => ['PATCH', '/v1/templates/{slug}'],
        'templates.delete' => ['DELETE', '/v1/templates/{slug}'],
        'suppressions.create' => ['POST', '/v1/suppressions'],
        'suppressions.list' => ['GET', '/v1/suppressions'],
        'suppressions.get' => ['GET', '/v1/suppressions/{address}'],
        'suppressions.delete' => ['DELETE', '/v1/suppressions/{address}'],
        'webhooks.create' => ['POST', '/v1/webhooks'],
        'webhooks.list' => ['GET', '/v1/webhooks'],
        'webhooks.get' => ['GET', '/v1/webhooks/{id}'],
        'webhooks.update' => ['PATCH', '/v1/webhooks/{id}'],
        'webhooks.delete' => ['DELETE', '/v1/webhooks/{id}'],
        'webhooks.rotate' => ['POST', '/v1/webhooks/{id}/rotate'],
        'webhooks.test' => ['POST', '/v1/webhooks/{id}/test'],
        'webhooks.deliveries' => ['GET', '/v1/webhooks/{id}/deliveries'],
        'webhooks.retry' => ['POST', '/v1/webhooks/{id}/deliveries/{evt}/retry'],
        'domains.create' => ['POST', '/v1/domains'],
        'domains.list' => ['GET', '/v1/domains'],
        'domains.get' => ['GET', '/v1/domains/{id}'],
        'domains.verify' => ['POST', '/v1/domains/{id}/verify'],
        'domains.update' => ['PATCH', '/v1/domains/{id}'],
        'domains.delete' => ['DELETE', '/v1/domains/{id}'],
        'events.list' => ['GET', '/v1/events'],
        'reports.list' => ['GET', '/v1/reports'],
        'reputation.get' => ['GET', '/v1/reputation'],
        'queue.get' => ['GET', '/v1/queue'],
        'inbound.routes.create' => ['POST', '/v1/inbound/routes'],
        'inbound.routes.list' => ['GET', '/v1/inbound/routes'],
        'inbound.routes.get' => ['GET', '/v1/inbound/routes/{id}'],
        'inbound.routes.update' => ['PATCH', '/v1/inbound/routes/{id}'],
        'inbound.routes.delete' => ['DELETE', '/v1/inbound/routes/{id}'],
        'inbound.messages.list' => ['GET', '/v1/inbound/messages'],
        'inbound.messages.get' => ['GET', '/v1/inbound/messages/{id}'],
        // Downloads: the answer is bytes, not JSON.
        'inbound.messages.raw' => ['GET', '/v1/inbound/messages/{id}/raw'],
        'inbound.messages.attachment' => ['GET', '/v1/inbound/messages/{id}/attachments/{n}'],
        'audiences.create' => ['POST', '/v1/audiences'],
        'audiences.list' => ['GET', '/v1/audiences'],
        'audiences.get' => ['GET', '/v1/audiences/{id}'],
        'audiences.delete' => ['DELETE', '/v1/audiences/{id}'],
        'contacts.add' => ['POST', '/v1/audiences/{id}/contacts'],
        'contacts.list' => ['GET', '/v1/audiences/{id}/contacts'],
        'contacts.get' => ['GET', '/v1/audiences/{id}/contacts/{contact}'],
        'contacts.update' => ['PATCH', '/v1/audiences/{id}/contacts/{contact}'],
        'contacts.remove' => ['DELETE', '/v1/audiences/{id}/contacts/{contact}'],
        'contacts.import' => ['POST', '/v1/audiences/{id}/contacts/import'],
        'broadcasts.create' => ['POST', '/v1/broadcasts'],
        'broadcasts.list' => ['GET', '/v1/broadcasts'],
        'broadcasts.get' => ['GET', '/v1/broadcasts/{id}'],
        'broadcasts.delete' => ['DELETE', '/v1/broadcasts/{id}'],
        'broadcasts.send' => ['POST', '/v1/broadcasts/{id}/send'],
        'broadcasts.cancel' => ['POST', '/v1/broadcasts/{id}/cancel'],
        'automations.create' => ['POST', '/v1/automations'],
        'automations.list' => ['GET', '/v1/automations'],
        'automations.get' => ['GET', '/v1/automations/{id}'],
        'automations.update' => ['PATCH', '/v1/automations/{id}'],
        'automations.delete' => ['DELETE', '/v1/automations/{id}'],
        'automations.runs' => ['GET', '/v1/automations/{id}/runs'],
        'automations.run' => ['GET', '/v1/automations/{id}/runs/{run}'],
        'events.send' => ['POST', '/v1/events'],
    ];

    /** @return list<array{name: string, method: string, path: string}> */
    public static function all(): array
    {
        $out = [];
        foreach (self::TABLE as $name => [$method, $path]) {
            $out[] = ['name' => $name, 'method' => $method, 'path' => $path];
        }
        return $out;
    }
}
