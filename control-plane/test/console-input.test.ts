import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness } from '../../test/support/control-plane';
import { createConsoleApp } from '../src/console/app';
import { createSessionStore, SESSION_COOKIE } from '../src/console/session';

/**
 * "No route of the console answers 5xx to bad input; forms show the server's error by field."
 *
 * Every route the console app declares (enumerated from the app itself, so a new route is covered
 * without editing this file) is sent hostile input with a valid session and CSRF token: ids that
 * are not uuids, NUL characters, very long strings, missing and garbage form fields, wrong and
 * malformed content types, an oversized body. Sessions are made by the console's own session store
 * (the OIDC sign-in itself is driven in a browser by test/e2e/console.test.ts).
 */

const MAX_BODY = 256 * 1024;
let h: Harness;
let t: Awaited<ReturnType<Harness['tenant']>>;
let eventId: string;
let sessions: ReturnType<typeof createSessionStore>;

beforeAll(async () => {
  h = await createHarness({ env: { MAX_BODY_BYTES: String(MAX_BODY) } });
  await addCell(h, 'cell-ci1');
  t = await h.tenant('Hostile');
  const startsAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const r = await h.req('POST', '/events', { token: t.manager, body: { name: 'Show', venue: 'Hall', startsAt } });
  expect(r.status).toBe(201);
  eventId = r.body.id;
  sessions = createSessionStore(h.services, { ttlSeconds: 600, secure: false });
});
afterAll(() => h?.close());

/** A fresh signed-in manager of the tenant: its cookie and CSRF token (sign-out ends a session, so one per request). */
async function signIn(role: 'manager' | 'viewer' = 'manager') {
  const mint = new Hono();
  mint.get('/', async (c) => {
    await sessions.create(c, { sub: `${role}@${t.id.slice(0, 8)}`, tenantId: t.id, role });
    return c.text('ok');
  });
  const res = await mint.request('/');
  const cookie = /onsale_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  expect(cookie).toBeTruthy();
  const page = await h.app.request('/console/team', { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } });
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(await page.text())?.[1];
  expect(csrf).toBeTruthy();
  return { cookie: `${SESSION_COOKIE}=${cookie}`, csrf: csrf! };
}

interface Sent {
  status: number;
  text: string;
  type: string;
}

async function send(
  method: string,
  path: string,
  o: { body?: BodyInit; contentType?: string; csrfHeader?: boolean; headers?: Record<string, string> } = {},
): Promise<Sent> {
  const s = await signIn();
  const headers: Record<string, string> = { cookie: s.cookie, ...o.headers };
  if (o.csrfHeader !== false) headers['x-csrf-token'] = s.csrf;
  if (o.contentType) headers['content-type'] = o.contentType;
  const res = await h.app.request(path, { method, headers, body: o.body });
  const type = res.headers.get('content-type') ?? '';
  // A live stream never ends: its status is the answer.
  if (type.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, text: '', type };
  }
  return { status: res.status, text: await res.text(), type };
}

const LONG = 'x'.repeat(100_000);
const HOSTILE_IDS = [
  'not-a-uuid',
  '%00',
  'a%00b',
  encodeURIComponent(LONG.slice(0, 8_000)),
  '00000000-0000-0000-0000-000000000000',
  '%E0%A4%A', // a broken percent escape
  encodeURIComponent('<script>alert(1)</script>'),
  '..%2F..%2Fetc%2Fpasswd',
];

/** The console's routes as its app declares them (middleware excluded). */
function consoleRoutes() {
  const app = createConsoleApp(h.services, h.services.config);
  const seen = new Set<string>();
  const out: { method: string; path: string }[] = [];
  for (const r of app.routes) {
    if (r.method === 'ALL') continue;
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ method: r.method, path: r.path });
  }
  return out;
}

const fill = (path: string, id: string) =>
  `/console${path.replace(':eventId', id).replace(':file', id)}`.replace(/\/$/, '') || '/console';

/** Bodies a POST may get: each with its content type (undefined: none). */
function hostileBodies(csrf: () => string): { name: string; body?: BodyInit; contentType?: string }[] {
  const nul = 'a\u0000b';
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  return [
    { name: 'no body' },
    { name: 'empty form', body: '', contentType: 'application/x-www-form-urlencoded' },
    {
      name: 'NUL in every field',
      body: form({
        name: nul,
        venue: nul,
        timeZone: nul,
        startsAt: nul,
        onsaleAt: nul,
        roomOpensAt: nul,
        perBuyerLimit: nul,
        maxReleaseRate: nul,
        file: nul,
      }),
      contentType: 'application/x-www-form-urlencoded',
    },
    {
      name: 'very long fields',
      body: form({
        name: LONG,
        venue: LONG,
        timeZone: LONG,
        startsAt: LONG,
        onsaleAt: LONG,
        roomOpensAt: LONG,
        perBuyerLimit: LONG,
        maxReleaseRate: LONG,
      }),
      contentType: 'application/x-www-form-urlencoded',
    },
    {
      name: 'garbage values',
      body: form({
        name: '   ',
        venue: '\u202e\ud800',
        timeZone: 'Mars/Olympus_Mons',
        startsAt: '9999-99-99T99:99',
        onsaleAt: '0000-00-00T00:00',
        roomOpensAt: '2025-02-30T25:61',
        perBuyerLimit: '1e309',
        maxReleaseRate: '-Infinity',
      }),
      contentType: 'application/x-www-form-urlencoded',
    },
    {
      name: 'repeated fields',
      body: 'name=a&name=b&venue[]=x&startsAt=1&startsAt=2&perBuyerLimit=1&perBuyerLimit=2',
      contentType: 'application/x-www-form-urlencoded',
    },
    { name: 'broken url encoding', body: 'name=%E0%A4%A&venue=%', contentType: 'application/x-www-form-urlencoded' },
    { name: 'JSON', body: JSON.stringify({ name: 'x', venue: { $ne: 1 } }), contentType: 'application/json' },
    { name: 'malformed JSON', body: '{"name": ', contentType: 'application/json' },
    { name: 'text/plain', body: 'hello', contentType: 'text/plain' },
    { name: 'multipart without boundary', body: 'garbage', contentType: 'multipart/form-data' },
    { name: 'malformed multipart', body: '--x\r\ngarbage', contentType: 'multipart/form-data; boundary=x' },
    {
      name: 'multipart, file field as text and a binary file',
      body: (() => {
        const f = new FormData();
        f.set('_csrf', csrf());
        f.set('file', 'not a file');
        f.set('name', nul);
        return f;
      })(),
    },
    {
      name: 'multipart, binary file',
      body: (() => {
        const f = new FormData();
        f.set('file', new File([new Uint8Array([0, 255, 254, 0, 1, 2, 3])], 'map.json', { type: 'application/json' }));
        return f;
      })(),
    },
    {
      name: 'multipart, garbage CSV',
      body: (() => {
        const f = new FormData();
        f.set('file', new File([`section,row\n${'\u0000,'.repeat(1000)}\n"unterminated`], 'map.csv'));
        return f;
      })(),
    },
    {
      name: 'oversized body',
      body: `name=${'x'.repeat(MAX_BODY + 1)}`,
      contentType: 'application/x-www-form-urlencoded',
    },
  ];
}

describe('every console route, hostile input, a valid session and CSRF token: never 5xx', () => {
  it('the route list is the console app’s own, and covers the pages and forms', () => {
    const routes = consoleRoutes().map((r) => `${r.method} ${r.path}`);
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /',
        'GET /events/:eventId',
        'POST /events',
        'POST /events/:eventId',
        'POST /events/:eventId/seat-map',
        'POST /events/:eventId/onsale',
        'GET /events/:eventId/live/stream',
        'GET /events/:eventId/settlement.csv',
      ]),
    );
  });

  it('GET: hostile ids, query strings and cookies', async () => {
    const failures: string[] = [];
    for (const r of consoleRoutes().filter((x) => x.method === 'GET')) {
      const ids = r.path.includes(':') ? [...HOSTILE_IDS, eventId] : [''];
      for (const id of ids) {
        for (const query of [
          '',
          '?notice=%00',
          `?notice=${LONG.slice(0, 4000)}`,
          '?code=%00&state=%00',
          `?code=${LONG.slice(0, 4000)}&state=x`,
          '?after=%E0%A4%A',
        ]) {
          const path = fill(r.path, id) + query;
          const res = await send('GET', path);
          // The one 5xx that is not about input: this harness configures no OIDC issuer, and the
          // sign-in route says so (503) whatever it is sent.
          const unconfigured =
            r.path === '/auth/login' && res.status === 503 && /Sign-in is not configured/.test(res.text);
          if (res.status >= 500 && !unconfigured) failures.push(`${res.status} GET ${path.slice(0, 120)}`);
        }
      }
    }
    // A garbage session cookie (and a forged login cookie) is no session, not an error.
    for (const cookie of [
      `${SESSION_COOKIE}=%E0%A4%A`,
      `${SESSION_COOKIE}=${LONG.slice(0, 4000)}`,
      `${SESSION_COOKIE}=a\u0001b; onsale_console_login=x`,
    ]) {
      for (const path of ['/console', '/console/team', `/console/auth/callback?code=c&state=x`]) {
        const res = await h.app.request(path, { headers: { cookie } });
        if (res.status >= 500) failures.push(`${res.status} GET ${path} with cookie ${cookie.slice(0, 40)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('POST: hostile ids × missing, garbage, wrongly typed and oversized bodies', async () => {
    const failures: string[] = [];
    // The sign-out route is last: it ends the session it is sent with (each request has its own).
    const posts = consoleRoutes().filter((x) => x.method === 'POST');
    let csrf = '';
    for (const r of posts) {
      const ids = r.path.includes(':') ? [HOSTILE_IDS[0]!, HOSTILE_IDS[2]!, HOSTILE_IDS[3]!, eventId] : [''];
      for (const id of ids) {
        for (const b of hostileBodies(() => csrf)) {
          for (const csrfHeader of [true, false]) {
            const s = await signIn();
            csrf = s.csrf;
            const headers: Record<string, string> = { cookie: s.cookie };
            if (csrfHeader) headers['x-csrf-token'] = s.csrf;
            if (b.contentType) headers['content-type'] = b.contentType;
            // FormData bodies are one-shot: rebuilt for each request.
            const body =
              b.body instanceof FormData ? hostileBodies(() => s.csrf).find((x) => x.name === b.name)!.body : b.body;
            const res = await h.app.request(fill(r.path, id), { method: 'POST', headers, body });
            const text = await res.text();
            if (res.status >= 500)
              failures.push(
                `${res.status} POST ${fill(r.path, id).slice(0, 80)} [${b.name}, csrf ${csrfHeader ? 'header' : 'field'}]: ${text.slice(0, 200)}`,
              );
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('forms show the server’s error by field', () => {
  const urlencoded = 'application/x-www-form-urlencoded';
  const fieldsIn = (html: string) =>
    [...html.matchAll(/class="field-error"[^>]*data-field="([^"]+)"/g)].map((m) => m[1]);

  it('create event: missing fields, a NUL, a long name and an unknown time zone are each named', async () => {
    let r = await send('POST', '/console/events', { body: '', contentType: urlencoded });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toEqual(expect.arrayContaining(['name', 'venue', 'startsAt']));
    expect(r.text).toMatch(/aria-invalid="true" aria-describedby="f-name-error"/);

    r = await send('POST', '/console/events', {
      body: new URLSearchParams({ name: 'a\u0000b', venue: 'Hall', startsAt: '2030-01-01T20:00' }).toString(),
      contentType: urlencoded,
    });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toContain('name');

    r = await send('POST', '/console/events', {
      body: new URLSearchParams({ name: LONG, venue: 'Hall', startsAt: '2030-01-01T20:00' }).toString(),
      contentType: urlencoded,
    });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toContain('name');

    r = await send('POST', '/console/events', {
      body: new URLSearchParams({
        name: 'A',
        venue: 'Hall',
        timeZone: 'Mars/Base',
        startsAt: '2030-01-01T20:00',
      }).toString(),
      contentType: urlencoded,
    });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toContain('timeZone');
  });

  it('create event: a date no calendar has (30 February, month 13, hour 25) is named, not rolled over', async () => {
    const before = (await h.req('GET', '/events', { token: t.manager })).body.events.length;
    for (const startsAt of ['2030-02-30T20:00', '2030-13-45T25:61', '2030-04-31T20:00', '2030-01-01T24:00']) {
      const r = await send('POST', '/console/events', {
        body: new URLSearchParams({ name: 'Rollover', venue: 'Hall', startsAt }).toString(),
        contentType: urlencoded,
      });
      expect(r.status, startsAt).toBe(400);
      expect(fieldsIn(r.text), startsAt).toContain('startsAt');
    }
    expect((await h.req('GET', '/events', { token: t.manager })).body.events.length).toBe(before);
  });

  it('create event: a time the venue skips when its clocks go forward is named; one it shows twice is the first', async () => {
    const before = (await h.req('GET', '/events', { token: t.manager })).body.events.length;
    const create = (startsAt: string) =>
      send('POST', '/console/events', {
        body: new URLSearchParams({
          name: 'Clock change',
          venue: 'Hall',
          timeZone: 'Europe/Paris',
          startsAt,
        }).toString(),
        contentType: urlencoded,
      });
    const skipped = await create('2030-03-31T02:30');
    expect(skipped.status).toBe(400);
    expect(fieldsIn(skipped.text)).toEqual(['startsAt']);
    expect(skipped.text).toContain('2030-03-31 02:30 does not exist in Europe/Paris: the clocks go forward then');
    expect((await h.req('GET', '/events', { token: t.manager })).body.events.length).toBe(before);

    expect((await create('2030-10-27T02:30')).status).toBe(303);
    const made = (await h.req('GET', '/events', { token: t.manager })).body.events as {
      name: string;
      startsAt: string;
    }[];
    // 02:30 summer time (UTC+2), the first of the two 02:30s that night.
    expect(made.find((e) => e.name === 'Clock change')?.startsAt).toBe('2030-10-27T00:30:00.000Z');
  });

  it('edit event: a NUL in the venue is named', async () => {
    const r = await send('POST', `/console/events/${eventId}`, {
      body: new URLSearchParams({ name: 'Show', venue: 'x\u0000', startsAt: '2030-01-01T20:00' }).toString(),
      contentType: urlencoded,
    });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toContain('venue');
  });

  it('schedule onsale: garbage in each field is named', async () => {
    const r = await send('POST', `/console/events/${eventId}/onsale`, {
      body: new URLSearchParams({
        onsaleAt: 'soon',
        roomOpensAt: '2030-13-45T99:00x',
        perBuyerLimit: '1e309',
        maxReleaseRate: 'NaN',
      }).toString(),
      contentType: urlencoded,
    });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toEqual(
      expect.arrayContaining(['onsaleAt', 'roomOpensAt', 'perBuyerLimit', 'maxReleaseRate']),
    );
  });

  it('schedule onsale: more seats per buyer than a hold takes (the cell would refuse the load) is named, nothing scheduled', async () => {
    const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    for (const perBuyerLimit of ['9', '20']) {
      const r = await send('POST', `/console/events/${eventId}/onsale`, {
        body: new URLSearchParams({
          onsaleAt: `${day}T20:00`,
          roomOpensAt: `${day}T19:30`,
          perBuyerLimit,
          maxReleaseRate: '10',
        }).toString(),
        contentType: urlencoded,
      });
      expect(r.status, perBuyerLimit).toBe(400);
      expect(fieldsIn(r.text), perBuyerLimit).toContain('perBuyerLimit');
    }
    expect((await h.req('GET', `/events/${eventId}/onsale`, { token: t.manager })).status).toBe(404);
  });

  it('seat map: no file, or a text field in its place, is named', async () => {
    let r = await send('POST', `/console/events/${eventId}/seat-map`, { body: new FormData() });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toContain('file');
    const f = new FormData();
    f.set('file', 'section,row,seat');
    r = await send('POST', `/console/events/${eventId}/seat-map`, { body: f });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toContain('file');
    r = await send('POST', `/console/events/${eventId}/seat-map`, { body: 'x', contentType: 'text/plain' });
    expect(r.status).toBe(400);
    expect(fieldsIn(r.text)).toContain('file');
  });
});
