<?php

declare(strict_types=1);

namespace Gatepost;

/** No answer: the connection failed or the attempt timed out (after the retries). Status 0. */
final class ConnectionException extends GatepostException
{
    public const CODE = 'connection_failed';
    public const TIMEOUT = 'timeout';
}
