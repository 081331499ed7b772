import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DomainError,
  ERROR_CODE_HEADER,
  IdempotencyKey,
  nulIssues,
  storeUnreachable,
  writeContended,
} from '@onsale/contracts';
import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { botReport } from '../bot-report/report';
import type { Services } from '../context';
import type { EventRow } from '../db/schema';
import { createEvent, getEvent, listEvents, updateEvent } from '../events/events';
import { getSeatMap, uploadSeatMap } from '../events/seat-map';
import type { SeatMapIssue } from '../events/seat-map-parse';
import { refundOrder } from '../onsale/refund-order';
import { cancelOnsale, pauseOnsale, resumeOnsale } from '../onsale/sales-control';
import { scheduleOnsale } from '../onsale/schedule';
import { getOnsale } from '../onsale/status';
import { drawPresale } from '../presale/lottery';
import { getPresale, isNoPresale, openPresale } from '../presale/presale';
import { listDecisions } from '../release-controller/override';
import { getPaidOrders, getSalesByEvent, getSettlementCsv } from '../reporting/sales';
import type { ConsoleConfig } from './config';
import { liveSnapshot } from './live';
import { createOidcClient } from './oidc-client';
import { cancelConfirmPage, type EventPageData, eventPage } from './pages/event';
import { type EventFormValues, eventsList, newEventPage } from './pages/events';
import { type FieldIssues, type Html, layout } from './pages/layout';
import { errorPage, livePage, signInPage, teamPage } from './pages/misc';
import { type OrdersPageData, ordersPage } from './pages/orders';
import { botReportPage, type PresalePageData, presalePage } from './pages/presale';
import { type ConsoleSession, createSessionStore, sameToken } from './session';
import { zonedField } from './zoned-time';

type Env = { Variables: { services: Services; requestId: string; session: ConsoleSession | null } };
type C = Context<Env>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EVENTS_PER_PAGE = 100;
/** Payments the orders page lists before a search: the settlement CSV has every one. */
const NEWEST_PAYMENTS = 50;
const ASSETS = { 'console.js': 'text/javascript; charset=utf-8', 'console.css': 'text/css; charset=utf-8' } as const;
const defaultAssets = resolve(dirname(fileURLToPath(import.meta.url)), '../../console-web/dist');

/** What a change's redirect may announce (a fixed list: the page never echoes text from its URL). */
const NOTICES = {
  saved: 'Saved.',
  'seat-map': 'Seat map stored.',
  scheduled: 'Onsale scheduled.',
  paused: 'Onsale paused: nobody more is admitted until you resume.',
  resumed: 'Onsale resumed.',
  cancelled: 'Onsale cancelled; the event is a draft again.',
  ended: 'Event cancelled: its unpaid orders are cancelled, its paid ones refunded and their tickets voided.',
  presale: 'Presale saved; its lottery commitment is published.',
  drawn: 'Lottery drawn; the invited buyers have their access codes.',
  refund: 'Refund requested: the tickets no longer admit anyone; the seats return to sale when Stripe confirms it.',
} as const;

/** `{ path, message }` issues from a refusal, keyed by the form field they name. */
function fieldIssues(err: DomainError): FieldIssues {
  const out: FieldIssues = {};
  const issues = (err.details as { issues?: { path: string; message: string }[] } | undefined)?.issues ?? [];
  for (const i of issues) out[i.path.split('.')[0] ?? i.path] ??= i.message;
  return out;
}

/**
 * The promoter console under /console: server-rendered pages, forms that post back (errors shown by
 * field), and a bundled script for the live view's charts and seat map. Every read and change goes
 * through the same domain verbs as the JSON API, with the session's promoter as the actor, so a
 * promoter reaches only their tenant's events and a viewer changes nothing.
 */
export function createConsoleApp(services: Services, config: ConsoleConfig) {
  const app = new Hono<Env>();
  const publicUrl = config.CONSOLE_PUBLIC_URL?.replace(/\/+$/, '');
  const sessions = createSessionStore(services, {
    ttlSeconds: config.CONSOLE_SESSION_TTL_SECONDS,
    secure: publicUrl?.startsWith('https:') ?? false,
  });
  const oidc = createOidcClient(config, services.config.IDENTITY_ISSUER);
  const assetsDir = config.CONSOLE_ASSETS_DIR ?? defaultAssets;

  const page = (c: C, title: string, body: Html, status = 200, notice?: string | null) => {
    c.header('cache-control', 'no-store');
    return c.html(layout({ title, session: c.get('session'), body, notice }), status as 200);
  };
  const actor = (c: C) => {
    const s = c.get('session');
    if (!s) throw new DomainError('unauthenticated', 'sign in first');
    return s.actor;
  };
  const eventIdOf = (c: C) => {
    const id = c.req.param('eventId') ?? '';
    if (!UUID.test(id)) throw new DomainError('not_found', 'event not found');
    return id;
  };
  const redirectUri = (c: C) => `${publicUrl ?? new URL(c.req.url).origin}/console/auth/callback`;

  app.onError((err, c) => {
    if (err instanceof DomainError) return page(c, 'Error', errorPage(err.status, err.message), err.status);
    // A store that is down (or a write that kept colliding) is waited out, as on the API: 503 with Retry-After.
    if (storeUnreachable(err) || writeContended(err)) {
      services.log.warn('console: a store is unavailable', { requestId: c.get('requestId'), err, path: c.req.path });
      c.header('retry-after', '5');
      c.header(ERROR_CODE_HEADER, 'store_unavailable');
      return page(c, 'Unavailable', errorPage(503, 'a data store is unavailable; try again in a few seconds'), 503);
    }
    services.log.error('console error', { requestId: c.get('requestId'), err, path: c.req.path });
    return page(c, 'Error', errorPage(500, 'internal error'), 500);
  });
  app.notFound((c) => page(c, 'Not found', errorPage(404, 'no such page'), 404));

  app.use('*', async (c, next) => {
    c.header('x-frame-options', 'DENY');
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'same-origin');
    c.header(
      'content-security-policy',
      "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self' " +
        (config.CONSOLE_OIDC_ISSUER_URL ? new URL(config.CONSOLE_OIDC_ISSUER_URL).origin : ''),
    );
    c.set('session', await sessions.get(c));
    await next();
  });

  // Every change carries the session's CSRF token (a form field, or a header from the script); a
  // forged form from another page has the cookie (same site) but not the token.
  app.use('*', async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const s = c.get('session');
    if (!s) return page(c, 'Signed out', errorPage(401, 'your session has ended; sign in again'), 401);
    const type = c.req.header('content-type') ?? '';
    let token = c.req.header('x-csrf-token') ?? '';
    if (!token && /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) {
      const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
      token = typeof body._csrf === 'string' ? body._csrf : '';
    }
    if (!token || !sameToken(token, s.csrf)) {
      services.log.warn('console change refused: CSRF token missing or wrong', { path: c.req.path, sub: s.sub });
      return page(c, 'Not allowed', errorPage(403, 'this form is out of date or did not come from the console'), 403);
    }
    return next();
  });

  app.get('/assets/:file', async (c) => {
    const file = c.req.param('file') as keyof typeof ASSETS;
    if (!Object.hasOwn(ASSETS, file)) return c.text('not found', 404);
    try {
      const body = await readFile(join(assetsDir, file));
      return c.body(body, 200, { 'content-type': ASSETS[file], 'cache-control': 'no-cache' });
    } catch {
      services.log.error('console assets are not built', { assetsDir });
      return c.text('console assets are not built: run `pnpm --filter @onsale/control-plane build:console`', 503);
    }
  });

  // ---- sign-in: authorization code with PKCE against the configured issuer
  app.get('/auth/login', async (c) => {
    if (!config.CONSOLE_OIDC_ISSUER_URL) return page(c, 'Sign in', signInPage(false), 503);
    const uri = redirectUri(c);
    const start = await oidc.start(uri);
    await sessions.beginLogin(c, start.state, { verifier: start.verifier, redirectUri: uri });
    return c.redirect(start.url, 302);
  });
  app.get('/auth/callback', async (c) => {
    const code = c.req.query('code');
    const state = c.req.query('state');
    if (!code || !state) return page(c, 'Sign in', errorPage(400, 'the sign-in answer lacks its code or state'), 400);
    const login = await sessions.finishLogin(c, state);
    if (!login)
      return page(c, 'Sign in', errorPage(400, 'this sign-in was not started here or has expired; try again'), 400);
    const token = await oidc.exchange(code, login.verifier, login.redirectUri);
    const who = await services.identity.verify(token);
    if (!who.tenantId || !who.role || who.role === 'operator')
      return page(c, 'Sign in', errorPage(403, 'this account is not a promoter of any organisation'), 403);
    await sessions.destroy(c);
    await sessions.create(c, { sub: who.sub, tenantId: who.tenantId, role: who.role });
    services.log.info('console sign-in', { sub: who.sub, tenantId: who.tenantId, role: who.role });
    return c.redirect('/console', 303);
  });
  app.post('/auth/sign-out', async (c) => {
    await sessions.destroy(c);
    return c.redirect('/console', 303);
  });

  app.get('/', async (c) => {
    const s = c.get('session');
    if (!s) return page(c, 'Sign in', signInPage(Boolean(config.CONSOLE_OIDC_ISSUER_URL)));
    // A link to an older page carries the last event shown; anything else in its place shows the newest page.
    const given = c.req.query('after');
    const after = given && UUID.test(given) ? given : undefined;
    const listed = await listEvents({ ctx: services, actor: s.actor, page: { after, limit: EVENTS_PER_PAGE } });
    const eventIds = listed.events.map((e) => e.id);
    const { sales, places } = await getSalesByEvent({ ctx: services, actor: s.actor, eventIds });
    const counts = new Map(sales.map(({ eventId, ...n }) => [eventId, n]));
    return page(c, 'Events', eventsList(s, { ...listed, first: !after }, counts, places));
  });

  // Pages below need a session; a signed-out browser is sent to sign in.
  app.use('*', async (c, next) => {
    if (!c.get('session')) return c.redirect('/console', 303);
    return next();
  });

  app.get('/team', async (c) => {
    const s = c.get('session')!;
    return page(c, 'Team', teamPage(s, await sessions.members(s.tenantId)));
  });

  const formKey = () => randomBytes(16).toString('base64url');
  app.get('/events/new', (c) =>
    page(c, 'Create an event', newEventPage(c.get('session')!, { timeZone: 'UTC', formKey: formKey() })),
  );
  app.post('/events', async (c) => {
    const s = c.get('session')!;
    const v = await formValues(c, ['name', 'venue', 'timeZone', 'startsAt', 'formKey']);
    // A form from before the key (or edited by hand) still creates its event, without a key.
    const idempotencyKey = IdempotencyKey.safeParse(v.formKey).data;
    try {
      const ev = await createEvent({ ctx: services, actor: s.actor, input: { ...eventInput(v), idempotencyKey } });
      return c.redirect(`/console/events/${ev.id}`, 303);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      if (err.code === 'idempotency_key_reused') {
        // The form came back (the browser's Back button) and was changed: the event it created stands, and a new
        // key lets the promoter create this one as a second event.
        const message =
          'This form already created an event with other details. Press Create event again to create this one as well.';
        return page(c, 'Create an event', newEventPage(s, { ...v, formKey: formKey() }, undefined, message), 409);
      }
      return page(c, 'Create an event', newEventPage(s, v, fieldIssues(err), err.message), err.status);
    }
  });

  app.get('/events/:eventId', async (c) => {
    const notice = c.req.query('notice');
    return page(
      c,
      'Event',
      eventPage(await eventData(c)),
      200,
      notice && Object.hasOwn(NOTICES, notice) ? NOTICES[notice as keyof typeof NOTICES] : null,
    );
  });
  app.post('/events/:eventId', async (c) => {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const v = await formValues(c, ['name', 'venue', 'timeZone', 'startsAt']);
    return attempt(c, 'event', v, async () => {
      await updateEvent({ ctx: services, actor: s.actor, eventId, input: eventInput(v) });
      return 'saved';
    });
  });

  app.post('/events/:eventId/seat-map', async (c) => {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const body = await readForm(c);
    const file = body.file;
    return attempt(c, 'seat-map', {}, async () => {
      if (!(file instanceof File) || file.size === 0)
        throw new DomainError('validation_failed', 'choose a CSV or JSON file', {
          issues: [{ path: 'file', message: 'choose a CSV or JSON file' }],
        });
      const text = await file.text();
      const json = /\.json$/i.test(file.name) || file.type === 'application/json' || /^\s*[{[]/.test(text);
      await uploadSeatMap({
        ctx: services,
        actor: s.actor,
        eventId,
        input: { format: json ? 'json' : 'csv', body: text },
      });
      return 'seat-map';
    });
  });

  app.post('/events/:eventId/onsale', async (c) => {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const v = await formValues(c, ['onsaleAt', 'roomOpensAt', 'perBuyerLimit', 'maxReleaseRate']);
    return attempt(c, 'onsale', v, async () => {
      const ev = await getEvent({ ctx: services, actor: s.actor, eventId });
      const issues: { path: string; message: string }[] = nulIssues(v);
      const onsaleAt = zonedField(issues, 'onsaleAt', v.onsaleAt, ev.timeZone);
      const roomOpensAt = v.roomOpensAt ? zonedField(issues, 'roomOpensAt', v.roomOpensAt, ev.timeZone) : onsaleAt;
      // Its bounds are the verb's (scheduleOnsale), which names them in its own issue.
      const perBuyerLimit = Number(v.perBuyerLimit);
      if (!Number.isInteger(perBuyerLimit)) issues.push({ path: 'perBuyerLimit', message: 'a whole number' });
      const maxReleaseRate = Number(v.maxReleaseRate);
      if (!Number.isInteger(maxReleaseRate) || maxReleaseRate < 1 || maxReleaseRate > 100_000)
        issues.push({ path: 'maxReleaseRate', message: 'a whole number from 1 to 100,000' });
      if (issues.length) throw new DomainError('validation_failed', 'the onsale schedule is not valid', { issues });
      await scheduleOnsale({
        ctx: services,
        actor: s.actor,
        eventId,
        input: { onsaleAt: onsaleAt!, roomOpensAt: roomOpensAt!, perBuyerLimit, maxReleaseRate },
      });
      return 'scheduled';
    });
  });

  for (const [path, verb, notice] of [
    ['pause', pauseOnsale, 'paused'],
    ['resume', resumeOnsale, 'resumed'],
  ] as const) {
    app.post(`/events/:eventId/onsale/${path}`, async (c) => {
      const eventId = eventIdOf(c);
      return attempt(c, 'control', {}, async () => {
        await verb({ ctx: services, actor: c.get('session')!.actor, eventId });
        return notice;
      });
    });
  }
  app.get('/events/:eventId/onsale/cancel', async (c) => {
    const s = c.get('session')!;
    const ev = await getEvent({ ctx: services, actor: s.actor, eventId: eventIdOf(c) });
    return page(c, 'Cancel onsale', cancelConfirmPage(s, ev));
  });
  app.post('/events/:eventId/onsale/cancel', async (c) => {
    const eventId = eventIdOf(c);
    return attempt(c, 'control', {}, async () => {
      // A scheduled onsale goes back to a draft; a started one ends the event.
      const { status } = await cancelOnsale({ ctx: services, actor: c.get('session')!.actor, eventId });
      return status === 'ended' ? 'ended' : 'cancelled';
    });
  });

  // ---- presale: registration, the lottery, invitations and conversion; and the onsale's bot report
  app.get('/events/:eventId/presale', async (c) => {
    const data = await presaleData(c);
    return page(c, `${data.ev.name}: presale`, presalePage(data), 200, noticeOf(c));
  });
  app.post('/events/:eventId/presale', async (c) => {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const names = ['registrationOpensAt', 'registrationClosesAt', 'presaleStartsAt', 'presaleEndsAt'] as const;
    const v = await formValues(c, [...names, 'invitations', 'waitlistSize', 'invitationTtlMinutes']);
    return presaleAttempt(c, v, async () => {
      const ev = await getEvent({ ctx: services, actor: s.actor, eventId });
      const issues: { path: string; message: string }[] = nulIssues(v);
      const times: Partial<Record<(typeof names)[number], Date>> = {};
      for (const n of names) times[n] = zonedField(issues, n, v[n], ev.timeZone);
      const whole = (name: string, min: number, max: number, fallback?: number) => {
        const n = v[name] ? Number(v[name]) : fallback;
        if (n === undefined || !Number.isInteger(n) || n < min || n > max)
          issues.push({ path: name, message: `a whole number from ${min} to ${max.toLocaleString('en')}` });
        return n ?? 0;
      };
      const invitations = whole('invitations', 1, 1_000_000);
      const waitlistSize = whole('waitlistSize', 0, 1_000_000, 0);
      const ttlMinutes = whole('invitationTtlMinutes', 1, 7 * 24 * 60, 60);
      if (issues.length) throw new DomainError('validation_failed', 'the presale is not valid', { issues });
      await openPresale({
        ctx: services,
        actor: s.actor,
        eventId,
        input: {
          ...(times as Record<(typeof names)[number], Date>),
          invitations,
          waitlistSize,
          invitationTtlSeconds: ttlMinutes * 60,
        },
      });
      return 'presale';
    });
  });
  app.post('/events/:eventId/presale/draw', async (c) => {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    return presaleAttempt(c, undefined, async () => {
      await drawPresale({ ctx: services, actor: s.actor, eventId });
      return 'drawn';
    });
  });
  app.get('/events/:eventId/bot-report', async (c) => {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const ev = await getEvent({ ctx: services, actor: s.actor, eventId });
    const report = await botReport({ ctx: services, actor: s.actor, eventId });
    return page(c, `${ev.name}: bot report`, botReportPage(ev, report));
  });

  // ---- orders: a paid order found by the id its buyer quotes, or among the newest payments, and refunded
  app.get('/events/:eventId/orders', async (c) => {
    const data = await ordersData(c, c.req.query('order'));
    data.refundRequested = c.req.query('notice') === 'refund';
    return page(c, `${data.ev.name}: orders`, ordersPage(data), 200, noticeOf(c));
  });
  app.post('/events/:eventId/orders/:orderId/refund', async (c) => {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const orderId = c.req.param('orderId').toLowerCase();
    if (!UUID.test(orderId)) throw new DomainError('not_found', 'order not found');
    const { reason = '' } = await formValues(c, ['reason']);
    try {
      const issues = nulIssues({ reason });
      if (!reason) issues.push({ path: 'reason', message: 'required: say why, for the record kept with the refund' });
      if (reason.length > 200) issues.push({ path: 'reason', message: 'at most 200 characters' });
      if (issues.length) throw new DomainError('validation_failed', 'the refund needs a reason', { issues });
      await refundOrder({ ctx: services, actor: s.actor, eventId, orderId, reason });
      return c.redirect(`/console/events/${eventId}/orders?order=${orderId}&notice=refund`, 303);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500 || err.code === 'not_found') throw err;
      const data = await ordersData(c, orderId, { orderId, reason, issues: fieldIssues(err), error: err.message });
      return page(c, `${data.ev.name}: orders`, ordersPage(data), err.status);
    }
  });

  app.get('/events/:eventId/live', async (c) => {
    const ev = await getEvent({ ctx: services, actor: actor(c), eventId: eventIdOf(c) });
    return page(c, `${ev.name}: live`, livePage(ev));
  });
  app.get('/events/:eventId/live/stream', async (c) => {
    const who = actor(c);
    const eventId = eventIdOf(c);
    await getEvent({ ctx: services, actor: who, eventId });
    c.header('cache-control', 'no-store');
    return streamSSE(c, async (stream) => {
      let lastSeats = '';
      let alive = true;
      stream.onAbort(() => {
        alive = false;
      });
      while (alive) {
        try {
          const snap = await liveSnapshot({ ctx: services, actor: who, eventId });
          // The seat lists can be long: sent when they change, not every tick.
          const seats = JSON.stringify(snap.seats);
          const { seats: _s, ...rest } = snap;
          await stream.writeSSE({ event: 'snapshot', data: JSON.stringify(seats === lastSeats ? rest : snap) });
          lastSeats = seats;
        } catch (err) {
          services.log.warn('live snapshot failed', { eventId, err: (err as Error).message });
          await stream.writeSSE({ event: 'problem', data: JSON.stringify({ message: 'live data is unavailable' }) });
        }
        await stream.sleep(config.CONSOLE_LIVE_INTERVAL_MS);
      }
    });
  });
  app.get('/events/:eventId/seats.json', async (c) => {
    const who = actor(c);
    const eventId = eventIdOf(c);
    const all: { id: string; section: string; row: string }[] = [];
    let after: string | undefined;
    do {
      const pageOf = await getSeatMap({ ctx: services, actor: who, eventId, page: { after, limit: 20_000 } });
      for (const x of pageOf.seats) all.push({ id: x.id, section: x.section, row: x.row });
      after = pageOf.nextAfter ?? undefined;
    } while (after);
    c.header('cache-control', 'no-store');
    return c.json({ seats: all });
  });
  app.get('/events/:eventId/settlement.csv', async (c) => {
    const eventId = eventIdOf(c);
    const csv = await getSettlementCsv({ ctx: services, actor: actor(c), eventId });
    return c.body(csv, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="settlement-${eventId}.csv"`,
      'cache-control': 'no-store',
    });
  });

  /**
   * The one way a console route reads a form: a body that is not a readable form (a broken multipart,
   * a wrong encoding) is a 400 naming `body`, never a parser's exception.
   */
  async function readForm(c: C) {
    try {
      return await c.req.parseBody();
    } catch {
      throw new DomainError('validation_failed', 'the form could not be read; send it from the console page', {
        issues: [
          { path: 'body', message: 'not a readable form (application/x-www-form-urlencoded or multipart/form-data)' },
        ],
      });
    }
  }

  /** The named text fields of a form, trimmed; other fields and files are ignored. */
  async function formValues(c: C, names: string[]): Promise<Record<string, string>> {
    const body = await readForm(c);
    const out: Record<string, string> = {};
    for (const n of names) if (typeof body[n] === 'string') out[n] = (body[n] as string).trim();
    return out;
  }

  /** Form values as the event verbs take them; a time the zone cannot read is a 400 on that field. */
  function eventInput(v: EventFormValues) {
    // The rule every service applies to input (PostgreSQL cannot store NUL), reported by field.
    const issues: { path: string; message: string }[] = nulIssues(v);
    if (issues.length) throw new DomainError('validation_failed', 'the event is not valid', { issues });
    const timeZone = v.timeZone || 'UTC';
    if (!v.name) issues.push({ path: 'name', message: 'required' });
    if (!v.venue) issues.push({ path: 'venue', message: 'required' });
    if ((v.name?.length ?? 0) > 200) issues.push({ path: 'name', message: 'at most 200 characters' });
    if ((v.venue?.length ?? 0) > 200) issues.push({ path: 'venue', message: 'at most 200 characters' });
    let startsAt: Date | undefined;
    try {
      startsAt = zonedField(issues, 'startsAt', v.startsAt, timeZone);
    } catch {
      issues.push({ path: 'timeZone', message: 'must be an IANA time zone such as Europe/Paris' });
    }
    if (issues.length) throw new DomainError('validation_failed', 'the event is not valid', { issues });
    return { name: v.name!, venue: v.venue!, timeZone, startsAt: startsAt! };
  }

  async function eventData(c: C, failed?: EventPageData['failed']): Promise<EventPageData> {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const ev: EventRow = await getEvent({ ctx: services, actor: s.actor, eventId });
    const map = await getSeatMap({ ctx: services, actor: s.actor, eventId, page: { limit: 1 } });
    const onsale = await getOnsale({ ctx: services, tenantId: s.tenantId, eventId }).catch((err) =>
      err instanceof DomainError && err.code === 'not_found' ? null : Promise.reject(err),
    );
    const decisions = await listDecisions({ ctx: services, eventId, limit: 20 });
    return { s, ev, tiers: map.tiers, sections: map.sections, onsale, decisions, failed };
  }

  /** Runs a change from the event page: success goes back to the page; a refusal re-renders it with the error in place. */
  async function attempt(
    c: C,
    form: NonNullable<EventPageData['failed']>['form'],
    values: Record<string, string>,
    run: () => Promise<keyof typeof NOTICES>,
  ) {
    const eventId = eventIdOf(c);
    try {
      const notice = await run();
      return c.redirect(`/console/events/${eventId}${notice ? `?notice=${notice}` : ''}`, 303);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500 || err.code === 'not_found') throw err;
      const details = err.details as { issues?: SeatMapIssue[]; total?: number } | undefined;
      const seatIssues = form === 'seat-map' && details?.issues?.some((i) => 'field' in i) ? details.issues : undefined;
      const data = await eventData(c, {
        form,
        values,
        issues: fieldIssues(err),
        seatIssues,
        total: details?.total,
        error: err.message,
      });
      return page(c, data.ev.name, eventPage(data), err.status);
    }
  }

  /** The orders page: the order `asked` names (none when it cannot be an id), or the newest payments. */
  async function ordersData(c: C, asked?: string, failed?: OrdersPageData['failed']): Promise<OrdersPageData> {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const ev = await getEvent({ ctx: services, actor: s.actor, eventId });
    const orderId = asked?.trim().toLowerCase() || undefined;
    const scope = { ctx: services, actor: s.actor, eventId };
    const orders = !orderId
      ? await getPaidOrders({ ...scope, limit: NEWEST_PAYMENTS })
      : UUID.test(orderId)
        ? await getPaidOrders({ ...scope, orderId, limit: 1 })
        : [];
    return { s, ev, orders, asked: orderId, failed };
  }

  function noticeOf(c: C) {
    const notice = c.req.query('notice');
    return notice && Object.hasOwn(NOTICES, notice) ? NOTICES[notice as keyof typeof NOTICES] : null;
  }

  async function presaleData(c: C, failed?: PresalePageData['failed']): Promise<PresalePageData> {
    const s = c.get('session')!;
    const eventId = eventIdOf(c);
    const ev = await getEvent({ ctx: services, actor: s.actor, eventId });
    const presale = await getPresale({ ctx: services, actor: s.actor, eventId }).catch((err) =>
      isNoPresale(err) ? null : Promise.reject(err),
    );
    return { s, ev, presale, failed };
  }

  /** A change on the presale page: back to it on success; a refusal re-renders it with the error in place. */
  async function presaleAttempt(
    c: C,
    values: Record<string, string> | undefined,
    run: () => Promise<keyof typeof NOTICES>,
  ) {
    const eventId = eventIdOf(c);
    try {
      const notice = await run();
      return c.redirect(`/console/events/${eventId}/presale?notice=${notice}`, 303);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500 || err.code === 'not_found') throw err;
      const data = await presaleData(c, { values, issues: fieldIssues(err), error: err.message });
      return page(c, `${data.ev.name}: presale`, presalePage(data), err.status);
    }
  }

  return app;
}
