import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceFileSpan } from '../../scripts/local-platform/trace-file';
import { eventually } from '../support/kafka';
import { ownServers } from '../support/own-servers';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { repoRoot } from '../support/services';
import { shopper } from '../support/shopper';

/**
 * Every process of the local platform scraped by a real Prometheus, with the repository's alert
 * rules; the outbox alert's window shortened (30 s → 5 s, 1 m → 4 s) so a 30-second broker
 * outage can be watched firing and resolving within a test. The broker is the file's own, so the outage touches
 * no other file's platform.
 */
let t: TestPlatform;
const broker = ownServers('observability', { kafka: 18292 });
const rules = resolve(repoRoot, `.data/e2e/rules-${randomUUID().slice(0, 8)}/alerts.yml`);
/** Every process's spans, as the launcher's trace collector writes them (scripts/local-platform/trace-file.ts). */
const tracesFile = resolve(rules, '../traces.ndjson');

beforeAll(async () => {
  const source = readFileSync(resolve(repoRoot, 'ops/prometheus/alerts.yml'), 'utf8');
  const short = source.replace(
    'max by (cell) (onsale_outbox_oldest_unpublished_age_seconds) > 30\n        for: 1m',
    'max by (cell) (onsale_outbox_oldest_unpublished_age_seconds) > 5\n        for: 4s',
  );
  expect(short).not.toBe(source);
  mkdirSync(resolve(rules, '..'), { recursive: true });
  writeFileSync(rules, short);
  await broker.services('start', 'kafka');
  t = await startTestPlatform({
    seatsPerEvent: 40,
    maxReleaseRate: 50,
    prometheus: { ruleFiles: [rules] },
    traces: { file: tracesFile },
    servers: { kafkaBrokers: broker.kafkaBrokers },
  });
}, 240_000);
afterAll(async () => {
  await t?.stop();
  await broker.remove();
});

async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${t.platform.urls.prometheus}/api/v1/query?query=${encodeURIComponent(expr)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } })
    .data.result;
}
const scalar = async (expr: string) => Number((await query(expr))[0]?.value[1] ?? 0);
async function alertState(name: string): Promise<string | null> {
  const res = await fetch(`${t.platform.urls.prometheus}/api/v1/alerts`);
  const body = (await res.json()) as { data: { alerts: { labels: { alertname: string }; state: string }[] } };
  return body.data.alerts.find((a) => a.labels.alertname === name)?.state ?? null;
}

describe('metrics and alerts on the local platform, through a real Prometheus', () => {
  it('scrapes every process: the cell API, its workers, the control plane and the router', async () => {
    // 2 cells × (API + 7 workers, the notifier included), the control plane's API and worker, the router.
    const up = await eventually(
      async () => {
        const rows = await query('up == 1');
        return rows.length === 19 ? rows : null;
      },
      'Prometheus to scrape all 19 processes',
      60_000,
      1_000,
    );
    expect([...new Set(up.map((r) => r.metric.job))].sort()).toEqual([
      'cell-api',
      'cell-worker',
      'control-plane',
      'router',
    ]);
    expect(await query('up == 0')).toEqual([]);
    // The router is scraped on its health port; the port buyers reach serves no metrics.
    expect(up.filter((r) => r.metric.job === 'router').map((r) => r.metric.instance)).toEqual([
      new URL(t.platform.urls.routerMetrics).host,
    ]);
    expect((await fetch(`${t.platform.urls.router}/metrics`)).status).toBe(404);
  });

  it('a purchase moves the counters of the cell API, the saga, payments and tickets, the control plane and the router', async () => {
    const event = t.demo.events[0]!;
    const cell = event.cellId;
    const buyer = await shopper(t.platform, event.eventId, 'metrics-buyer');
    await buyer.admit();
    const seats = (
      (await (await fetch(`${t.platform.urls.router}/events/${event.eventId}/availability`)).json()) as {
        availableSeatIds: string[];
      }
    ).availableSeatIds.slice(0, 2);
    const res = await buyer.hold(seats, randomUUID());
    expect(res.status).toBe(202);
    const { orderId } = (await res.json()) as { orderId: string };
    await buyer.pay(orderId, 'pm_card_visa');
    expect((await buyer.until(orderId, ['ticketed'])).status).toBe('ticketed');

    const expectations: [string, string][] = [
      ['cell API: holds placed', `sum(onsale_holds_placed_total{cell="${cell}", role="api"})`],
      [
        'cell API: the hold route',
        `sum(onsale_http_requests_total{cell="${cell}", route="/events/:eventId/holds", status="202"})`,
      ],
      ['cell API: webhooks recorded', `sum(onsale_webhooks_total{cell="${cell}", outcome="recorded"})`],
      ['relay: published', `sum(onsale_relay_published_total{cell="${cell}"})`],
      ['saga: confirmed', `sum(onsale_order_transitions_total{cell="${cell}", role="saga", to="confirmed"})`],
      ['saga: ticketed', `sum(onsale_order_transitions_total{cell="${cell}", role="saga", to="ticketed"})`],
      [
        'payments: captured at Stripe',
        `sum(onsale_stripe_calls_total{cell="${cell}", operation="payment_intents.capture", outcome="ok"})`,
      ],
      [
        'control plane: tokens minted',
        'sum(onsale_admission_tokens_total{role="control-plane-api", outcome="minted"})',
      ],
      ['control plane: buyers admitted', `sum(onsale_admitted_total{event="${event.eventId}"})`],
      ['router: requests to the cell', `sum(router_requests_total{cell="${cell}"})`],
    ];
    for (const [what, expr] of expectations) {
      const value = await eventually(async () => (await scalar(expr)) || null, what, 30_000, 500);
      expect({ what, positive: value > 0 }).toEqual({ what, positive: true });
    }
    // The invariant the oversell alert watches: present and zero.
    expect(await query(`onsale_oversell_total{cell="${cell}", role="ticket-issuer"}`)).toHaveLength(1);
    expect(await scalar(`sum(onsale_oversell_total{cell="${cell}"})`)).toBe(0);
  });

  it('one purchase is one trace in the trace file: router, cell API, relay, saga, payments with its Stripe calls, tickets', async () => {
    const event = t.demo.events[0]!;
    const buyer = await shopper(t.platform, event.eventId, 'traced-buyer');
    await buyer.admit();
    const seats = (
      (await (await fetch(`${t.platform.urls.router}/events/${event.eventId}/availability`)).json()) as {
        availableSeatIds: string[];
      }
    ).availableSeatIds.slice(0, 1);
    const res = await buyer.hold(seats, randomUUID());
    expect(res.status).toBe(202);
    const { orderId } = (await res.json()) as { orderId: string };
    await buyer.pay(orderId, 'pm_card_visa');
    expect((await buyer.until(orderId, ['ticketed'])).status).toBe('ticketed');

    const spans = () =>
      readFileSync(tracesFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as TraceFileSpan);
    // Each process exports in batches (5 s by default), so a span may be in the file before its parent: wait until
    // the ticket issuer's span of this order leads, parent by parent, to a span with none.
    const { trace, root } = await eventually(
      async () => {
        const all = spans();
        const issued = all.find((s) => s.service === 'ticket-issuer' && s.attributes['onsale.order_id'] === orderId);
        if (!issued) return null;
        const trace = all.filter((s) => s.traceId === issued.traceId);
        const byId = new Map(trace.map((s) => [s.spanId, s]));
        let at = issued;
        for (let parent = byId.get(at.parentSpanId ?? ''); parent; parent = byId.get(at.parentSpanId ?? ''))
          at = parent;
        return at.parentSpanId ? null : { trace, root: at };
      },
      "the ticket issuer's span and every ancestor of it in the trace file",
      30_000,
      500,
    );
    // The trace starts at the router's request, which forwarded the hold to the cell.
    expect(root.service).toBe('router');
    expect(root.name).toMatch(/^router\.forward/);
    const services = new Set(trace.map((s) => s.service));
    for (const service of ['router', 'api', 'outbox-relay', 'saga', 'payments', 'ticket-issuer'])
      expect({ service, inTrace: services.has(service) }).toEqual({ service, inTrace: true });
    const names = trace.map((s) => `${s.service}: ${s.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'api: POST /events/:eventId/holds',
        'outbox-relay: relay.publish HoldCreated',
        'payments: stripe payment_intents.create',
        'payments: stripe payment_intents.capture',
      ]),
    );
    // Every span the processes wrote about this order is in this one trace.
    const orderSpans = spans().filter((s) => s.attributes['onsale.order_id'] === orderId);
    expect(orderSpans.length).toBeGreaterThan(5);
    for (const s of orderSpans)
      expect({ span: s.name, traceId: s.traceId }).toEqual({ span: s.name, traceId: root.traceId });
  });

  it('no label carries an order, user, seat or hold id: the series count stays bounded after a load', async () => {
    const event = t.demo.events[1]!;
    const buyers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => shopper(t.platform, event.eventId, `load-${i}`)),
    );
    await Promise.all(buyers.map((b) => b.admit()));
    const seats = (
      (await (await fetch(`${t.platform.urls.router}/events/${event.eventId}/availability`)).json()) as {
        availableSeatIds: string[];
      }
    ).availableSeatIds;
    const orders = await Promise.all(buyers.map((b, i) => b.hold([seats[i]!], randomUUID())));
    for (const r of orders) expect(r.status).toBe(202);

    await new Promise((r) => setTimeout(r, 5_000));
    const series = await query('{__name__=~"onsale_.+"}');
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
    const eventIds = new Set(t.demo.events.map((e) => e.eventId));
    for (const s of series) {
      for (const [label, value] of Object.entries(s.metric)) {
        // Event ids are the one bounded id a label may carry (a cell sells tens of events).
        if (label === 'event') expect(eventIds.has(value) || value === 'unknown').toBe(true);
        else expect({ label, value, id: uuid.test(value) }).toEqual({ label, value, id: false });
      }
    }
    const before = series.length;
    const more = await Promise.all(
      Array.from({ length: 8 }, (_, i) => shopper(t.platform, event.eventId, `load-more-${i}`)),
    );
    await Promise.all(more.map((b) => b.admit()));
    for (const [i, b] of more.entries()) expect((await b.hold([seats[8 + i]!], randomUUID())).status).toBe(202);
    await new Promise((r) => setTimeout(r, 5_000));
    // Eight more buyers and orders: fewer than eight more series (a label per order would add at least
    // one per order and metric; a retry or a rejoin may add its own bounded series).
    expect((await query('{__name__=~"onsale_.+"}')).length - before).toBeLessThan(8);
  });

  it('Kafka stopped for 30 s during holds: the outbox alert fires, and resolves once the broker is back', async () => {
    const event = t.demo.events[0]!;
    const seats = (
      (await (await fetch(`${t.platform.urls.router}/events/${event.eventId}/availability`)).json()) as {
        availableSeatIds: string[];
      }
    ).availableSeatIds;
    const buyers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => shopper(t.platform, event.eventId, `outage-${i}`)),
    );
    await Promise.all(buyers.map((b) => b.admit()));
    expect(await alertState('OutboxDeliveryStalled')).toBeNull();

    await broker.services('stop', 'kafka');
    const stoppedAt = Date.now();
    try {
      for (const [i, b] of buyers.entries()) {
        expect((await b.hold([seats[i]!], randomUUID())).status).toBe(202);
        await new Promise((r) => setTimeout(r, 2_000));
      }
      await eventually(
        async () => (await alertState('OutboxDeliveryStalled')) === 'firing',
        'the alert to fire',
        40_000,
        1_000,
      );
      const remaining = 30_000 - (Date.now() - stoppedAt);
      if (remaining > 0) await new Promise((r) => setTimeout(r, remaining));
    } finally {
      await broker.services('start', 'kafka');
    }
    await eventually(
      async () => (await alertState('OutboxDeliveryStalled')) === null,
      'the alert to resolve',
      120_000,
      1_000,
    );
    expect(await scalar('max(onsale_outbox_oldest_unpublished_age_seconds)')).toBeLessThan(5);
  }, 300_000);
});
