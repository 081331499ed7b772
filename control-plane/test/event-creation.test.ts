import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, consoleSession, createHarness, type Harness } from '../../test/support/control-plane';

/**
 * Creating an event is the one promoter write that makes a new row on every request, so a retry after a lost answer,
 * or a form sent twice, would leave a second event. With an Idempotency-Key it does not: the key answers the event it
 * created, per tenant, and a key reused for other details is refused. The console's new-event form carries a key of
 * its own.
 */
let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;
const startsAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
const show = { name: 'Night Show', venue: 'Hall', startsAt };

beforeAll(async () => {
  h = await createHarness();
  await addCell(h, 'cell-ec1');
  t = await h.tenant('Keys');
});
afterAll(() => h?.close());

/** The tenant's events with this name, as the database has them. */
async function named(tenantId: string, name: string) {
  const r = await h.services.pool.query('SELECT id FROM events WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
  return r.rows.map((row) => row.id as string);
}

const create = (token: string, body: object, key?: string) =>
  h.req('POST', '/events', { token, body, headers: key ? { 'idempotency-key': key } : {} });

describe('POST /events with an Idempotency-Key', () => {
  it('answers a retry with the event the first request created, and creates one', async () => {
    const first = await create(t.manager, show, 'retry-key-0001');
    const again = await create(t.manager, show, 'retry-key-0001');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await named(t.id, show.name)).toEqual([first.body.id]);
  });

  it('creates one event when the same request arrives eight times at once', async () => {
    const body = { ...show, name: 'Concurrent Show' };
    const answers = await Promise.all(Array.from({ length: 8 }, () => create(t.manager, body, 'concurrent-key-01')));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await named(t.id, body.name)).toEqual([answers[0]!.body.id]);
  });

  it('refuses the key reused for other details (409 idempotency_key_reused) and creates nothing', async () => {
    const first = await create(t.manager, { ...show, name: 'Keyed Once' }, 'reused-key-0001');
    const other = await create(t.manager, { ...show, name: 'Keyed Twice' }, 'reused-key-0001');
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    expect(other.body.error.details).toEqual({ header: 'Idempotency-Key', eventId: first.body.id });
    expect(await named(t.id, 'Keyed Twice')).toEqual([]);
  });

  it("keeps keys per tenant: another tenant's request with the same key creates its own event", async () => {
    const other = await h.tenant('Other Keys');
    const mine = await create(t.manager, { ...show, name: 'Per Tenant' }, 'tenant-key-0001');
    const theirs = await create(other.manager, { ...show, name: 'Per Tenant' }, 'tenant-key-0001');
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('creates a new event on every request without a key, as before', async () => {
    const body = { ...show, name: 'Unkeyed' };
    await create(t.manager, body);
    await create(t.manager, body);
    expect(await named(t.id, body.name)).toHaveLength(2);
  });

  it('refuses a malformed key as a 400 naming the header', async () => {
    const r = await create(t.manager, { ...show, name: 'Bad Key' }, 'short');
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body.error.details)).toContain('idempotency-key');
    expect(await named(t.id, 'Bad Key')).toEqual([]);
  });
});

describe("the console's new-event form", () => {
  /** A signed-in manager's browser: the new-event form's key as the page rendered it, and the form posted. */
  async function browser() {
    const session = await consoleSession(h, t);
    const hidden = (page: string, name: string) =>
      new RegExp(`<input type="hidden" name="${name}" value="([^"]+)"`).exec(page)?.[1];
    return {
      open: async () => hidden((await session.get('/console/events/new')).text, 'formKey'),
      post: (fields: Record<string, string>) => session.post('/console/events', fields),
      hidden,
    };
  }
  const form = { venue: 'Hall', timeZone: 'Europe/Paris', startsAt: startsAt.slice(0, 16) };

  it('sent twice (a double click) creates one event, and both answers lead to it', async () => {
    const b = await browser();
    const formKey = await b.open();
    expect(formKey).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const fields = { formKey: formKey!, name: 'Double Click', ...form };
    const [one, two] = await Promise.all([b.post(fields), b.post(fields)]);
    expect([one.status, two.status]).toEqual([303, 303]);
    expect(two.location).toBe(one.location);
    const ids = await named(t.id, 'Double Click');
    expect(ids).toHaveLength(1);
    expect(one.location).toBe(`/console/events/${ids[0]}`);
  });

  it('brought back and changed, says it created an event already and creates the second one when sent again', async () => {
    const b = await browser();
    const formKey = await b.open();
    await b.post({ formKey: formKey!, name: 'First Night', ...form });
    const changed = await b.post({ formKey: formKey!, name: 'Second Night', ...form });
    expect(changed.status).toBe(409);
    const page = changed.text;
    expect(page).toContain('This form already created an event with other details');
    expect(page).toContain('value="Second Night"');
    const fresh = b.hidden(page, 'formKey');
    expect(fresh).toBeTruthy();
    expect(fresh).not.toBe(formKey);
    expect(await named(t.id, 'Second Night')).toEqual([]);
    const sent = await b.post({ formKey: fresh!, name: 'Second Night', ...form });
    expect(sent.status).toBe(303);
    expect(await named(t.id, 'First Night')).toHaveLength(1);
    expect(await named(t.id, 'Second Night')).toHaveLength(1);
  });

  it('without a key (a page from before it, or a key edited by hand) still creates the event', async () => {
    const r = await (await browser()).post({ formKey: 'x', name: 'Hand Edited', ...form });
    expect(r.status).toBe(303);
    expect(await named(t.id, 'Hand Edited')).toHaveLength(1);
  });
});
