<?php
// Answers the first request 429 with Retry-After: 0, then a CSV import's report (200).

declare(strict_types=1);

require __DIR__ . '/record.php';
if (rateLimitedFirst('0')) {
    return;
}
echo '{"added":1,"updated":0,"refused_count":0,"refused":[]}';
