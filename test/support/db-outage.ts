import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';
import { serve } from '@hono/node-server';
import { buildCellApi } from '@onsale/cell/api/server';
import { CellApiConfig } from '@onsale/cell/config';
import type { TestCell } from './cell';
import { BUYER_AUDIENCE, BUYER_ISSUER, type TestIdentity } from './identity';
import { serviceEnv } from './services';

/**
 * A TCP proxy in front of PostgreSQL (or Redis) for one process's pool: `down()` cuts every connection
 * and refuses new ones, as a network partition or a failed-over writer looks to that process, and `freeze()` keeps
 * every connection open and passes nothing either way until `thaw()`, as a server stopped with SIGSTOP looks,
 * without touching the shared server the other tests use.
 *
 * It is also a cell's writer endpoint, as Aurora's cluster endpoint is one: a fixed address in front of whichever
 * server is the writer. `repoint` after a promotion sends new connections to the new writer and cuts the ones
 * still open to the old (Aurora's DNS moves the name; the pools find out by their connections failing).
 * node-postgres takes one host per URL (no libpq multi-host list with target_session_attrs), so the processes'
 * DATABASE_URL names this endpoint and never a server.
 */
export async function startPgProxy(targetUrl: string) {
  const target = new URL(targetUrl);
  let targetPort = Number(target.port);
  /** Each open connection: the client's socket and the one to the server. */
  const pairs = new Set<[Socket, Socket]>();
  let up = true;
  let frozen = false;
  const cutAll = () => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
  };
  const relay = ([client, upstream]: [Socket, Socket]) => client.pipe(upstream).pipe(client);
  const server = createServer((client) => {
    if (!up) return client.destroy();
    const upstream = connect(targetPort, target.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const close = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    if (!frozen) relay(pair);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const proxied = new URL(targetUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    down() {
      up = false;
      cutAll();
    },
    up() {
      up = true;
    },
    freeze() {
      if (frozen) return;
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream).pause();
        upstream.unpipe(client).pause();
      }
    },
    thaw() {
      // Once: a second pipe would pass every byte twice.
      if (!frozen) return;
      frozen = false;
      for (const pair of pairs) relay(pair);
    },
    /** New connections go to this port of the same host; those open to the old one are cut. */
    repoint(port: number) {
      targetPort = port;
      cutAll();
    },
    close: () =>
      new Promise<void>((r) => {
        cutAll();
        server.close(() => r());
      }),
  };
}

/**
 * A port that accepts connections and never answers: a store stopped with SIGSTOP (a frozen broker, a hung writer),
 * as its clients see it, without freezing the shared servers the other tests use.
 */
export async function startSilentPort() {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket.on('error', () => {}));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  };
}

/** A second API process of the same cell, on another database URL (e.g. through the proxy). */
export async function startCellApiOn(
  cell: TestCell,
  identity: TestIdentity,
  databaseUrl: string,
  env: Record<string, string>,
) {
  const services = serviceEnv();
  const api = buildCellApi(
    CellApiConfig.parse({
      CELL_ID: cell.cellId,
      DATABASE_URL: databaseUrl,
      DB_POOL_SIZE: '5',
      IDENTITY_JWKS_URL: identity.buyerJwksUrl,
      IDENTITY_ISSUER: BUYER_ISSUER,
      IDENTITY_AUDIENCE: BUYER_AUDIENCE,
      ADMISSION_JWKS_URL: identity.admissionJwksUrl,
      CELL_INTERNAL_TOKEN: cell.internalToken,
      REDIS_URL: services.REDIS_URL,
      KAFKA_BROKERS: services.KAFKA_BROKERS,
      LOG_LEVEL: 'warn',
      ...env,
    }),
  );
  const server = serve({ fetch: api.app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => server.once('listening', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((r) => {
        server.close(() => r());
        // The emulator's keep-alive connections would otherwise hold close() open.
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await api.close();
    },
  };
}
