<?php
// Answers 200 with a page that is not Gatepost's JSON, as a misconfigured proxy would.

declare(strict_types=1);

require __DIR__ . '/record.php';
record();
echo "<html>a proxy's page</html>";
