import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { keepAliveBehindLoadBalancer, LOAD_BALANCER_IDLE_SECONDS } from '../src/runtime/load-balancer';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function listening(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** A keep-alive connection as a load balancer holds one: a request, its answer, then nothing. */
async function connectionAfterOneRequest(port: number) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let closedByServer = false;
  socket.on('data', (chunk) => {
    received += chunk;
  });
  socket.on('end', () => {
    closedByServer = true;
  });
  socket.on('error', () => {});
  const get = async () => {
    const before = received.length;
    socket.write('GET / HTTP/1.1\r\nHost: test\r\nConnection: keep-alive\r\n\r\n');
    const deadline = Date.now() + 2_000;
    while (!received.slice(before).includes('\r\n\r\nok') && Date.now() < deadline && !closedByServer)
      await new Promise((r) => setTimeout(r, 10));
    return received.slice(before);
  };
  expect(await get()).toMatch(/^HTTP\/1\.1 200/);
  return { socket: socket as Socket, get, closedByServer: () => closedByServer };
}

const answer = (_req: unknown, res: { end(body: string): void }) => res.end('ok');

describe('servers behind the load balancer', () => {
  it('keep idle connections for longer than the load balancer does', () => {
    const server = keepAliveBehindLoadBalancer(createServer(answer));
    expect(server.keepAliveTimeout).toBeGreaterThan(LOAD_BALANCER_IDLE_SECONDS * 1000);
    servers.push(server);
  });

  it("still answer on a connection left idle past Node's default keep-alive, which a plain server has closed", async () => {
    const kept = await connectionAfterOneRequest(await listening(keepAliveBehindLoadBalancer(createServer(answer))));
    const plain = await connectionAfterOneRequest(await listening(createServer(answer)));
    // Node closes an idle keep-alive connection 5 s (plus its 1 s grace) after the last answer by default; the load
    // balancer would still send the next request on it.
    await new Promise((r) => setTimeout(r, 7_000));
    expect(plain.closedByServer()).toBe(true);
    expect(kept.closedByServer()).toBe(false);
    expect(await kept.get()).toMatch(/^HTTP\/1\.1 200/);
    kept.socket.destroy();
    plain.socket.destroy();
  }, 20_000);
});
