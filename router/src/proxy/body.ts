import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';

/** The declared body length, when the client declared one. */
export function declaredLength(incoming: IncomingMessage): number | undefined {
  const value = incoming.headers['content-length'];
  return value === undefined ? undefined : Number(value);
}

export function hasBody(incoming: IncomingMessage): boolean {
  const length = declaredLength(incoming);
  return (length !== undefined && length > 0) || incoming.headers['transfer-encoding'] !== undefined;
}

/**
 * Streams a request body through while counting it: a chunked body declares no length, so the cap is enforced on the
 * bytes themselves and the upstream request is aborted the moment it is passed.
 */
export class CappedBody extends Transform {
  exceeded = false;
  #seen = 0;

  constructor(private readonly max: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.max) {
      this.exceeded = true;
      done(new Error('request body exceeds the cap'));
      return;
    }
    done(null, chunk);
  }
}

/** Reads a whole body as raw bytes (for Stripe webhooks, whose signature covers them exactly); null past the cap. */
export async function readCapped(incoming: IncomingMessage, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let seen = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    seen += chunk.length;
    if (seen > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, seen);
}
