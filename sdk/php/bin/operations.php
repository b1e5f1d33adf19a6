#!/usr/bin/env php
<?php
// Prints the SDK's table of API operations as JSON: php bin/operations.php

declare(strict_types=1);

require __DIR__ . '/../src/Operations.php';

echo json_encode(Gatepost\Operations::all(), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
