<?php

declare(strict_types=1);

namespace Gatepost\Tests;

/**
 * A tiny HTTP server for a test: PHP's built-in server (`php -S`) on a loopback port, running a
 * router script from tests/servers/ that keeps what it saw in a directory of its own.
 */
final class LocalServer
{
    public readonly string $url;
    public readonly string $dir;
    /** @var resource */
    private $process;

    public function __construct(string $router)
    {
        $this->dir = sys_get_temp_dir() . '/gatepost-php-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($probe, false);
        fclose($probe);
        $this->url = "http://$address";
        $env = ['SERVER_STATE_DIR' => $this->dir] + getenv();
        $this->process = proc_open(
            [PHP_BINARY, '-S', $address, __DIR__ . "/servers/$router.php"],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            $env,
        );
        // Ready once it accepts a connection (bounded: ten seconds).
        for ($i = 0; $i < 200; $i++) {
            $socket = @stream_socket_client("tcp://$address", $errno, $error, 1);
            if ($socket !== false) {
                fclose($socket);
                return;
            }
            usleep(50_000);
        }
        throw new \RuntimeException("php -S $address did not start");
    }

    /**
     * What the router recorded, oldest first: each request's method, headers and raw body.
     *
     * @return list<array{method: string, headers: array<string, string>, body: string, at: float}>
     */
    public function requests(): array
    {
        $files = glob($this->dir . '/request-*.json') ?: [];
        sort($files);
        return array_map(static function (string $file): array {
            $r = json_decode((string) file_get_contents($file), true);
            $r['body'] = base64_decode($r['body']);
            return $r;
        }, $files);
    }

    public function stop(): void
    {
        proc_terminate($this->process);
        proc_close($this->process);
        array_map('unlink', glob($this->dir . '/*') ?: []);
        rmdir($this->dir);
    }
}
