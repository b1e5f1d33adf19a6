<?php

declare(strict_types=1);

namespace Gatepost\Tests;

use Gatepost\Client;
use Gatepost\ConnectionException;
use Gatepost\GatepostException;
use PHPUnit\Framework\TestCase;

/**
 * Retries and bad answers against tiny local HTTP servers (tests/servers/): a 429 with
 * Retry-After then a success; a server failing every time, tried a bounded number of times; a
 * page that is not JSON; a server that is down; one that never answers.
 */
final class RetryTest extends TestCase
{
    private ?LocalServer $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
    }

    private function serve(string $router): LocalServer
    {
        return $this->server = new LocalServer($router);
    }

    public function testA429IsRetriedAfterItsRetryAfterWithTheSameIdempotencyKey(): void
    {
        $server = $this->serve('rate-limited');
        $client = new Client('gp_test_x', $server->url, backoffMs: 1);
        $sent = $client->send(['to' => 'a@example.com', 'subject' => 's', 'html' => '<p>s</p>']);
        $this->assertSame('msg_retried', $sent['id']);
        $requests = $server->requests();
        $this->assertCount(2, $requests);
        // Retry-After: 1 was honoured (the backoff alone is a millisecond).
        $this->assertGreaterThanOrEqual(0.9, $requests[1]['at'] - $requests[0]['at']);
        $key = $requests[0]['headers']['Idempotency-Key'] ?? '';
        $this->assertNotSame('', $key);
        $this->assertSame($key, $requests[1]['headers']['Idempotency-Key'] ?? null);
    }

    public function testGivesUpAfterTheLastAttemptWithTheCodedError(): void
    {
        $server = $this->serve('unavailable');
        $client = new Client('gp_live_x', $server->url, backoffMs: 1);
        try {
            $client->getMessage('msg_x');
            $this->fail('no exception');
        } catch (GatepostException $e) {
            $this->assertSame(['storage_unavailable', 503], [$e->errorCode, $e->status]);
        }
        $this->assertCount(3, $server->requests());
    }

    public function testAPostWithoutAnIdempotencyKeyIsNotRepeatedAfterA5xx(): void
    {
        $server = $this->serve('unavailable');
        $client = new Client('gp_live_x', $server->url, backoffMs: 1);
        try {
            $client->createTemplate(['slug' => 't', 'subject' => 's', 'html' => 'h']);
            $this->fail('no exception');
        } catch (GatepostException $e) {
            $this->assertSame('storage_unavailable', $e->errorCode);
        }
        $this->assertCount(1, $server->requests());
    }

    public function testAnAnswerThatIsNotJsonIsATypedError(): void
    {
        $server = $this->serve('proxy');
        $this->expectExceptionObject(new GatepostException(GatepostException::INVALID_RESPONSE, 'HTTP 200 with an answer that is not JSON.', 200));
        (new Client('k', $server->url))->getMessage('msg_x');
    }

    public function testAServerThatIsDownIsAConnectionErrorAfterBoundedRetries(): void
    {
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($probe, false);
        fclose($probe); // nothing listens there now
        try {
            (new Client('k', "http://$address", backoffMs: 1))->listTemplates();
            $this->fail('no exception');
        } catch (ConnectionException $e) {
            $this->assertSame([ConnectionException::CODE, 0], [$e->errorCode, $e->status]);
        }
    }

    public function testAnAnswerThatNeverComesTimesOut(): void
    {
        $server = $this->serve('silent');
        try {
            (new Client('k', $server->url, timeout: 0.3, maxAttempts: 1))->getTemplate('t');
            $this->fail('no exception');
        } catch (ConnectionException $e) {
            $this->assertSame(ConnectionException::TIMEOUT, $e->errorCode);
        }
    }

    public function testACsvStreamIsSentAgainWholeAfterA429(): void
    {
        $server = $this->serve('rate-limited-import');
        $csv = fopen('php://memory', 'w+b');
        fwrite($csv, "email\nann@example.com\n");
        rewind($csv);
        $report = (new Client('gp_live_x', $server->url, backoffMs: 1))->importContacts('aud_1', $csv);
        $this->assertSame(1, $report->added);
        $requests = $server->requests();
        $this->assertSame(["email\nann@example.com\n", "email\nann@example.com\n"], array_column($requests, 'body'));
        $this->assertSame(['text/csv', 'text/csv'], array_map(static fn (array $r) => $r['headers']['Content-Type'], $requests));
    }

    public function testACsvThatIsNoFileIsRefusedBeforeAnyRequest(): void
    {
        $server = $this->serve('unavailable');
        try {
            (new Client('gp_live_x', $server->url))->importContacts('aud_1', 42);
            $this->fail('no exception');
        } catch (\InvalidArgumentException $e) {
            $this->assertSame('A CSV is a string or a stream resource.', $e->getMessage());
        }
        $this->assertSame([], $server->requests());
    }
}
