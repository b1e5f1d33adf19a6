<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * A refusal answered by Gatepost: its stable code (docs/errors.md), the HTTP status, the message
 * and, for invalid_request, the fields at fault. Branch on $e->errorCode.
 */
class GatepostException extends \RuntimeException
{
    /** An answer that is not Gatepost's JSON (a proxy's page, a cut body). */
    public const INVALID_RESPONSE = 'invalid_response';

    /**
     * @param list<array{field: string, message: string}> $details
     */
    public function __construct(
        public readonly string $errorCode,
        string $message,
        public readonly int $status,
        public readonly array $details = [],
        /** The Retry-After of a 429 or 503, in seconds; null when absent. */
        public readonly ?int $retryAfter = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $status, $previous);
    }
}
