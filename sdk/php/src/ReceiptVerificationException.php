<?php

declare(strict_types=1);

namespace Gatepost;

/** Why a receipt is refused: $reason is malformed, unknown_key or invalid_signature. */
final class ReceiptVerificationException extends \RuntimeException
{
    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }
}
