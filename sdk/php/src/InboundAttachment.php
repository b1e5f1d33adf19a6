<?php

declare(strict_types=1);

namespace Gatepost;

/** An attachment of a received message, downloaded (Client::getInboundAttachment). */
final class InboundAttachment
{
    public function __construct(
        /** As the message named it (characters outside printable ASCII replaced by "_"), or null. */
        public readonly ?string $filename,
        /** As Gatepost serves it: the part's own type. */
        public readonly string $contentType,
        public readonly string $content,
    ) {
    }
}
