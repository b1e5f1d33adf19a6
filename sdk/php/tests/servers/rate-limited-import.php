<?php
// Answers the first request 429 with Retry-After: 0, then a CSV import's report (200).

declare(strict_types=1);

require __DIR__ . '/record.php';
header('Content-Type: application/json');
if (record() === 1) {
    http_response_code(429);
    header('Retry-After: 0');
    echo '{"error":{"code":"rate_limited","message":"Slow down."}}';
    return;
}
echo '{"added":1,"updated":0,"refused_count":0,"refused":[]}';
