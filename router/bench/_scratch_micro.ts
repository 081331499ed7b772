import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { percentile } from '../../load-tests/lib/stats';
import { startIdentity } from '../../test/support/identity';
import { routerFor, startFakeControlPlane, startFakeServer } from '../test/fakes';

const identity = await startIdentity();
const up = await startFakeServer(
  (_r, res) => void res.writeHead(202, { 'content-type': 'application/json' }).end('{"ok":true}'),
);
const cp = await startFakeControlPlane();
const ev = randomUUID();
cp.addCell('c1', up.url);
cp.placeEvent(ev, 'c1');
const router = await routerFor(cp, identity.admissionJwksUrl, { UPSTREAM_CONNECTIONS: '64' });
const tokens = await Promise.all(
  Array.from({ length: 2000 }, (_, i) => identity.admissionToken({ sub: `u${i}`, eventId: ev, purchaseCell: 'c1' })),
);
const client = new Agent({ connections: 32 });
async function run(origin: string, n: number, tok: boolean) {
  let next = 0;
  const d: number[] = [];
  const t = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        const r = await request(`${origin}/events/${ev}/holds`, {
          dispatcher: client,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(tok ? { 'x-admission-token': tokens[i % 2000]! } : {}) },
          body: '{"seatIds":["a","b"]}',
        });
        await r.body.dump();
        d.push(performance.now() - t0);
      }
    }),
  );
  return {
    rps: Math.round(n / ((performance.now() - t) / 1000)),
    p50: percentile(d, 50).toFixed(2),
    p99: percentile(d, 99).toFixed(2),
  };
}
for (let k = 0; k < 2; k++) {
  console.log('direct', await run(up.url, 5000, true));
  console.log('router no token', await run(router.url, 5000, false));
  console.log('router token', await run(router.url, 5000, true));
}
await client.close();
await router.close();
await cp.close();
await up.close();
await identity.close();
