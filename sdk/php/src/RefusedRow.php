<?php

declare(strict_types=1);

namespace Gatepost;

/** A row a CSV import refused: its number (the header is row 1), its email and why. */
final class RefusedRow
{
    public function __construct(
        public readonly int $row,
        public readonly string $email,
        public readonly string $reason,
    ) {
    }
}
