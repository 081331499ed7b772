import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
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
writeFileSync('/tmp/rbench/info.json', JSON.stringify({ router: router.url, up: up.url, ev }));
setTimeout(async () => {
  await router.close();
  await cp.close();
  await up.close();
  await identity.close();
  process.exit(0);
}, 12000);
