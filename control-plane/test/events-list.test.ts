import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, consoleSession, createHarness, type Harness } from '../../test/support/control-plane';

/**
 * A promoter's events, a page at a time, newest first: the list stopped at 500 events without saying so, so a tenant
 * with more could neither list nor open its older events from the console.
 */
let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;
const startsAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
/** The tenant's event ids, newest first, as created here. */
const created: string[] = [];

const create = async (tenant: { manager: string }, name: string) => {
  const r = await h.req('POST', '/events', { token: tenant.manager, body: { name, venue: 'Hall', startsAt } });
  expect(r.status).toBe(201);
  return r.body.id as string;
};

beforeAll(async () => {
  h = await createHarness();
  await addCell(h, 'cell-el1');
  t = await h.tenant('Many events');
  // More than a default page (100), created in batches; some share a creation millisecond, which the order settles
  // by id.
  for (let batch = 0; batch < 11; batch++) {
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => create(t, `Show ${batch * 10 + i}`)));
    created.unshift(...ids);
  }
  const r = await h.services.pool.query(
    'SELECT id FROM events WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC',
    [t.id],
  );
  created.splice(0, created.length, ...r.rows.map((row) => row.id as string));
});
afterAll(() => h?.close());

const list = (query: string) => h.req('GET', `/events${query}`, { token: t.viewer });

describe('GET /events', () => {
  it('answers 100 events unless asked, newest first, and the after that asks for the rest', async () => {
    const first = await list('');
    expect(first.status).toBe(200);
    expect(first.body.events.map((e: { id: string }) => e.id)).toEqual(created.slice(0, 100));
    expect(first.body.nextAfter).toBe(created[99]);
    const rest = await list(`?after=${first.body.nextAfter}`);
    expect(rest.body.events.map((e: { id: string }) => e.id)).toEqual(created.slice(100));
    expect(rest.body.nextAfter).toBeNull();
  });

  it('walks every event once in pages of any size, an event created meanwhile moving nothing', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const r = await list(`?limit=7${after ? `&after=${after}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.events.length).toBeLessThanOrEqual(7);
      seen.push(...r.body.events.map((e: { id: string }) => e.id));
      after = r.body.nextAfter;
      // A new event sorts first: it belongs to the newest page, never in the middle of the walk.
      if (++pages === 3) await create(t, 'Created during the walk');
    } while (after);
    expect(seen).toEqual(created);
    expect(pages).toBe(Math.ceil(created.length / 7));
  });

  it('refuses a page size out of 1..500 and an after that is not an event of the tenant, naming the field', async () => {
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=501', 'limit'],
      ['?limit=ten', 'limit'],
      ['?after=not-an-id', 'after'],
      ['?after=00000000-0000-4000-8000-000000000000', 'after'],
    ]) {
      const r = await list(query!);
      expect(r.status, query).toBe(400);
      expect(
        r.body.error.details.issues.map((i: { path: string }) => i.path),
        query,
      ).toEqual([field]);
    }
    const other = await h.tenant('Other');
    const theirs = await create(other, 'Theirs');
    const r = await list(`?after=${theirs}`);
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0].path).toBe('after');
  });
});

describe("the console's events page", () => {
  it('shows the newest hundred and links to the older ones, and back to the newest', async () => {
    const session = await consoleSession(h, t, 'viewer');
    const shown = async (path: string) => {
      const html = (await session.get(path)).text;
      const ids = [...html.matchAll(/<a href="\/console\/events\/([0-9a-f-]{36})">/g)].map((m) => m[1]);
      const older = /href="\/console\?after=([0-9a-f-]{36})" data-testid="older-events"/.exec(html)?.[1];
      return { ids, older, newest: html.includes('data-testid="newest-events"') };
    };
    const { rows } = await h.services.pool.query(
      'SELECT id FROM events WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC',
      [t.id],
    );
    const all = rows.map((r) => r.id as string);
    const first = await shown('/console');
    expect(first.ids).toEqual(all.slice(0, 100));
    expect(first.newest).toBe(false);
    const second = await shown(`/console?after=${first.older}`);
    expect(second.ids).toEqual(all.slice(100));
    expect(second.older).toBeUndefined();
    expect(second.newest).toBe(true);
    // A hand-edited link shows the newest page, not an error.
    expect((await shown('/console?after=garbage')).ids).toEqual(all.slice(0, 100));
  });
});
