<?php

declare(strict_types=1);

namespace Gatepost\Tests;

use Gatepost\Webhook;
use Gatepost\WebhookVerificationException;
use PHPUnit\Framework\TestCase;

final class WebhookTest extends TestCase
{
    private const BODY = '{"id":"evt_01","type":"email.sent","created_at":"2025-11-21T00:00:00.000Z","data":{"message_id":"msg_01"}}';

    /** The worked example of docs/webhooks.md, byte for byte. */
    public function testTheDocumentedSignature(): void
    {
        $this->assertSame(
            'bfa208a2905bc9f28aa5078ab83b81353775ecbf18fdc9a9fea53e5e5f4ea74a',
            Webhook::computeSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 1763683200, self::BODY),
        );
    }

    public function testAMalformedHeaderIsRefused(): void
    {
        try {
            Webhook::verify(self::BODY, ['X-Service-Signature' => 't=abc,v1=zz'], 'whsec_x');
            $this->fail('accepted');
        } catch (WebhookVerificationException $e) {
            $this->assertSame('malformed_signature', $e->reason);
        }
    }
}
