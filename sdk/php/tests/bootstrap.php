<?php
// PSR-4 autoloading as composer.json declares it, without Composer's generated autoloader
// (a fresh checkout runs the tests with no install step).

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    foreach (['Gatepost\\Tests\\' => __DIR__ . '/', 'Gatepost\\' => __DIR__ . '/../src/'] as $prefix => $dir) {
        if (str_starts_with($class, $prefix)) {
            $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    }
});
