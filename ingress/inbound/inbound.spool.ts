// DATA goes to a file in the spool folder as it arrives, never whole into memory on the way or
// into actor state: past the size limit the rest is only counted (smtp-server then marks the
// stream sizeExceeded) and the file is dropped.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import { newId } from '../../lib/ids.ts';

export interface Spooled {
  path: string;
  bytes: number;
  oversized: boolean;
  read(): Promise<Buffer>;
  drop(): Promise<void>;
}

export async function spool(dir: string, stream: Readable & { sizeExceeded?: boolean }, maxBytes: number): Promise<Spooled> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${newId('spl')}.eml`);
  let bytes = 0;
  const capped = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const room = maxBytes - bytes;
      bytes += chunk.length;
      done(null, room > 0 ? chunk.subarray(0, room) : undefined);
    },
  });
  await pipeline(stream, capped, createWriteStream(path, { mode: 0o600 }));
  const drop = () => rm(path, { force: true });
  const oversized = Boolean(stream.sizeExceeded) || bytes > maxBytes;
  if (oversized) await drop();
  return { path, bytes, oversized, read: () => readFile(path), drop };
}
