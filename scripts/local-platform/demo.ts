import type { Platform } from './launch';

export async function devToken(
  identityUrl: string,
  body:
    | { kind: 'buyer'; sub: string; email?: string }
    | { kind: 'operator'; sub: string }
    | { kind: 'promoter'; sub: string; tenantId: string; role: string },
): Promise<string> {
  const res = await fetch(`${identityUrl}/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`dev identity: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

export async function call<T>(base: string, method: string, path: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export interface DemoEvent {
  eventId: string;
  cellId: string;
  name: string;
  seats: number;
}

/** A seat map of `seats` seats in sections of 500, rows of 25, two price tiers. */
export function demoSeatMap(seats: number) {
  return {
    tiers: [
      { code: 'floor', name: 'Floor', price: 9_500, currency: 'eur' },
      { code: 'stand', name: 'Stand', price: 5_500, currency: 'eur' },
    ],
    seats: Array.from({ length: seats }, (_, i) => ({
      section: `S${Math.floor(i / 500) + 1}`,
      row: `R${Math.floor((i % 500) / 25) + 1}`,
      label: `S${Math.floor(i / 500) + 1}-R${Math.floor((i % 500) / 25) + 1}-${(i % 25) + 1}`,
      tier: i < seats / 4 ? 'floor' : 'stand',
    })),
  };
}

/** The operator registers the platform's cells; a platform started again on the same databases points them here. */
async function registerCells(platform: Platform): Promise<string> {
  const cp = platform.urls.controlPlane;
  const operator = await devToken(platform.urls.identity, { kind: 'operator', sub: 'platform-operator' });
  for (const cell of platform.cells) {
    const registered = await fetch(`${cp}/operator/cells`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: cell.id,
        baseUrl: cell.url,
        region: 'local',
        capacity: 100,
        kafkaBrokers: cell.kafkaBrokers,
        kafkaAuth: 'plaintext',
      }),
    });
    if (registered.status === 409) {
      await call(cp, 'PATCH', `/operator/cells/${cell.id}`, operator, {
        baseUrl: cell.url,
        status: 'active',
        kafkaBrokers: cell.kafkaBrokers,
      });
    } else if (!registered.ok) {
      throw new Error(`POST /operator/cells: ${registered.status} ${await registered.text()}`);
    }
  }
  return operator;
}

/**
 * What an operator and a promoter do before an onsale: register the cells, create a tenant,
 * then, as its promoter, create one event per cell, upload its seat map and schedule its
 * onsale, and wait until the control plane has loaded each event into its cell.
 */
export async function seedDemo(
  platform: Platform,
  options: { seatsPerEvent: number; maxReleaseRate: number; perBuyerLimit?: number; holdTtlSeconds?: number },
) {
  const cp = platform.urls.controlPlane;
  const operator = await registerCells(platform);
  const tenant = await call<{ id: string }>(cp, 'POST', '/operator/tenants', operator, { name: 'Demo Promotions' });
  const promoter = await devToken(platform.urls.identity, {
    kind: 'promoter',
    sub: 'promoter-demo',
    tenantId: tenant.id,
    role: 'owner',
  });

  const events: DemoEvent[] = [];
  const now = Date.now();
  for (const [i, cell] of platform.cells.entries()) {
    const name = `Demo Stadium Night ${i + 1}`;
    const event = await call<{ id: string }>(cp, 'POST', '/events', promoter, {
      name,
      venue: `Arena ${i + 1}`,
      startsAt: new Date(now + 30 * 86_400_000).toISOString(),
      cellId: cell.id,
    });
    await call(cp, 'PUT', `/events/${event.id}/seat-map`, promoter, demoSeatMap(options.seatsPerEvent));
    await call(cp, 'PUT', `/events/${event.id}/onsale`, promoter, {
      roomOpensAt: new Date(now + 3_000).toISOString(),
      onsaleAt: new Date(now + 3_000).toISOString(),
      perBuyerLimit: options.perBuyerLimit ?? 4,
      maxReleaseRate: options.maxReleaseRate,
      ...(options.holdTtlSeconds ? { holdTtlSeconds: options.holdTtlSeconds } : {}),
    });
    events.push({ eventId: event.id, cellId: cell.id, name, seats: options.seatsPerEvent });
  }
  await untilRouted(platform, promoter, events);
  return { tenantId: tenant.id, promoter, operator, events };
}
export type DemoSeed = Awaited<ReturnType<typeof seedDemo>>;

/**
 * The demo seeded by an earlier start, on a platform started again on the same databases: the cells
 * registered where they now listen, fresh tokens, and each event routed again. Null when an event is gone
 * from the control plane or from its cell (the data was wiped): seed anew.
 */
export async function resumeDemo(
  platform: Platform,
  seeded: { tenantId: string; events: DemoEvent[] },
): Promise<DemoSeed | null> {
  const operator = await registerCells(platform);
  const promoter = await devToken(platform.urls.identity, {
    kind: 'promoter',
    sub: 'promoter-demo',
    tenantId: seeded.tenantId,
    role: 'owner',
  });
  for (const e of seeded.events) {
    const res = await fetch(`${platform.urls.controlPlane}/events/${e.eventId}`, {
      headers: { authorization: `Bearer ${promoter}` },
    });
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`GET /events/${e.eventId}: ${res.status} ${await res.text()}`);
    // Its cell must still hold it: a cell whose ledger was wiped (or moved, as the per-cell layout moved every
    // cell to its own server) does not, and the control plane would wait for it forever.
    const cell = platform.cells.find((c) => c.id === e.cellId);
    const held = cell && (await fetch(`${cell.url}/events/${e.eventId}/availability`)).ok;
    if (!held) return null;
  }
  await untilRouted(platform, promoter, seeded.events);
  return { tenantId: seeded.tenantId, promoter, operator, events: seeded.events };
}

/** Waits until each event is loaded into its cell and the edge router routes it (its next directory poll). */
export async function untilRouted(platform: Platform, promoter: string, events: DemoEvent[]) {
  const cp = platform.urls.controlPlane;
  for (const e of events) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const onsale = await call<{ ready: boolean; load: { lastError: string | null } }>(
        cp,
        'GET',
        `/events/${e.eventId}/onsale`,
        promoter,
      );
      // Loaded, and routed: the edge router learns the event from its next directory poll.
      if (onsale.ready && (await fetch(`${platform.urls.router}/events/${e.eventId}/availability`)).ok) break;
      if (Date.now() > deadline)
        throw new Error(`event ${e.eventId} not loaded into ${e.cellId} or not routed: ${onsale.load.lastError}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
