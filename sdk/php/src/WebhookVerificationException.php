<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * Why a webhook delivery is refused: $reason is missing_signature, malformed_signature,
 * timestamp_out_of_tolerance, no_matching_signature or invalid_payload.
 */
final class WebhookVerificationException extends \RuntimeException
{
    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }
}
