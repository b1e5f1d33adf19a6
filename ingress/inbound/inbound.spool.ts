// DATA as it arrives: a message is held in memory until it passes SPOOL_AFTER bytes, and from
// there streamed to a file in the spool folder (as Haraka's `spool_after` does), so many slow
// senders of large messages hold little memory while they send. Past the size limit the rest is
// only counted (smtp-server then marks the stream sizeExceeded) and nothing is kept.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { newId } from '../../lib/ids.ts';

/**
 * Messages up to this size stay in memory. A spool file cost each message five file-system
 * calls on libuv's four threads (open, write, close, read back, unlink); most mail is far
 * smaller than this.
 */
export const SPOOL_AFTER = 1024 * 1024;

export interface Spooled {
  bytes: number;
  oversized: boolean;
  /** The whole message; read back from its file when it was spooled. */
  read(): Promise<Buffer>;
  /** Removes its file, if it has one. */
  drop(): Promise<void>;
}

/** Holds chunks until `after` bytes, then writes them and the rest to a file at `path`. */
class SpoolSink extends Writable {
  bytes = 0;
  private chunks: Buffer[] = [];
  private file: WriteStream | null = null;

  constructor(
    private readonly path: string,
    private readonly maxBytes: number,
    private readonly after: number,
  ) {
    super();
  }

  get spooled(): boolean {
    return this.file !== null;
  }

  whole(): Buffer {
    return Buffer.concat(this.chunks, this.bytes);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const room = this.maxBytes - this.bytes;
    this.bytes += chunk.length;
    if (room <= 0) return done();
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (!this.file && this.bytes <= this.after) {
      this.chunks.push(part);
      return done();
    }
    if (this.file) return void (this.file.write(part) ? done() : this.file.once('drain', () => done()));
    mkdir(join(this.path, '..'), { recursive: true, mode: 0o700 }).then(() => {
      const file = (this.file = createWriteStream(this.path, { mode: 0o600 }));
      file.on('error', (error) => this.destroy(error));
      for (const held of this.chunks) file.write(held);
      this.chunks = [];
      if (file.write(part)) done();
      else file.once('drain', () => done());
    }, done);
  }

  override _final(done: (error?: Error | null) => void): void {
    if (!this.file) return done();
    this.file.end(() => done());
  }
}

export async function spool(
  dir: string,
  stream: Readable & { sizeExceeded?: boolean },
  maxBytes: number,
  after = SPOOL_AFTER,
): Promise<Spooled> {
  const path = join(dir, `${newId('spl')}.eml`);
  const sink = new SpoolSink(path, maxBytes, after);
  const drop = () => (sink.spooled ? rm(path, { force: true }) : Promise.resolve());
  try {
    await pipeline(stream, sink);
  } catch (error) {
    await drop();
    throw error;
  }
  const oversized = Boolean(stream.sizeExceeded) || sink.bytes > maxBytes;
  if (oversized) await drop();
  return {
    bytes: sink.bytes,
    oversized,
    read: () => (sink.spooled ? readFile(path) : Promise.resolve(sink.whole())),
    drop,
  };
}
