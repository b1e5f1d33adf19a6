<?php
// Answers the first request 429 with Retry-After: 1, as Gatepost does over a tenant's rate,
// then accepts a send (202).

declare(strict_types=1);

require __DIR__ . '/record.php';
if (rateLimitedFirst('1')) {
    return;
}
http_response_code(202);
echo '{"id":"msg_retried","status":"queued","to":"a@example.com","created_at":"2026-01-01T00:00:00.000Z","send_at":null,"sandbox":true}';
