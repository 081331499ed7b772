import { connect } from 'node:net';

/**
 * Bytes written on a socket as they are (no client library resolves a path, completes a body or refuses to send
 * what HTTP does not allow), and the answer once the server closes the connection, split at its blank line.
 */
export function onSocket(
  port: number,
  bytes: string,
): Promise<{ status: number; head: string; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString();
      const at = text.indexOf('\r\n\r\n');
      resolve({
        status: Number(text.slice(9, 12)),
        head: text.slice(0, at),
        body: text.slice(at + 4),
        ms: performance.now() - started,
      });
    });
  });
}
