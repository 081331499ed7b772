import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

const { router, up, ev } = JSON.parse(readFileSync('/tmp/rbench/info.json', 'utf8'));
const client = new Agent({ connections: 32 });
async function run(origin: string, n: number) {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next++ < n) {
        const r = await request(`${origin}/events/${ev}/holds`, {
          dispatcher: client,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"seatIds":["a","b"]}',
        });
        await r.body.dump();
      }
    }),
  );
  return Math.round(n / ((performance.now() - t) / 1000));
}
console.log('direct(fake, same proc as router)', await run(up, 5000));
console.log('router', await run(router, 20000));
await client.close();
