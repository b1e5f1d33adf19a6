<?php

declare(strict_types=1);

namespace Gatepost\Tests;

use Gatepost\Client;
use Gatepost\Receipt;
use Gatepost\ReceiptVerificationException;
use Gatepost\Webhook;
use Gatepost\WebhookVerificationException;

/**
 * The client against a running Gatepost (LiveTestCase). Webhook deliveries reach a receiver this test runs on loopback, so that Gatepost must let
 * loopback through its SSRF guard (GATEPOST_WEBHOOK_ALLOW=127.0.0.0/8).
 */
final class GatepostTest extends LiveTestCase
{
    private ?LocalServer $receiver = null;

    protected function tearDown(): void
    {
        $this->receiver?->stop();
    }

    public function testASandboxSendIsAcceptedThenOnItsTimeline(): void
    {
        $sent = $this->sandbox->send(['to' => 'ann@example.com', 'subject' => 'Hello from PHP', 'html' => '<p>Hi {{name}}</p>', 'data' => ['name' => 'Ann']]);
        $this->assertStringStartsWith('msg_', $sent['id']);
        $this->assertSame(['queued', true], [$sent['status'], $sent['sandbox']]);
        $message = $this->sandbox->waitForEvent($sent['id'], 'email.sent');
        $this->assertSame('Hello from PHP', $message['subject']);
        $types = array_column($message['events'], 'type');
        $this->assertContains('message.accepted', $types);
        $this->assertStringContainsString('Hi Ann', $this->sandbox->getCaptured($sent['id'])['html']);
    }

    public function testABadKeyIsTheTypedErrorWithItsCode(): void
    {
        $this->refusal(401, 'invalid_api_key', fn () => (new Client('gp_live_not_a_key_at_all', self::$url))->listTemplates());
    }

    public function testRefusalsCarryTheirCodes(): void
    {
        $this->refusal(422, 'template_not_found', fn () => $this->sandbox->send(['to' => 'ann@example.com', 'template' => self::unique('no-such-')]));
        $e = $this->refusal(400, 'invalid_request', fn () => $this->sandbox->send(['to' => 'not an address', 'subject' => 's', 'html' => '<p>s</p>']));
        $this->assertSame('to', $e->details[0]['field']);
        // A sandbox key never manages: the scope refusal, not a bad key.
        $this->refusal(403, 'insufficient_scope', fn () => $this->sandbox->createTemplate(['slug' => self::unique('t-'), 'subject' => 's', 'html' => 'h']));
    }

    public function testTheSameIdempotencyKeyGivesTheSameMessage(): void
    {
        $key = self::unique('php-idem-');
        $email = ['to' => 'ann@example.com', 'subject' => 'once', 'html' => '<p>once</p>'];
        $first = $this->sandbox->send($email, $key);
        $this->assertSame($first['id'], $this->sandbox->send($email, $key)['id']);
        $this->refusal(422, 'idempotency_key_reused', fn () => $this->sandbox->send(['to' => 'bob@example.com', 'subject' => 'other', 'html' => '<p>o</p>'], $key));
        $this->assertSame($key, $this->sandbox->getMessage($first['id'])['idempotency_key']);
    }

    public function testABatchAdmitsAndRefusesEachItemOnItsOwn(): void
    {
        $res = $this->sandbox->sendBatch([
            // An empty data is sent as the JSON object it must be, not as a list.
            ['to' => 'ann@example.com', 'subject' => 'one', 'html' => '<p>1</p>', 'data' => []],
            ['to' => 'bob@example.com', 'template' => self::unique('no-such-')],
        ]);
        $this->assertSame([1, 1], [$res['accepted'], $res['refused']]);
        $this->assertStringStartsWith('msg_', $res['results'][0]['id']);
        $this->assertSame('template_not_found', $res['results'][1]['error']['code']);
    }

    public function testTemplatesRoundTrip(): void
    {
        $slug = self::unique('welcome-');
        $created = $this->live->createTemplate(['slug' => $slug, 'subject' => 'Welcome {{name}}', 'html' => '<p>Hello {{name}}</p>']);
        $this->assertSame($slug, $created['slug']);
        $this->refusal(409, 'template_exists', fn () => $this->live->createTemplate(['slug' => $slug, 'subject' => 's', 'html' => 'h']));
        $updated = $this->live->updateTemplate($slug, ['subject' => 'Hi {{name}}']);
        $this->assertSame(['Hi {{name}}', $created['html']], [$updated['subject'], $updated['html']]);
        $this->assertContains($slug, array_column($this->live->listTemplates(), 'slug'));
        $sent = $this->sandbox->send(['to' => 'ann@example.com', 'template' => $slug, 'data' => ['name' => 'Ann']]);
        $this->assertSame('Hi Ann', $this->sandbox->getMessage($sent['id'])['subject']);
        $this->live->deleteTemplate($slug);
        $this->refusal(404, 'not_found', fn () => $this->live->getTemplate($slug));
    }

    public function testValidationAnswersVerdictsAndRefusesAnEmptyBatch(): void
    {
        // The Gatepost under test asks DNS at a loopback port nothing listens on: a valid address is unknown.
        $v = $this->sandbox->validate('support@example.com');
        $this->assertSame(['unknown', ['dns_unavailable', 'role_account']], [$v['result'], $v['reasons']]);
        $this->assertSame([true, null], [$v['checks']['syntax'], $v['checks']['mx']]);
        $results = $this->live->validateBatch(['"ann@example.com', str_repeat('x', 300) . '@example.com']);
        $this->assertSame(
            [['undeliverable', ['unpaired_quote']], ['undeliverable', ['address_too_long']]],
            array_map(fn ($r) => [$r['result'], $r['reasons']], $results),
        );
        $this->refusal(400, 'invalid_request', fn () => $this->live->validateBatch([]));
    }

    public function testSuppressionsRoundTripAndRefuseASend(): void
    {
        $address = self::unique('gone-') . '@example.com';
        $s = $this->live->suppress($address, detail: 'asked by phone');
        $this->assertSame([$address, 'manual'], [$s['address'], $s['reason']]);
        // The list is the recipients' index and follows within moments.
        $until = microtime(true) + 10;
        while (!in_array($address, array_column($this->live->listSuppressions(1000)['data'], 'address'), true)) {
            $this->assertLessThan($until, microtime(true), "$address not listed");
            usleep(50_000);
        }
        $this->assertSame('asked by phone', $this->live->getSuppression($address)['detail']);
        $this->refusal(422, 'recipient_suppressed', fn () => $this->sandbox->send(['to' => $address, 'subject' => 's', 'html' => '<p>s</p>']));
        $this->live->unsuppress($address);
        $this->refusal(404, 'not_found', fn () => $this->live->getSuppression($address));
    }

    public function testDomainsRoundTripWithTheirRecords(): void
    {
        $name = self::unique('php-sdk-') . '.example';
        $d = $this->live->createDomain($name);
        $this->assertSame([$name, 'pending'], [$d['name'], $d['status']]);
        $purposes = array_unique(array_column($d['records'], 'purpose'));
        sort($purposes);
        $this->assertSame(['dkim', 'dmarc', 'inbound_mx', 'return_path', 'spf'], $purposes);
        $this->refusal(409, 'domain_exists', fn () => $this->live->createDomain($name));
        $this->assertContains($d['id'], array_column($this->live->listDomains(), 'id'));
        // Nothing is published, so the check finds the records missing and the domain stays pending.
        $checked = $this->live->verifyDomain($d['id']);
        $this->assertSame(['pending', 'failed'], [$checked['status'], $checked['records'][0]['status']]);
        $this->assertNotNull($checked['checked_at']);
        $this->assertSame($checked['checked_at'], $this->live->getDomain($d['id'])['checked_at']);
        $this->live->deleteDomain($d['id']);
        $this->refusal(404, 'not_found', fn () => $this->live->getDomain($d['id']));
        $this->refusal(400, 'invalid_request', fn () => $this->live->createDomain('not a domain'));
    }

    /** The delivery of the event with this id at the receiver (others are skipped), within 30 s. */
    private function deliveryOf(string $eventId): array
    {
        $until = microtime(true) + 30;
        for (;;) {
            foreach ($this->receiver->requests() as $r) {
                if (str_contains($r['body'], "\"id\":\"$eventId\"")) {
                    return $r;
                }
            }
            $this->assertLessThan($until, microtime(true), "no delivery of $eventId within 30 s");
            usleep(50_000);
        }
    }

    public function testWebhooksRoundTrip(): void
    {
        $this->receiver = new LocalServer('receiver');
        $w = $this->live->createWebhook($this->receiver->url . '/gatepost', ['email.bounced']);
        $this->assertStringStartsWith('whsec_', $w['secret']);
        $this->assertTrue($w['enabled']);
        $updated = $this->live->updateWebhook($w['id'], ['events' => ['email.sent', 'email.bounced']]);
        $this->assertCount(2, $updated['events']);
        $this->assertArrayNotHasKey('secret', $updated);
        $this->assertContains($w['id'], array_column($this->live->listWebhooks(), 'id'));
        $event = $this->live->testWebhook($w['id']);
        $this->assertSame('webhook.test', $event['type']);
        $d = $this->deliveryOf($event['id']);
        $this->assertSame($event['id'], Webhook::verify($d['body'], $d['headers'], $w['secret'])['id']);
        $rotated = $this->live->rotateWebhookSecret($w['id']);
        $this->assertNotSame($w['secret'], $rotated['secret']);
        $deliveries = $this->live->listWebhookDeliveries($w['id']);
        $this->assertSame($event['id'], $deliveries[0]['event_id']);
        $this->refusal(409, 'webhook_delivery_not_failed', fn () => $this->live->retryWebhookDelivery($w['id'], $event['id']));
        $disabled = $this->live->updateWebhook($w['id'], ['enabled' => false]);
        $this->assertSame([false, 'manual'], [$disabled['enabled'], $disabled['disabled_reason']]);
        $this->live->deleteWebhook($w['id']);
        $this->refusal(404, 'not_found', fn () => $this->live->getWebhook($w['id']));
    }

    /**
     * A live send through the relay: its email.sent arrives signed at the local receiver, and
     * carries the delivery receipt, which verifies against the JWKS.
     */
    public function testALiveSendsWebhookAndReceiptVerify(): void
    {
        $this->receiver = new LocalServer('receiver');
        $w = $this->live->createWebhook($this->receiver->url . '/gatepost', ['email.sent']);
        try {
            $sent = $this->live->send(['from' => 'App <app@sdk-php.example>', 'to' => 'ann@example.com', 'subject' => 'Receipt', 'html' => '<p>r</p>']);
            $message = $this->live->waitForEvent($sent['id'], 'email.sent');
            $sentEvent = array_values(array_filter($message['events'], fn ($e) => $e['type'] === 'email.sent'))[0];
            $d = $this->deliveryOf($sentEvent['id']);
        } finally {
            $this->live->deleteWebhook($w['id']);
        }

        $event = Webhook::verify($d['body'], $d['headers'], $w['secret']);
        $this->assertSame(['email.sent', $sent['id']], [$event['type'], $event['data']['message_id']]);
        $this->assertSame('no_matching_signature', $this->webhookRefusal(str_replace($sent['id'], 'msg_someone_else', $d['body']), $d['headers'], $w['secret']));
        $this->assertSame('no_matching_signature', $this->webhookRefusal($d['body'], $d['headers'], 'whsec_another_secret'));
        $this->assertSame('timestamp_out_of_tolerance', $this->webhookRefusal($d['body'], $d['headers'], $w['secret'], time() + 360));
        $this->assertSame('missing_signature', $this->webhookRefusal($d['body'], [], $w['secret']));

        $receipt = $this->live->getReceipt($sent['id']);
        $jwks = $this->live->jwks();
        $claims = Receipt::verify($receipt['jws'], $jwks);
        $this->assertSame($claims, $this->live->verifyMessageReceipt($sent['id']));
        $this->assertSame([$receipt['id'], $sent['id'], 250], [$claims['id'], $claims['message_id'], $claims['reply']['code']]);
        $this->assertSame($receipt['jws'], $event['data']['receipt']['jws']);
        // One changed byte of the payload: the signature no longer matches.
        [$h, $p, $s] = explode('.', $receipt['jws']);
        $payload = base64_decode(strtr($p, '-_', '+/'));
        $payload[strlen($payload) - 2] = chr(ord($payload[strlen($payload) - 2]) ^ 1);
        $forged = $h . '.' . rtrim(strtr(base64_encode($payload), '+/', '-_'), '=') . '.' . $s;
        $this->assertSame('invalid_signature', $this->receiptRefusal($forged, $jwks));
        $this->assertSame('unknown_key', $this->receiptRefusal($receipt['jws'], ['keys' => []]));
        // Two more live sends: the tenant's three receipts chain; one left out is a gap, a swap out of order.
        $chain = [$receipt['jws']];
        for ($i = 0; $i < 2; $i++) {
            $next = $this->live->send(['from' => 'app@sdk-php.example', 'to' => 'bob@example.com', 'subject' => 'Chain', 'html' => '<p>c</p>']);
            $this->live->waitForEvent($next['id'], 'email.sent');
            $chain[] = $this->live->getReceipt($next['id'])['jws'];
        }
        $all = Receipt::verifyChain($chain, $jwks);
        $this->assertSame([$all[0]['seq'] + 1, $all[0]['seq'] + 2], [$all[1]['seq'], $all[2]['seq']]);
        try {
            Receipt::verifyChain([$chain[0], $chain[2]], $jwks);
            $this->fail('a gap was accepted');
        } catch (ReceiptVerificationException $e) {
            $this->assertSame(['sequence_gap', 1], [$e->reason, $e->index]);
        }
        try {
            Receipt::verifyChain([$chain[1], $chain[0]], $jwks);
            $this->fail('a swap was accepted');
        } catch (ReceiptVerificationException $e) {
            $this->assertSame('out_of_order', $e->reason);
        }
        // A sandbox capture is never delivered: no receipt.
        $captured = $this->sandbox->send(['to' => 'ann@example.com', 'subject' => 's', 'html' => '<p>s</p>']);
        $this->refusal(404, 'receipt_not_found', fn () => $this->sandbox->getReceipt($captured['id']));
    }

    private function webhookRefusal(string $body, array $headers, string $secret, ?int $now = null): string
    {
        try {
            Webhook::verify($body, $headers, $secret, now: $now);
        } catch (WebhookVerificationException $e) {
            return $e->reason;
        }
        $this->fail('the delivery was accepted');
    }

    private function receiptRefusal(string $jws, array $jwks): string
    {
        try {
            Receipt::verify($jws, $jwks);
        } catch (ReceiptVerificationException $e) {
            return $e->reason;
        }
        $this->fail('the receipt was accepted');
    }

    public function testATenantWithoutBouncesHasAClosedBreakerAndNoReports(): void
    {
        // Other tests send live mail (before this one or not): none bounces or complains.
        $reputation = $this->live->getReputation();
        $this->assertSame(['closed', 0, 0], [$reputation['status'], $reputation['window']['hard_bounces'], $reputation['window']['complaints']]);
        $this->assertIsArray($reputation['domains']);
        foreach ($this->live->getQueue() as $entry) {
            $this->assertIsString($entry['destination']);
        }
        $this->assertSame(['data' => [], 'next_cursor' => null], $this->live->listReports(10));
    }

    public function testInboundRoutesNeedAVerifiedDomainAndUnknownOnesAreNotFound(): void
    {
        $this->refusal(422, 'inbound_domain_not_verified', fn () => $this->live->createInboundRoute('support@not-verified.example', 'store'));
        $this->assertSame([], $this->live->listInboundRoutes());
        $this->refusal(404, 'not_found', fn () => $this->live->getInboundRoute('rte_nope'));
        $this->refusal(404, 'not_found', fn () => $this->live->updateInboundRoute('rte_nope', ['action' => 'store']));
        $this->assertSame([], $this->live->listInboundMessages()['data']);
        $this->refusal(404, 'not_found', fn () => $this->live->getInboundMessage('inm_nope'));
    }
}
