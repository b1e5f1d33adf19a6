<?php
// Router for `php -S`: records each request (method, headers, raw body) in SERVER_STATE_DIR, in
// order, and answers with what respond() decides. Included by the routers below.

declare(strict_types=1);

function record(): int
{
    $dir = getenv('SERVER_STATE_DIR');
    $n = count(glob("$dir/request-*.json") ?: []) + 1;
    $request = [
        'method' => $_SERVER['REQUEST_METHOD'],
        'headers' => getallheaders(),
        'body' => base64_encode((string) file_get_contents('php://input')),
        'at' => microtime(true),
    ];
    file_put_contents(sprintf('%s/request-%06d.json', $dir, $n), json_encode($request));
    return $n;
}

/** Records the request; the first is answered 429 with `Retry-After`, as Gatepost does over a tenant's rate (true: answered). */
function rateLimitedFirst(string $retryAfter): bool
{
    header('Content-Type: application/json');
    if (record() !== 1) {
        return false;
    }
    http_response_code(429);
    header("Retry-After: $retryAfter");
    echo '{"error":{"code":"rate_limited","message":"Over the tenant\'s sends per second."}}';
    return true;
}
