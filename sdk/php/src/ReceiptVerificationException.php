<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * Why a receipt is refused: $reason is malformed, unknown_key or invalid_signature; of a chain
 * (Receipt::verifyChain), also tenant_mismatch, out_of_order, sequence_gap or chain_broken, with
 * the $index of the receipt that failed.
 */
final class ReceiptVerificationException extends \RuntimeException
{
    public function __construct(public readonly string $reason, string $message, public readonly ?int $index = null)
    {
        parent::__construct($message);
    }
}
