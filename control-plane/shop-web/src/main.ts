/**
 * The buyer pages' one script. Every call goes to this origin (the edge's public API) with the buyer's token,
 * except paying, which goes to Stripe with the publishable key and the order's client secret, as Stripe.js does.
 */
import './shop.css';

const TOKEN = 'onsale.buyer.token';
const body = document.body.dataset;
const eventId = body.event ?? '';
const $ = <T extends Element = HTMLElement>(testid: string) =>
  document.querySelector(`[data-testid="${testid}"]`) as T | null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (testid: string, text: string) => {
  const el = $(testid);
  if (el) el.textContent = text;
};
const money = (minor: number, currency: string) =>
  new Intl.NumberFormat('en-GB', { style: 'currency', currency: currency.toUpperCase() }).format(minor / 100);

/** The page shows its first real content and answers input: what the first-load measurement waits for. */
function ready() {
  if (document.body.dataset.interactive) return;
  document.body.dataset.interactive = 'true';
  performance.mark('onsale:interactive');
}

interface ApiError {
  error?: { code?: string; message?: string; details?: Record<string, unknown> };
}

/** The buyer's token, while it has a minute left; otherwise off to sign in, coming back here. */
function token(): string {
  const t = localStorage.getItem(TOKEN);
  const exp = t ? Number(JSON.parse(atob(t.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).exp) : 0;
  if (t && exp * 1000 > Date.now() + 60_000) return t;
  location.assign(`/shop/auth/login?next=${encodeURIComponent(location.pathname)}`);
  throw new Error('signing in');
}

async function api<T>(
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T & ApiError; res: Response }> {
  const res = await fetch(path, {
    ...init,
    headers: { authorization: `Bearer ${token()}`, ...(init.headers as Record<string, string>) },
  });
  if (res.status === 401) {
    localStorage.removeItem(TOKEN);
    token();
  }
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T & ApiError, res };
}

/**
 * A 502, 503 or 504 is the platform not answering now (a process restarting, a store stalled, the router giving up
 * on it), neither a yes nor a no: the page asks again rather than telling the buyer they were refused.
 */
const unavailable = (status: number) => status === 502 || status === 503 || status === 504;

// ---- what this browser keeps for the buyer, and signing out
const ADMISSION = 'onsale.admission.';
const PRESALE_CODE = 'onsale.presale.';
/**
 * The buyer's own keys: the token, each event's admission and presale access code. The device id
 * ('onsale.device') is the browser's, not the buyer's: it stays, or signing out would reset the presale's limit
 * of accounts per device.
 */
const buyerKeys = () =>
  Array.from({ length: localStorage.length }, (_, i) => localStorage.key(i) ?? '').filter(
    (k) => k === TOKEN || k.startsWith(ADMISSION) || k.startsWith(PRESALE_CODE),
  );

/** On a shared computer the next person must find nothing of this buyer's: every key goes, then this page. */
function signOut() {
  for (const k of buyerKeys()) localStorage.removeItem(k);
  location.replace('/shop/signed-out');
}

/** An admission past its expiry admits nothing more; until then it stays, as the buyer may hold again with it. */
function dropExpiredAdmissions() {
  for (const k of buyerKeys().filter((k) => k.startsWith(ADMISSION))) {
    let expiresAt = Number.NaN;
    try {
      expiresAt = Date.parse((JSON.parse(localStorage.getItem(k) ?? '{}') as { expiresAt?: string }).expiresAt ?? '');
    } catch {}
    if (!(expiresAt > Date.now())) localStorage.removeItem(k);
  }
}

function whoAmI() {
  const t = localStorage.getItem(TOKEN);
  if (!t) return;
  say('who', `Signed in as ${JSON.parse(atob(t.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).sub}`);
  const out = $<HTMLButtonElement>('sign-out');
  if (!out) return;
  out.hidden = false;
  out.addEventListener('click', signOut);
}

/** Signed out in another tab, or this page restored from the back/forward cache after it: the buyer's view goes. */
function leaveWhenSignedOut() {
  const gone = () => {
    if (body.page !== 'signed-out' && $('who')?.textContent && !localStorage.getItem(TOKEN))
      location.replace('/shop/signed-out');
  };
  addEventListener('storage', gone);
  addEventListener('pageshow', (e) => {
    if (e.persisted) gone();
  });
}

// ---- sign-in hand-off: keep the token, leave this page out of the history
function signedIn() {
  const el = document.querySelector<HTMLElement>('[data-buyer-token]');
  if (!el) return;
  localStorage.setItem(TOKEN, el.dataset.buyerToken ?? '');
  location.replace(el.dataset.next ?? '/shop/orders');
}

// ---- waiting room
interface QueueStatus {
  status: 'waiting' | 'released' | 'expired' | 'skipped' | 'revoked' | 'not_in_queue';
  roomOpen: boolean;
  position: number | null;
  peopleAhead: number | null;
  estimatedWaitSeconds: number | null;
  soldOutForNow: boolean;
  paused: boolean;
  onsaleAt: string | null;
  admission: { token: string; expiresAt: string } | null;
  message: string;
}
const admissionKey = `onsale.admission.${eventId}`;

function wait(seconds: number | null) {
  if (seconds === null) return 'working it out…';
  if (seconds < 60) return 'less than a minute';
  const m = Math.round(seconds / 60);
  return m === 1 ? 'about 1 minute' : `about ${m} minutes`;
}

async function queue() {
  token();
  const go = $<HTMLAnchorElement>('choose-seats')!;
  let joined = false;
  let failures = 0;
  for (;;) {
    try {
      // Joining is idempotent per buyer: after a refresh it answers with the place already held.
      const r = joined
        ? await api<QueueStatus>(`/events/${eventId}/queue/me`, { cache: 'no-store' })
        : await api<QueueStatus>(`/events/${eventId}/queue`, { method: 'POST', headers: presaleCodeHeader() });
      if (unavailable(r.status) || r.status === 429) {
        say('queue-problem', 'The waiting room is busy. Your place is kept; retrying…');
        await sleep(Number(r.res.headers.get('retry-after') ?? 2) * 1000);
        continue;
      }
      if (r.status >= 400) {
        say('queue-state', `You cannot join this waiting room: ${r.body.error?.message ?? r.status}.`);
        document.body.dataset.queue = 'refused';
        return;
      }
      joined = true;
      failures = 0;
      say('queue-problem', '');
      const s = r.body;
      say('position', s.position === null ? '—' : String(s.position));
      say('ahead', s.peopleAhead === null ? '—' : String(s.peopleAhead));
      say('estimate', s.admission ? 'now' : wait(s.estimatedWaitSeconds));
      ready();
      document.body.dataset.queue = s.admission ? 'through' : s.status;
      if (s.admission) {
        localStorage.setItem(admissionKey, JSON.stringify(s.admission));
        say('queue-state', "You're through! Choose your seats before your turn expires.");
        go.hidden = false;
        go.focus();
        return;
      }
      if (s.status === 'revoked' || s.status === 'expired' || s.status === 'skipped') {
        say('queue-state', `Your place was not kept: ${s.message}`);
        return;
      }
      if (s.paused) say('queue-state', 'The sale is paused by the organiser. Keep this page open: your place is kept.');
      else if (s.soldOutForNow)
        say('queue-state', 'Sold out for now. Seats other buyers let go come back; your place is kept.');
      else if (!s.roomOpen) say('queue-state', `The waiting room is not open yet. ${s.message}`);
      else say('queue-state', "You're in the queue. This page updates by itself.");
    } catch (err) {
      if ((err as Error).message === 'signing in') return;
      failures++;
      say('queue-problem', 'Connection lost. Your place is kept; reconnecting…');
    }
    await sleep(Math.min(1500 * 2 ** failures, 10_000));
  }
}

// ---- presale: registration, then the draw's outcome (an access code, a waitlist place, or not selected)
interface PresaleOutcome {
  registrationOpensAt: string;
  registrationClosesAt: string;
  presaleEndsAt: string;
  outcome: 'not_registered' | 'registered' | 'invited' | 'waitlisted' | 'not_selected';
  waitlistAhead: number | null;
  invitation: { accessCode: string; status: string; validFrom: string; expiresAt: string } | null;
}
const presaleCodeKey = `onsale.presale.${eventId}`;
const REGISTRATION_REFUSALS: Record<string, string> = {
  already_registered: 'This account is already registered.',
  accounts_per_ip_exceeded: 'Too many accounts have registered from your network.',
  accounts_per_device_exceeded: 'Too many accounts have registered from this device.',
};
const at = (iso: string) => new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });

/** Until the presale ends, joining needs the account's access code: the presale page keeps it for the queue page. */
function presaleCodeHeader(): Record<string, string> {
  const code = localStorage.getItem(presaleCodeKey);
  return code ? { 'x-presale-code': code } : {};
}

/** The browser's own stable id, for the presale's limit of accounts per device. */
function deviceId(): string {
  let id = localStorage.getItem('onsale.device');
  if (!id) {
    id = crypto.randomUUID();
    localStorage.setItem('onsale.device', id);
  }
  return id;
}

function showPresale(p: PresaleOutcome) {
  const now = Date.now();
  const open = now >= Date.parse(p.registrationOpensAt) && now < Date.parse(p.registrationClosesAt);
  $('presale-register')!.hidden = !(p.outcome === 'not_registered' && open);
  $('presale-code-line')!.hidden = p.outcome !== 'invited';
  $('presale-join')!.hidden = p.outcome !== 'invited';
  document.body.dataset.presale = p.outcome;
  if (p.outcome === 'not_registered') {
    if (open) say('presale-state', `Registration is open until ${at(p.registrationClosesAt)}.`);
    else if (now < Date.parse(p.registrationOpensAt))
      say('presale-state', `Registration opens ${at(p.registrationOpensAt)}.`);
    else say('presale-state', 'Registration has closed. The general sale follows the presale.');
  } else if (p.outcome === 'registered') {
    say(
      'presale-state',
      `You're registered. The draw is held when registration closes, ${at(p.registrationClosesAt)}.`,
    );
  } else if (p.outcome === 'invited' && p.invitation) {
    localStorage.setItem(presaleCodeKey, p.invitation.accessCode);
    say('presale-code', p.invitation.accessCode);
    say(
      'presale-state',
      `You're invited to the presale! Your code works from ${at(p.invitation.validFrom)} until ${at(p.invitation.expiresAt)}.`,
    );
  } else if (p.outcome === 'waitlisted') {
    const ahead = p.waitlistAhead === null ? '' : ` with ${p.waitlistAhead} ahead of you`;
    say('presale-state', `You're on the waitlist${ahead}. If an invitation lapses, it is offered to you here.`);
  } else {
    say('presale-state', `You were not selected in the draw. The general sale follows, after ${at(p.presaleEndsAt)}.`);
  }
}

async function presale() {
  token();
  const register = $<HTMLButtonElement>('presale-register')!;
  register.addEventListener('click', async () => {
    register.disabled = true;
    const r = await api<PresaleOutcome>(`/events/${eventId}/presale/registrations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ deviceId: deviceId() }),
    }).catch(() => undefined);
    register.disabled = false;
    if (!r || unavailable(r.status)) {
      say('presale-problem', 'We could not reach the box office to register you. Please press Register again.');
      return;
    }
    if (r.status === 201) {
      say('presale-problem', '');
      showPresale(r.body);
      return;
    }
    const reason = String(r.body.error?.details?.reason ?? '');
    say('presale-problem', REGISTRATION_REFUSALS[reason] ?? `Not registered: ${r.body.error?.message ?? r.status}.`);
  });
  const r = await api<PresaleOutcome>(`/events/${eventId}/presale/me`, { cache: 'no-store' });
  if (r.status === 409 && r.body.error?.details?.reason === 'no_presale') {
    say('presale-state', 'This onsale has no presale: join the waiting room when it opens.');
    $('presale-join')!.hidden = false;
  } else if (r.status >= 400)
    say('presale-problem', `Your presale could not be read: ${r.body.error?.message ?? r.status}.`);
  else showPresale(r.body);
  ready();
}

// ---- seat picker
interface SeatMap {
  sections: { section: string; x: number; width: number; height: number; rows: { row: string; seats: Seat[] }[] }[];
  gaAreas: { id: string; name: string; tier: string }[];
}
interface Seat {
  id: string;
  label: string;
  tier: string;
  x: number;
  y: number;
}
interface Tier {
  code: string;
  name: string;
  currency: string;
  buyerPays: number;
}
interface Bitmaps {
  asOf: string;
  sections: { section: string; bitmap: string }[];
}
const SVG = 'http://www.w3.org/2000/svg';

async function seats() {
  // Kept in localStorage, as the buyer token is: another tab or a reopened page picks the seats with it.
  const admission = JSON.parse(localStorage.getItem(admissionKey) ?? 'null') as {
    token: string;
    expiresAt: string;
  } | null;
  if (!admission || Date.parse(admission.expiresAt) < Date.now()) {
    location.assign(`/shop/events/${eventId}/queue`);
    return;
  }
  token();
  const [page, map] = await Promise.all([
    fetch(`/events/${eventId}/catalog`).then((r) => r.json() as Promise<{ tiers: Tier[] }>),
    fetch(`/events/${eventId}/catalog/seat-map`).then((r) => r.json() as Promise<SeatMap>),
  ]);
  const tiers = new Map(page.tiers.map((t) => [t.code, t]));
  const currency = page.tiers[0]?.currency ?? 'eur';
  const byId = new Map<string, Seat & { section: string; row: string }>();
  for (const s of map.sections)
    for (const r of s.rows) for (const x of r.seats) byId.set(x.id, { ...x, section: s.section, row: r.row });
  const chosen = new Set<string>();
  let free = new Set<string>();
  // Seats a hold was just refused for: taken whatever a cached availability document (a second stale) still says.
  const lost = new Map<string, number>();
  const holder = $('seat-map')!;
  const width = Math.max(1, ...map.sections.map((s) => s.x + s.width));
  const height = Math.max(1, ...map.sections.map((s) => s.height)) + 1;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `-0.5 -1.2 ${width + 1} ${height + 1.4}`);
  svg.setAttribute('role', 'group');
  svg.setAttribute('aria-label', 'Seat map');
  const nodes = new Map<string, SVGRectElement>();
  for (const s of map.sections) {
    const title = document.createElementNS(SVG, 'text');
    title.setAttribute('x', String(s.x));
    title.setAttribute('y', '-0.4');
    title.setAttribute('class', 'section-name');
    title.textContent = `Section ${s.section}`;
    svg.append(title);
    for (const r of s.rows)
      for (const seat of r.seats) {
        const rect = document.createElementNS(SVG, 'rect');
        rect.setAttribute('x', String(seat.x + 0.1));
        rect.setAttribute('y', String(seat.y + 0.1));
        rect.setAttribute('width', '0.8');
        rect.setAttribute('height', '0.8');
        rect.setAttribute('rx', '0.2');
        rect.setAttribute('role', 'checkbox');
        rect.setAttribute('data-seat', seat.id);
        rect.setAttribute('data-label', seat.label);
        const tier = tiers.get(seat.tier);
        rect.setAttribute(
          'aria-label',
          `Section ${s.section}, row ${r.row}, seat ${seat.label}, ${tier?.name ?? seat.tier} ${tier ? money(tier.buyerPays, tier.currency) : ''}`,
        );
        rect.classList.add(`tier-${seat.tier}`);
        const toggle = () => {
          if (!free.has(seat.id)) return;
          if (chosen.has(seat.id)) chosen.delete(seat.id);
          else if (chosen.size < 8) chosen.add(seat.id);
          paint();
        };
        rect.addEventListener('click', toggle);
        rect.addEventListener('keydown', (e) => {
          if (e.key === ' ' || e.key === 'Enter') {
            e.preventDefault();
            toggle();
          }
        });
        nodes.set(seat.id, rect);
        svg.append(rect);
      }
  }
  holder.textContent = '';
  holder.append(svg);
  holder.removeAttribute('aria-busy');
  const gaInputs = [...document.querySelectorAll<HTMLInputElement>('[data-ga-area]')];
  const holdButton = $<HTMLButtonElement>('hold')!;

  function paint() {
    for (const [id, rect] of nodes) {
      const isFree = free.has(id);
      if (!isFree) chosen.delete(id);
      rect.classList.toggle('taken', !isFree);
      rect.classList.toggle('chosen', chosen.has(id));
      rect.setAttribute('aria-checked', String(chosen.has(id)));
      rect.setAttribute('aria-disabled', String(!isFree));
      if (isFree) rect.setAttribute('tabindex', '0');
      else rect.removeAttribute('tabindex');
    }
    const list = $('selection')!;
    list.textContent = '';
    let total = 0;
    for (const id of chosen) {
      const s = byId.get(id)!;
      const t = tiers.get(s.tier);
      total += t?.buyerPays ?? 0;
      const li = document.createElement('li');
      li.textContent = `Section ${s.section}, row ${s.row}, seat ${s.label}: ${t ? money(t.buyerPays, t.currency) : ''}`;
      list.append(li);
    }
    for (const input of gaInputs) {
      const n = Math.max(0, Math.floor(Number(input.value) || 0));
      total += n * (tiers.get(input.dataset.tier ?? '')?.buyerPays ?? 0);
    }
    say('total', money(total, currency));
    const places = chosen.size + gaInputs.reduce((n, i) => n + Math.max(0, Math.floor(Number(i.value) || 0)), 0);
    holdButton.disabled = places === 0 || places > 8;
    holder.dataset.free = String(free.size);
  }

  /**
   * The availability document: a bit per seat of each section, its seats sorted by id, most significant bit first.
   * Answers when the cell read it (ms), or 0 when it could not be read.
   */
  async function refresh(cache: RequestCache = 'default'): Promise<number> {
    const res = await fetch(`/events/${eventId}/availability/seats`, { cache });
    if (!res.ok) return 0;
    const doc = (await res.json()) as Bitmaps;
    const next = new Set<string>();
    for (const section of doc.sections) {
      const ids = map.sections
        .find((s) => s.section === section.section)
        ?.rows.flatMap((r) => r.seats.map((x) => x.id))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const bits = Uint8Array.from(atob(section.bitmap), (ch) => ch.charCodeAt(0));
      ids?.forEach((id, i) => {
        if ((bits[i >> 3]! >> (7 - (i & 7))) & 1) next.add(id);
      });
    }
    for (const [id, at] of lost) if (Date.now() - at < 10_000) next.delete(id);
    free = next;
    paint();
    return Date.parse(doc.asOf);
  }
  for (const input of gaInputs) input.addEventListener('input', paint);
  await refresh('no-cache');
  ready();
  setInterval(() => void refresh().catch(() => {}), 5000);

  // One idempotency key per selection until an answer says what became of it. A 502/503/504 or a lost connection
  // says nothing: the hold may have been placed (a cell whose database stalled commits once it answers again), so
  // the retry must find that hold, not place a second one or tell the buyer their own seats were just taken.
  let attempt: { body: string; key: string } | undefined;
  const placeHold = async (body: string) => {
    if (attempt?.body !== body) attempt = { body, key: crypto.randomUUID() };
    const { key } = attempt;
    for (let tries = 1; ; tries++) {
      const hold = await api<{ orderId: string }>(`/events/${eventId}/holds`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-admission-token': admission.token,
          'idempotency-key': key,
        },
        body,
      }).catch(() => undefined);
      if (hold && !unavailable(hold.status)) {
        attempt = undefined;
        return hold;
      }
      if (tries === 4) return hold;
      say('seat-problem', 'Holding your seats is taking longer than usual. Still trying…');
      await sleep(Math.min(Number(hold?.res.headers.get('retry-after')) || tries, 5) * 1000);
    }
  };

  holdButton.addEventListener('click', async () => {
    holdButton.disabled = true;
    say('seat-problem', '');
    const ga = gaInputs
      .map((i) => ({ areaId: i.dataset.gaArea ?? '', quantity: Math.floor(Number(i.value) || 0) }))
      .filter((g) => g.quantity > 0);
    const requested = [...chosen];
    const hold = await placeHold(
      JSON.stringify({ ...(requested.length ? { seatIds: requested } : {}), ...(ga.length ? { ga } : {}) }),
    );
    if (!hold || unavailable(hold.status)) {
      say(
        'seat-problem',
        'We could not reach the box office to hold your seats. Your choice is kept: press the button again in a moment.',
      );
    } else if (hold.status === 202 || hold.status === 200 || hold.status === 201) {
      location.assign(`/shop/events/${eventId}/orders/${hold.body.orderId}`);
      return;
    } else if (hold.status === 409 && hold.body.error?.code === 'seats_unavailable') {
      const err = hold.body.error;
      const taken = (err.details?.seatIds as string[] | undefined) ?? [];
      for (const id of taken) lost.set(id, Date.now());
      const names = taken.map((id) => {
        const s = byId.get(id);
        return s ? `section ${s.section}, row ${s.row}, seat ${s.label}` : 'a seat';
      });
      say(
        'seat-problem',
        `Sorry, another buyer just took ${names.join(' and ') || 'one of your seats'}. The map now shows the seats still free: please choose again.`,
      );
      // The cell serves a document up to a second old: one read before the refusal would still show the other
      // buyer's seats free, so the map waits (briefly, boundedly) for one read after it.
      const checkedAt = Date.parse(String(err.details?.checkedAt)) || 0;
      for (let tries = 0; (await refresh('no-store')) < checkedAt && tries < 5; tries++) await sleep(400);
      document.body.dataset.lost = 'true';
    } else if (hold.status === 403) {
      localStorage.removeItem(admissionKey);
      say('seat-problem', 'Your turn has expired. Taking you back to the waiting room; your place is kept…');
      setTimeout(() => location.assign(`/shop/events/${eventId}/queue`), 2000);
    } else {
      say('seat-problem', `Your seats could not be held: ${hold.body.error?.message ?? `error ${hold.status}`}.`);
    }
    paint();
    $('seat-problem')?.scrollIntoView({ block: 'center' });
  });
}

// ---- order: progress, checkout with Stripe, tickets
interface Order {
  status: string;
  amount: number;
  currency: string;
  failureReason: string | null;
  holdExpiresAt: string | null;
  seats: { seatId: string; label: string; section: string; row: string; price: number }[];
  gaPlaces: { area: string; quantity: number; price: number }[];
  tickets: { ticketId: string; seatId: string | null; ga: { area: string; unit: number } | null }[];
  payment: { paymentIntentId: string; status: string; clientSecret?: string } | null;
}
const STEP: Record<string, number> = { pending_payment: 1, confirmed: 2, paid: 3, ticketed: 4 };
const ENDED: Record<string, string> = {
  expired: 'Your hold expired before payment; the seats went back on sale.',
  released: 'You released these seats.',
  failed: 'The payment failed; the seats went back on sale.',
  canceled: 'This order was cancelled.',
  refunding: 'This order is being refunded.',
  refunded: 'This order was refunded.',
};

async function order() {
  token();
  const orderId = body.order ?? '';
  const base = `/events/${eventId}/orders/${orderId}`;
  const form = $<HTMLFormElement>('checkout')!;
  let paying = false;
  let drawn = false;
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (paying) return;
    const view = (await api<Order>(base)).body;
    const secret = view.payment?.clientSecret;
    if (!view.payment || !secret) return;
    paying = true;
    $<HTMLButtonElement>('pay')!.disabled = true;
    say('order-problem', '');
    const card = (new FormData(form).get('card') as string) ?? 'pm_card_visa';
    try {
      const res = await fetch(`${body.stripeUrl}/v1/payment_intents/${view.payment.paymentIntentId}/confirm`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${body.stripeKey}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ client_secret: secret, payment_method: card }),
      });
      const answer = (await res.json()) as { error?: { message?: string } };
      if (!res.ok) say('order-problem', `Payment refused: ${answer.error?.message ?? res.status}`);
      else {
        form.hidden = true;
        say('order-state', 'Payment authorised. Confirming your seats…');
      }
    } catch {
      say('order-problem', 'The payment service could not be reached. Nothing was charged; try again.');
    }
    paying = false;
    $<HTMLButtonElement>('pay')!.disabled = false;
  });

  for (let failures = 0; ; ) {
    try {
      const r = await api<Order>(base, { cache: 'no-store' });
      if (r.status === 404) {
        say('order-state', 'No such order for this account.');
        return;
      }
      // A 503 while a cell restarts or a store recovers: retried like a lost connection.
      if (r.status !== 200) throw new Error(`order: ${r.status}`);
      const v = r.body;
      // Back online: the connection notice goes; a refused payment's message stays until the buyer pays again.
      if (failures > 0) say('order-problem', '');
      failures = 0;
      document.body.dataset.status = v.status;
      const step = STEP[v.status] ?? 0;
      for (const li of document.querySelectorAll<HTMLElement>('[data-step]')) {
        const i = ['held', 'payment', 'paid', 'ticketed'].indexOf(li.dataset.step ?? '');
        li.classList.toggle('done', i < step);
        if (i === Math.min(step, 3)) li.setAttribute('aria-current', 'step');
        else li.removeAttribute('aria-current');
      }
      if (!drawn) {
        const list = $('order-seats')!;
        for (const s of v.seats) {
          const li = document.createElement('li');
          li.textContent = `Section ${s.section}, row ${s.row}, seat ${s.label}: ${money(s.price, v.currency)}`;
          list.append(li);
        }
        for (const g of v.gaPlaces) {
          const li = document.createElement('li');
          li.textContent = `${g.area} × ${g.quantity}: ${money(g.price * g.quantity, v.currency)}`;
          list.append(li);
        }
        say('order-total', money(v.amount, v.currency));
        drawn = true;
        ready();
      }
      if (ENDED[v.status]) {
        form.hidden = true;
        say('order-state', ENDED[v.status]!);
        return;
      }
      if (v.status === 'pending_payment') {
        const ready = Boolean(v.payment?.clientSecret);
        if (ready && form.hidden && !paying) {
          form.hidden = false;
          say('pay', `Pay ${money(v.amount, v.currency)}`);
        }
        // The time the hold lapses, in the buyer's own clock: a countdown would be announced every second.
        const held = v.holdExpiresAt
          ? `Your seats are held until ${new Date(v.holdExpiresAt).toLocaleTimeString('en-GB', { timeStyle: 'short' })}.`
          : 'Your seats are held.';
        if (!paying && form.hidden) say('order-state', `${held} Preparing the payment…`);
        else if (!paying && !$('order-problem')?.textContent) say('order-state', `${held} Pay to confirm them.`);
      } else if (v.status === 'ticketed') {
        form.hidden = true;
        say('order-state', 'Your tickets are ready.');
        await showTickets(base, v);
        return;
      } else {
        form.hidden = true;
        say(
          'order-state',
          v.status === 'paid' ? 'Paid. Issuing your tickets…' : 'Payment authorised. Confirming your seats…',
        );
      }
    } catch (err) {
      if ((err as Error).message === 'signing in') return;
      failures++;
      say('order-problem', 'Connection lost; reconnecting…');
    }
    await sleep(Math.min(1000 * 2 ** failures, 8000));
  }
}

/** Tickets need the buyer's token, so they are fetched here and shown from blob: URLs. */
async function showTickets(base: string, v: Order) {
  const section = $('tickets')!;
  const blobOf = async (path: string) => {
    const res = await fetch(path, { headers: { authorization: `Bearer ${token()}` } });
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
    return URL.createObjectURL(await res.blob());
  };
  const pdf = $<HTMLAnchorElement>('tickets-pdf')!;
  pdf.href = await blobOf(`${base}/tickets.pdf`);
  pdf.download = 'tickets.pdf';
  const seats = new Map(v.seats.map((s) => [s.seatId, s]));
  const list = $('ticket-list')!;
  for (const t of v.tickets) {
    const s = t.seatId ? seats.get(t.seatId) : null;
    const name = s ? `Section ${s.section}, row ${s.row}, seat ${s.label}` : `${t.ga?.area} place ${t.ga?.unit}`;
    const li = document.createElement('li');
    const img = document.createElement('img');
    img.src = await blobOf(`${base}/tickets/${t.ticketId}/qr.svg`);
    img.alt = `QR code of the ticket for ${name}`;
    img.width = 160;
    img.height = 160;
    const a = document.createElement('a');
    a.href = img.src;
    a.download = `ticket-${t.ticketId}.svg`;
    a.textContent = `QR code: ${name}`;
    li.append(img, a);
    list.append(li);
  }
  section.hidden = false;
}

// ---- my orders, from every cell (the edge gathers them)
const STATUS_WORDS: Record<string, string> = {
  pending_payment: 'Awaiting payment',
  confirmed: 'Confirming',
  paid: 'Paid',
  ticketed: 'Tickets ready',
  ...Object.fromEntries(Object.keys(ENDED).map((k) => [k, k[0]!.toUpperCase() + k.slice(1)])),
};

/** A page of "my orders" added to the table: the first when the page loads, the next each time the buyer asks. */
async function orders(after?: string) {
  token();
  const r = await api<{
    orders: {
      orderId: string;
      eventId: string;
      eventName: string;
      eventStartsAt: string;
      status: string;
      amount: number;
      currency: string;
      createdAt: string;
    }[];
    nextAfter: string | null;
    unavailableCells: string[];
  }>(`/me/orders${after ? `?after=${encodeURIComponent(after)}` : ''}`, { cache: 'no-store' });
  if (r.status !== 200) {
    say('orders-state', `Your orders could not be loaded: ${r.body.error?.message ?? r.status}`);
    return;
  }
  const { orders: list, nextAfter, unavailableCells } = r.body;
  const table = $<HTMLTableElement>('orders')!;
  const tbody = table.tBodies[0]!;
  const date = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium' });
  for (const o of list) {
    const tr = tbody.insertRow();
    tr.dataset.order = o.orderId;
    const a = document.createElement('a');
    a.href = `/shop/events/${o.eventId}/orders/${o.orderId}`;
    a.textContent = o.eventName;
    tr.insertCell().append(a);
    tr.insertCell().textContent = date.format(new Date(o.eventStartsAt));
    tr.insertCell().textContent = STATUS_WORDS[o.status] ?? o.status;
    tr.insertCell().textContent = money(o.amount, o.currency);
    tr.insertCell().textContent = date.format(new Date(o.createdAt));
  }
  const shown = tbody.rows.length;
  table.hidden = shown === 0;
  const older = $<HTMLButtonElement>('older-orders')!;
  older.hidden = !nextAfter;
  older.disabled = false;
  older.onclick = () => {
    older.disabled = true;
    void orders(nextAfter ?? undefined);
  };
  ready();
  say(
    'orders-state',
    (shown
      ? `${shown} order${shown === 1 ? '' : 's'}${nextAfter ? ' shown; older ones follow.' : '.'}`
      : 'You have no orders yet.') +
      (unavailableCells.length ? ' Some orders may be missing for now; try again in a minute.' : ''),
  );
}

const pages: Record<string, () => unknown> = { 'signed-in': signedIn, presale, queue, seats, order, orders };
dropExpiredAdmissions();
whoAmI();
leaveWhenSignedOut();
const run = pages[body.page ?? ''];
if (run) void run();
else ready();
