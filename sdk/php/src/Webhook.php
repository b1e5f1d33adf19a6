<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * Verifying a webhook delivery on the receiving side, with no call to Gatepost
 * (docs/webhooks.md, "The signature, byte for byte"):
 *
 *   x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]
 *   v1 = hex(HMAC-SHA256(key = the secret as given, "whsec_…"; message = "<t>.<raw body>"))
 *
 * Several v1 values appear while a secret rotates: any one matching any secret is enough. A
 * timestamp more than the tolerance (five minutes) from now is refused, so a captured delivery
 * cannot be replayed later.
 */
final class Webhook
{
    public const SIGNATURE_HEADER = 'x-service-signature';
    public const DEFAULT_TOLERANCE = 300;

    /** Hex HMAC-SHA256 of "<t>.<payload>" under $secret: what v1 holds. */
    public static function computeSignature(string $secret, int $timestamp, string $payload): string
    {
        return hash_hmac('sha256', $timestamp . '.' . $payload, $secret);
    }

    /**
     * Checks a delivery and answers the event it carries (id, type, created_at, data).
     *
     * @param string $payload the raw request body, byte for byte (file_get_contents('php://input'))
     * @param array<string, string|list<string>> $headers the request headers (getallheaders()), any case
     * @param string|list<string> $secret the endpoint secret, or the old and the new while rotating
     * @param int|null $now the time to check against, in Unix seconds (tests); default now
     * @throws WebhookVerificationException
     */
    public static function verify(string $payload, array $headers, string|array $secret, int $tolerance = self::DEFAULT_TOLERANCE, ?int $now = null): array
    {
        $value = self::header($headers, self::SIGNATURE_HEADER);
        if ($value === null || $value === '') {
            throw new WebhookVerificationException('missing_signature', 'No ' . self::SIGNATURE_HEADER . ' header.');
        }
        $t = null;
        $given = [];
        foreach (explode(',', $value) as $part) {
            [$k, $v] = array_map('trim', explode('=', $part, 2)) + [1 => ''];
            if ($k === 't' && ctype_digit($v)) {
                $t = (int) $v;
            } elseif ($k === 'v1' && preg_match('/^[0-9a-f]{64}$/', $v)) {
                $given[] = $v;
            }
        }
        if ($t === null || $given === []) {
            throw new WebhookVerificationException('malformed_signature', self::SIGNATURE_HEADER . ' must be "t=<unix>,v1=<hex>[,v1=<hex>]".');
        }
        if (abs(($now ?? time()) - $t) > $tolerance) {
            throw new WebhookVerificationException('timestamp_out_of_tolerance', "The timestamp $t is more than $tolerance s from now.");
        }
        $match = false;
        // Every pair is compared (no early exit), each in constant time.
        foreach ((array) $secret as $s) {
            $expected = self::computeSignature($s, $t, $payload);
            foreach ($given as $v1) {
                $match = hash_equals($expected, $v1) || $match;
            }
        }
        if (!$match) {
            throw new WebhookVerificationException('no_matching_signature', 'No v1 signature matches the secret.');
        }
        $event = json_decode($payload, true);
        if (!is_array($event)) {
            throw new WebhookVerificationException('invalid_payload', 'The signed payload is not JSON.');
        }
        return $event;
    }

    /** @param array<string, string|list<string>> $headers */
    private static function header(array $headers, string $name): ?string
    {
        foreach ($headers as $key => $value) {
            if (strtolower((string) $key) === $name) {
                return is_array($value) ? implode(',', $value) : $value;
            }
        }
        return null;
    }
}
