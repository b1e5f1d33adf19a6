<?php

declare(strict_types=1);

namespace Gatepost\Tests;

use Gatepost\Client;

/**
 * Broadcasts, automations run by a custom event, and received mail downloaded, against a running
 * Gatepost (docs/broadcasts.md, docs/automations.md, docs/inbound.md).
 */
final class BroadcastsTest extends LiveTestCase
{
    /** Calls $check until it answers something other than null or false; fails after 20 s. */
    private function eventually(callable $check): mixed
    {
        $until = microtime(true) + 20;
        while (($value = $check()) === null || $value === false) {
            if (microtime(true) > $until) {
                $this->fail('not reached within 20 s');
            }
            usleep(100_000);
        }
        return $value;
    }

    /** An audience with a contact per email, named from its local part (ann.php@…: Ann). */
    private function audienceOf(string $name, string ...$emails): string
    {
        $audience = $this->live->createAudience($name);
        foreach ($emails as $email) {
            $this->live->addContact($audience['id'], $email, ucfirst(explode('.', $email)[0]));
        }
        return $audience['id'];
    }

    public function testASandboxBroadcastReachesEachContactAndIsSentOnce(): void
    {
        $audienceId = $this->audienceOf('PHP readers', 'ann.php@example.com', 'bob.php@example.com');
        $draft = $this->live->createBroadcast([
            'name' => 'Hello', 'audience_id' => $audienceId, 'from' => 'News <news@shop.example>',
            'subject' => 'Hello from PHP, {{name}}', 'html' => '<p>Hello {{name}}</p>', 'sandbox' => true,
        ]);
        $this->assertStringStartsWith('bro_', $draft['id']);
        $this->assertSame(['draft', null], [$draft['status'], $draft['progress']]);
        $this->assertContains($draft['id'], array_column($this->live->listBroadcasts(10)['data'], 'id'));

        $this->assertContains($this->live->sendBroadcast($draft['id'])['status'], ['sending', 'sent']);
        $done = $this->eventually(function () use ($draft) {
            $b = $this->live->getBroadcast($draft['id']);
            return $b['status'] === 'sent' && ($b['results']['sent'] ?? 0) === 2 ? $b : null;
        });
        $this->assertSame(2, $done['progress']['admitted']);
        $this->eventually(fn () => array_diff(
            ['Hello from PHP, Ann', 'Hello from PHP, Bob'],
            array_column($this->sandbox->listCaptured(50)['data'], 'subject'),
        ) === []);

        $this->refusal(409, 'broadcast_already_sent', fn () => $this->live->sendBroadcast($draft['id']));
        $this->refusal(409, 'broadcast_not_draft', fn () => $this->live->deleteBroadcast($draft['id']));
    }

    public function testABroadcastIsScheduledCancelledOrDeletedAsADraft(): void
    {
        $audienceId = $this->audienceOf('PHP later', 'cy.php@example.com');
        $fields = ['name' => 'Later', 'audience_id' => $audienceId, 'from' => 'news@shop.example', 'subject' => 's', 'html' => 'h', 'sandbox' => true];
        $later = $this->live->createBroadcast($fields);
        $scheduled = $this->live->sendBroadcast($later['id'], new \DateTimeImmutable('+1 hour'));
        $this->assertSame('scheduled', $scheduled['status']);
        $this->assertNotNull($scheduled['send_at']);
        $this->assertSame('cancelled', $this->live->cancelBroadcast($later['id'])['status']);
        $past = $this->live->createBroadcast($fields);
        $this->refusal(422, 'send_at_out_of_range', fn () => $this->live->sendBroadcast($past['id'], '2020-01-01T00:00:00Z'));
        $this->live->deleteBroadcast($past['id']);
        $this->refusal(404, 'not_found', fn () => $this->live->getBroadcast($past['id']));
    }

    public function testACustomEventStartsAnAutomationRunWhoseTimelineIsRead(): void
    {
        $this->live->createTemplate(['slug' => 'php-automation', 'subject' => 'On {{plan}}', 'html' => '<p>{{name}} is on {{plan}}</p>']);
        $audienceId = $this->audienceOf('PHP automation', 'dee.php@example.com');
        $automation = $this->live->createAutomation([
            'name' => 'Upgrade', 'audience_id' => $audienceId, 'sandbox' => true,
            'trigger' => ['type' => 'custom_event', 'name' => 'plan.upgraded'],
            'steps' => [
                ['id' => 'pause', 'type' => 'wait', 'duration' => 'PT1S'],
                ['id' => 'hello', 'type' => 'send', 'template' => 'php-automation', 'from' => 'Shop <hi@shop.example>'],
            ],
        ]);
        $this->assertStringStartsWith('aut_', $automation['id']);
        $this->assertSame([true, 1], [$automation['enabled'], $automation['steps'][0]['seconds']]);
        $this->assertContains($automation['id'], array_column($this->live->listAutomations(), 'id'));
        $this->assertSame('Upgrade', $this->live->getAutomation($automation['id'])['name']);

        $posted = $this->sandbox->sendEvent('plan.upgraded', 'dee.php@example.com', ['plan' => 'pro'], 'php-up-1');
        $this->assertStringStartsWith('evt_', $posted['id']);
        $this->assertCount(1, $posted['runs']);
        $this->assertSame([], $this->sandbox->sendEvent('plan.upgraded', 'dee.php@example.com', [], 'php-up-1')['runs']);
        $runId = $posted['runs'][0];
        $run = $this->eventually(function () use ($automation, $runId) {
            $r = $this->live->getAutomationRun($automation['id'], $runId);
            return $r['status'] === 'completed' ? $r : null;
        });
        $this->assertSame(['run.started', 'step.waiting', 'step.sent', 'run.completed'], array_column($run['timeline'], 'type'));
        // The run's send step admitted the message; its capture follows a moment later.
        $messageId = $run['timeline'][2]['data']['message_id'];
        $captured = $this->eventually(function () use ($messageId) {
            try {
                return $this->sandbox->getCaptured($messageId);
            } catch (\Gatepost\GatepostException $e) {
                return null;
            }
        });
        $this->assertSame('On pro', $captured['subject']);
        $listed = $this->eventually(fn () => $this->live->listAutomationRuns($automation['id'], 5)['data'][0] ?? null);
        $this->assertSame($runId, $listed['id']);

        $this->refusal(404, 'contact_not_found', fn () => $this->sandbox->sendEvent('plan.upgraded', 'stranger@example.com'));
        $this->assertFalse($this->live->updateAutomation($automation['id'], enabled: false)['enabled']);
        $this->live->deleteAutomation($automation['id']);
        $this->refusal(404, 'not_found', fn () => $this->live->getAutomation($automation['id']));
    }

    public function testAReceivedMessageDownloadsByteForByteWithItsAttachment(): void
    {
        [$id, $key, $path] = [getenv('GATEPOST_INBOUND_ID'), getenv('GATEPOST_INBOUND_KEY'), getenv('GATEPOST_INBOUND_EML')];
        if (!$id || !$key || !$path) {
            $this->fail('Set GATEPOST_INBOUND_ID, GATEPOST_INBOUND_KEY and GATEPOST_INBOUND_EML (php.sdk.test.ts does).');
        }
        $receiver = new Client($key, self::$url);
        $this->assertSame(file_get_contents($path), $receiver->getInboundRaw($id));
        $attachment = $receiver->getInboundAttachment($id, 0);
        $this->assertSame(['receipt.txt', "Order 1042, paid.\n"], [$attachment->filename, $attachment->content]);
        $this->assertStringStartsWith('text/plain', $attachment->contentType);
        $this->refusal(404, 'not_found', fn () => $receiver->getInboundAttachment($id, 1));
        // Another tenant's message is one that does not exist.
        $this->refusal(404, 'not_found', fn () => $this->live->getInboundRaw($id));
    }
}
