<?php
// A webhook receiver: records each delivery and acknowledges it (204).

declare(strict_types=1);

require __DIR__ . '/record.php';
record();
http_response_code(204);
