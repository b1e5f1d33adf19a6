<?php

declare(strict_types=1);

namespace Gatepost;

/**
 * A request body sent as it is (a CSV file), not as JSON: a string, or a stream read from where
 * it stands. A stream that can seek is rewound for a retry; one that cannot (a pipe) is sent
 * once, chunked.
 *
 * @internal
 */
final class Upload
{
    private ?int $start = null;

    /** @param string|resource $data */
    public function __construct(public readonly string $contentType, private readonly mixed $data)
    {
        if (!is_string($data)) {
            if (!is_resource($data)) {
                throw new \InvalidArgumentException('A CSV is a string or a stream resource.');
            }
            if (stream_get_meta_data($data)['seekable']) {
                $this->start = (int) ftell($data);
            }
        }
    }

    public function replayable(): bool
    {
        return is_string($this->data) || $this->start !== null;
    }

    /**
     * The curl options that send it, its stream rewound first.
     *
     * @return array<int, mixed>
     */
    public function curlOptions(): array
    {
        if (is_string($this->data)) {
            return [CURLOPT_POSTFIELDS => $this->data];
        }
        // Read through PHP's stream, not CURLOPT_INFILE: curl's copy of a stream's position does not
        // follow an fseek, so a retry would send nothing.
        $stream = $this->data;
        $options = [CURLOPT_UPLOAD => true, CURLOPT_READFUNCTION => static fn ($curl, $in, int $length): string => (string) fread($stream, $length)];
        if ($this->start !== null) {
            fseek($this->data, $this->start);
            $options[CURLOPT_INFILESIZE] = fstat($this->data)['size'] - $this->start;
        }
        return $options;
    }
}
