import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

/**
 * A cell's writer endpoint, as Aurora's cluster endpoint is one: a fixed address in front of whichever
 * server is the writer. `repoint` after a promotion sends new connections to the new writer and cuts the
 * ones still open to the old (Aurora's DNS moves the name; the pools find out by their connections failing).
 * node-postgres takes one host per URL (no libpq multi-host list with target_session_attrs), so the
 * processes' DATABASE_URL names this endpoint and never a server.
 */
export async function startWriterEndpoint(writerPort: number) {
  let target = writerPort;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    open.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    /** The server URL (no database) the cell's databases are made on. */
    url: `postgres://onsale:onsale@127.0.0.1:${port}`,
    repoint(writer: number) {
      target = writer;
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const socket of open) socket.destroy();
        server.close(() => r());
      }),
  };
}
