<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * Verifying Gatepost's signed delivery receipts, with no call to Gatepost (docs/receipts.md): a
 * receipt is a compact JWS, EdDSA over Ed25519, checked against the operator's JWK Set
 * (GET /.well-known/jwks.json, or Client::jwks()). ext-sodium (bundled with PHP) verifies
 * Ed25519: no JOSE library.
 */
final class Receipt
{
    public const TYP = 'gatepost-receipt+jws';

    /**
     * Checks a receipt's signature against the JWK Set and answers its claims (id, tenant_id,
     * seq, prev, message_id, sha256, envelope, reply, …).
     *
     * @param array{keys: list<array<string, string>>} $jwks
     * @throws ReceiptVerificationException malformed, unknown_key or invalid_signature
     */
    public static function verify(string $jws, array $jwks): array
    {
        $parts = explode('.', $jws);
        if (count($parts) !== 3) {
            throw new ReceiptVerificationException('malformed', 'Not a compact JWS (three base64url parts).');
        }
        [$h, $p, $s] = $parts;
        $header = json_decode(self::base64url($h), true);
        if (!is_array($header) || ($header['alg'] ?? null) !== 'EdDSA' || isset($header['crit'])) {
            throw new ReceiptVerificationException('malformed', 'The JWS header is not JSON with alg "EdDSA".');
        }
        $keys = array_values(array_filter(
            $jwks['keys'] ?? [],
            static fn ($k) => ($k['kid'] ?? null) === ($header['kid'] ?? '') && ($k['kty'] ?? null) === 'OKP' && ($k['crv'] ?? null) === 'Ed25519',
        ));
        $key = count($keys) === 1 ? self::base64url($keys[0]['x'] ?? '') : '';
        if (strlen($key) !== SODIUM_CRYPTO_SIGN_PUBLICKEYBYTES) {
            throw new ReceiptVerificationException('unknown_key', 'The receipt names no single key of the JWK Set.');
        }
        $signature = self::base64url($s);
        if (strlen($signature) !== SODIUM_CRYPTO_SIGN_BYTES || !sodium_crypto_sign_verify_detached($signature, "$h.$p", $key)) {
            throw new ReceiptVerificationException('invalid_signature', 'The receipt signature does not match.');
        }
        if (($header['typ'] ?? null) !== self::TYP) {
            throw new ReceiptVerificationException('malformed', 'Not a receipt: its typ is not "' . self::TYP . '".');
        }
        return self::claims(self::base64url($p));
    }

    /**
     * Verifies each receipt (verify) and the links between them: receipts of one tenant, in
     * order of seq, consecutive, each prev the chain hash of the one before. So a receipt
     * changed, deleted from the middle or moved is found; one removed after the last given
     * cannot be. Answers the claims, in order.
     *
     * @param list<string> $receipts
     * @param array{keys: list<array<string, string>>} $jwks
     * @throws ReceiptVerificationException with the failing receipt's $index
     */
    public static function verifyChain(array $receipts, array $jwks): array
    {
        $out = [];
        $receipts = array_values($receipts);
        foreach ($receipts as $i => $jws) {
            try {
                $claims = self::verify($jws, $jwks);
            } catch (ReceiptVerificationException $e) {
                throw new ReceiptVerificationException($e->reason, "Receipt $i: " . $e->getMessage(), $i);
            }
            $before = $out[$i - 1] ?? null;
            if ($before !== null) {
                [$reason, $message] = match (true) {
                    $claims['tenant_id'] !== $before['tenant_id'] => ['tenant_mismatch', "Receipt $i is of another tenant than receipt " . ($i - 1) . '.'],
                    $claims['seq'] <= $before['seq'] => ['out_of_order', "Receipt $i (seq {$claims['seq']}) comes after seq {$before['seq']}."],
                    $claims['seq'] !== $before['seq'] + 1 => ['sequence_gap', ($claims['seq'] - $before['seq'] - 1) . " receipt(s) missing between seq {$before['seq']} and seq {$claims['seq']}."],
                    $claims['prev'] !== self::hash($receipts[$i - 1]) => ['chain_broken', "Receipt $i does not link to receipt " . ($i - 1) . '.'],
                    default => [null, ''],
                };
                if ($reason !== null) {
                    throw new ReceiptVerificationException($reason, $message, $i);
                }
            }
            $out[] = $claims;
        }
        return $out;
    }

    /** A receipt's chain hash: the lowercase hex SHA-256 of its payload bytes (the next receipt's prev). */
    public static function hash(string $jws): string
    {
        return hash('sha256', self::base64url(explode('.', $jws)[1] ?? ''));
    }

    private static function claims(string $payload): array
    {
        $c = json_decode($payload, true);
        $hex64 = static fn ($v) => is_string($v) && preg_match('/^[0-9a-f]{64}$/', $v) === 1;
        $ok = is_array($c)
            && is_string($c['id'] ?? null) && str_starts_with($c['id'], 'rcp_')
            && is_string($c['tenant_id'] ?? null)
            && is_int($c['seq'] ?? null) && $c['seq'] >= 1
            && array_key_exists('prev', $c) && ($c['prev'] === null || $hex64($c['prev']))
            && (($c['seq'] === 1) === ($c['prev'] === null))
            && $hex64($c['sha256'] ?? null);
        if (!$ok) {
            throw new ReceiptVerificationException('malformed', 'The receipt payload does not have the fields of a receipt.');
        }
        return $c;
    }

    /** Decodes unpadded base64url; '' for what is not. */
    private static function base64url(string $text): string
    {
        if (!preg_match('/^[A-Za-z0-9_-]*$/', $text)) {
            return '';
        }
        return (string) base64_decode(strtr($text, '-_', '+/'), true);
    }
}
