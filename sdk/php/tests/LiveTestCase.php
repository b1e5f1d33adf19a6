<?php

declare(strict_types=1);

namespace Gatepost\Tests;

use Gatepost\Client;
use Gatepost\GatepostException;
use PHPUnit\Framework\TestCase;

/**
 * A test against a running Gatepost: GATEPOST_URL, GATEPOST_LIVE_KEY and GATEPOST_SANDBOX_KEY
 * name it (sdk/php/php.sdk.test.ts starts one with an SMTP relay and sets them).
 */
abstract class LiveTestCase extends TestCase
{
    protected static string $url;
    protected Client $live;
    protected Client $sandbox;

    protected function setUp(): void
    {
        $url = getenv('GATEPOST_URL');
        $live = getenv('GATEPOST_LIVE_KEY');
        $sandbox = getenv('GATEPOST_SANDBOX_KEY');
        if (!$url || !$live || !$sandbox) {
            $this->fail('Set GATEPOST_URL, GATEPOST_LIVE_KEY and GATEPOST_SANDBOX_KEY to a running Gatepost and a tenant\'s keys.');
        }
        self::$url = $url;
        $this->live = new Client($live, $url);
        $this->sandbox = new Client($sandbox, $url);
    }

    protected static function unique(string $prefix): string
    {
        return $prefix . bin2hex(random_bytes(6));
    }

    /** Runs $call and answers the GatepostException it throws, having checked its status and code. */
    protected function refusal(int $status, string $code, callable $call): GatepostException
    {
        try {
            $call();
        } catch (GatepostException $e) {
            $this->assertSame([$status, $code], [$e->status, $e->errorCode], $e->getMessage());
            return $e;
        }
        $this->fail("no $status $code");
    }
}
