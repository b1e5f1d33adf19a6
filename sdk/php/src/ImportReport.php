<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * What a CSV import did: rows added and updated (by email), and those refused ($refused lists the
 * first 100; $refusedCount counts them all).
 */
final class ImportReport
{
    /** @param list<RefusedRow> $refused */
    public function __construct(
        public readonly int $added,
        public readonly int $updated,
        public readonly int $refusedCount,
        public readonly array $refused,
    ) {
    }

    /** @param array<string, mixed> $answer the API's JSON */
    public static function fromAnswer(array $answer): self
    {
        $refused = array_map(
            static fn (array $r): RefusedRow => new RefusedRow((int) $r['row'], (string) $r['email'], (string) $r['reason']),
            $answer['refused'],
        );
        return new self((int) $answer['added'], (int) $answer['updated'], (int) $answer['refused_count'], $refused);
    }
}
