/**
 * The platform's main job on this machine: `bash scripts/platform up` (services first, then
 * this). Starts everything, seeds a demo tenant with an event on each cell, prints where each
 * part listens and how to try a purchase, and stops everything on Ctrl-C or SIGTERM.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { resumeDemo, seedDemo } from './demo';
import { repoRoot, startPlatform } from './launch';
import { servicesFrom } from './services';
import { defaultStateFile } from './status';
import { cellStores, manifestCellIds } from './topology';

const env = process.env;
const need = (name: string) => {
  const v = env[name];
  if (!v)
    throw new Error(`${name} is not set: start through "bash scripts/platform up", which sources .data/services.env`);
  return v;
};

const cellIds = manifestCellIds();
const platform = await startPlatform({
  // The manifest's cells, each on its own PostgreSQL server, Redis and Kafka broker, as in the stacks
  // (scripts/services starts them).
  cells: cellIds.map((id) => {
    const { databaseUrl, redisUrl, kafkaBrokers } = cellStores(id);
    return { id, databaseUrl, redisUrl, kafkaBrokers };
  }),
  controlPlaneDatabaseUrl: need('DATABASE_URL_CONTROL_PLANE'),
  services: servicesFrom(need),
  logDir: resolve(repoRoot, '.data/platform/logs'),
  ports: { router: 8080, controlPlane: 4000, identity: 4100, stripe: 12111, cells: cellIds.map((_, i) => 8101 + i) },
  stateFile: defaultStateFile,
  secretsFile: resolve(repoRoot, '.data/platform/secrets.json'),
  prometheus: { port: 9090 },
});

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping the platform…');
  await platform.stop();
  rmSync(defaultStateFile, { force: true });
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

// A second start keeps the demo the first one seeded (its tenant, events, orders and tickets).
const demoFile = resolve(repoRoot, '.data/platform/demo.json');
const seed = async () => {
  const seeded = existsSync(demoFile) ? await resumeDemo(platform, JSON.parse(readFileSync(demoFile, 'utf8'))) : null;
  if (seeded) return seeded;
  const fresh = await seedDemo(platform, { seatsPerEvent: 2_000, maxReleaseRate: 20 });
  writeFileSync(demoFile, JSON.stringify({ tenantId: fresh.tenantId, events: fresh.events }, null, 2));
  return fresh;
};
const demo = await seed().catch(async (err) => {
  console.error(err);
  await platform.stop();
  process.exit(1);
});
const promoterLogin = { username: 'demo-promoter', password: 'demo-promoter' };
const registered = await fetch(`${platform.urls.identity}/users`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ ...promoterLogin, sub: 'promoter-demo', tenantId: demo.tenantId, role: 'owner' }),
});
if (!registered.ok) throw new Error(`dev identity /users: ${registered.status} ${await registered.text()}`);
const [first] = demo.events;
const r = platform.urls.router;
console.log(`
The onsale platform is running.

  edge router (buyers, webhooks)  ${r}
  promoter console                ${r}/console   sign in as ${promoterLogin.username} / ${promoterLogin.password} (owner of the demo tenant)
  prometheus (metrics, alerts)    ${platform.urls.prometheus}   rules: ops/prometheus/alerts.yml
  edge router's own metrics       ${platform.urls.routerMetrics}
  control plane (console, room)   ${platform.urls.controlPlane}   OpenAPI: ${platform.urls.controlPlane}/openapi.json
  sales API (reporting)           ${platform.urls.controlPlane}/events/{eventId}/sales/summary | timeline | sections | settlement.csv
  reporting facts (Parquet, S3)   ${env.S3_ENDPOINT}/${env.S3_BUCKET}/facts/   rebuild: source .data/services.env; pnpm --filter @onsale/reporting rebuild
${platform.cells.map((c) => `  ${c.id.padEnd(31)} ${c.url}   OpenAPI: ${c.url}/openapi.json`).join('\n')}
  stripe emulator                 ${platform.urls.stripe}
  buyers' mail (local SMTP)       ${env.SMTP_MAILBOX_URL}/messages?to=ADDRESS   (SMTP ${env.SMTP_URL})
  dev identity issuer             ${platform.urls.identity}
  logs                            .data/platform/logs/
  processes, restarts, health     bash scripts/platform status

Demo tenant ${demo.tenantId}:
${demo.events.map((e) => `  ${e.name}: event ${e.eventId} on ${e.cellId} (${e.seats} seats)`).join('\n')}

Run a whole purchase as a buyer, step by step:
  pnpm demo:purchase

See how the demo event sells (as its promoter; the numbers follow within seconds):
  P=$(curl -s -XPOST ${platform.urls.identity}/tokens -H 'content-type: application/json' \\
       -d '{"kind":"promoter","sub":"promoter-demo","tenantId":"${demo.tenantId}","role":"owner"}' | jq -r .token)
  curl -s ${platform.urls.controlPlane}/events/${first!.eventId}/sales/summary -H "authorization: Bearer $P"; echo
  curl -s ${platform.urls.controlPlane}/events/${first!.eventId}/sales/settlement.csv -H "authorization: Bearer $P"

Or by hand with curl and jq (through the router):
  B=$(curl -s -XPOST ${platform.urls.identity}/tokens -H 'content-type: application/json' -d '{"kind":"buyer","sub":"me"}' | jq -r .token)
  E=${first!.eventId}
  curl -s -XPOST ${r}/events/$E/queue -H "authorization: Bearer $B"; echo
  curl -s ${r}/events/$E/queue/me -H "authorization: Bearer $B"; echo          # repeat until admission.token appears
  A=$(curl -s ${r}/events/$E/queue/me -H "authorization: Bearer $B" | jq -r .admission.token)
  S=$(curl -s ${r}/events/$E/availability | jq -r '.availableSeatIds[0]')
  curl -s -XPOST ${r}/events/$E/holds -H "authorization: Bearer $B" -H "x-admission-token: $A" \\
       -H "idempotency-key: try-$(date +%s)" -H 'content-type: application/json' -d "{\\"seatIds\\":[\\"$S\\"]}"; echo
  curl -s ${r}/events/$E/orders/<orderId> -H "authorization: Bearer $B"; echo   # payment.paymentIntentId and payment.clientSecret
  curl -s -XPOST ${platform.urls.stripe}/v1/payment_intents/<paymentIntentId>/confirm -u pk_test_onsale_local: \\
       -d client_secret=<clientSecret> -d payment_method=pm_card_visa; echo    # as Stripe.js does: publishable key + client secret
  curl -s ${r}/events/$E/orders/<orderId> -H "authorization: Bearer $B"; echo   # ticketed, with signed tickets

Ctrl-C stops everything this started (and the services, if this command started them).
`);
