<?php
// Never answers in time: sleeps longer than any client timeout of the tests.

declare(strict_types=1);

require __DIR__ . '/record.php';
record();
sleep(5);
