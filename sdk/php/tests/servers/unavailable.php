<?php
// Answers every request 503 storage_unavailable.

declare(strict_types=1);

require __DIR__ . '/record.php';
record();
http_response_code(503);
header('Content-Type: application/json');
echo '{"error":{"code":"storage_unavailable","message":"The message store cannot commit."}}';
