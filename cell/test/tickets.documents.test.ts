import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DeleteObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { EventLoad } from '@onsale/contracts';
import type { RunningRouter } from '@onsale/router/router';
import { Resvg } from '@resvg/resvg-js';
import { decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import jsQR from 'jsqr';
import { PDFDocument } from 'pdf-lib';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type FakeControlPlane, routerFor, startFakeControlPlane } from '../../router/test/fakes';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { envelope, inject, recordPaymentIntent } from '../../test/support/saga';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { repoRoot, serviceEnv } from '../../test/support/services';
import { fastRetry, startCellWorkers, ticketKeyJson } from '../../test/support/workers';
import { placeHold } from '../src/holds/place-hold';
import { runConsumer } from '../src/messaging/consumer-runner';
import { documentHandlers } from '../src/tickets/documents';
import { ticketHandlers } from '../src/tickets/issue-tickets';
import { qrPng } from '../src/tickets/qr';
import { checkTicket, loadState, syncScanner } from '../src/tickets/scanner';
import { publicTicketJwks, ticketSigner, verifyVoidList, voidListSigner } from '../src/tickets/signing';
import { createTicketStore, TicketStoreConfig } from '../src/tickets/store';

/*
 * Tickets people can use, on the real PostgreSQL, Kafka and s3rver: the ticket worker (issuing and
 * documents in one consumer, as cell/src/tickets/main.ts runs it) stores one PDF per order; the
 * buyer fetches it and each QR code from the cell's routes; the door scanner (`scan-ticket`, as a
 * real process) syncs keys and the signed void list and checks QR codes offline.
 */

const cellId = uniqueCellId('tdoc');
const services = serviceEnv();
const storeConfig = TicketStoreConfig.parse({
  TICKETS_BUCKET: `tickets-${cellId}`,
  S3_ENDPOINT: services.S3_ENDPOINT,
  S3_REGION: services.S3_REGION,
  S3_ACCESS_KEY_ID: services.S3_ACCESS_KEY_ID,
  S3_SECRET_ACCESS_KEY: services.S3_SECRET_ACCESS_KEY,
});
const store = createTicketStore(storeConfig);
const s3 = new S3Client({
  region: storeConfig.S3_REGION,
  endpoint: storeConfig.S3_ENDPOINT,
  forcePathStyle: true,
  credentials: { accessKeyId: storeConfig.S3_ACCESS_KEY_ID!, secretAccessKey: storeConfig.S3_SECRET_ACCESS_KEY! },
});

let identity: TestIdentity;
let cell: TestCell;
let ticketKey: string;
let event: EventLoad;
let workers: Awaited<ReturnType<typeof startCellWorkers>>;
let consumer: Awaited<ReturnType<typeof runConsumer>>;
let controlPlane: FakeControlPlane;
let router: RunningRouter;

beforeAll(async () => {
  await store.ensureBucket();
  ticketKey = await ticketKeyJson('tickets-doc-1');
  identity = await startIdentity();
  cell = await startTestCell(identity, {
    cellId,
    env: {
      TICKET_PUBLIC_JWKS: JSON.stringify(publicTicketJwks(ticketKey)),
      TICKETS_BUCKET: storeConfig.TICKETS_BUCKET,
      S3_ENDPOINT: storeConfig.S3_ENDPOINT!,
      S3_REGION: storeConfig.S3_REGION,
      S3_ACCESS_KEY_ID: storeConfig.S3_ACCESS_KEY_ID!,
      S3_SECRET_ACCESS_KEY: storeConfig.S3_SECRET_ACCESS_KEY!,
    },
  });
  await provisionCellTopics(cellId);
  event = await loadIntoCell(cell, eventLoad(10, { name: 'The Tickets Tour' }));
  workers = await startCellWorkers(cellId, cell.db.url, { relay: true });
  consumer = await runConsumer({
    name: 'tickets',
    ctx: workers.ctx,
    broker: workers.broker,
    handlers: {
      ...ticketHandlers(await ticketSigner(ticketKey), workers.ctx.log),
      ...documentHandlers({ store, signVoids: await voidListSigner(ticketKey), cellId, log: workers.ctx.log }),
    },
    retry: fastRetry,
  });
  // The edge router in front of the cell, with the directory placing the event there.
  controlPlane = await startFakeControlPlane();
  controlPlane.addCell(cellId, cell.url);
  controlPlane.placeEvent(event.eventId, cellId);
  router = await routerFor(controlPlane, identity.admissionJwksUrl);
}, 60_000);
afterAll(async () => {
  await router?.close();
  await controlPlane?.close();
  await consumer?.stop();
  await workers?.stop();
  await cell?.close();
  await identity?.close();
  await dropCellTopics(cellId);
});

/** An order the saga has brought to `paid` (hold confirmed, PaymentIntent recorded), and its tickets requested. */
async function paidOrder(load: EventLoad, seatIds: string[], userId = `fan-${randomUUID()}`) {
  const { body } = await placeHold(cell.api.services.ctx, {
    eventId: load.eventId,
    userId,
    idempotencyKey: randomUUID(),
    seatIds,
    correlationId: randomUUID(),
  });
  await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE id = $1`, [body.holdId]);
  await recordPaymentIntent(cell, body.orderId, 5_000 * seatIds.length);
  await cell.db.query(`UPDATE orders SET status = 'paid' WHERE id = $1`, [body.orderId]);
  return { orderId: body.orderId as string, userId };
}

const requestTickets = (load: EventLoad, orderId: string, seatIds: string[]) =>
  inject(
    workers.broker,
    cellId,
    envelope(cellId, 'TicketIssueRequested', orderId, { orderId, eventId: load.eventId, seatIds }),
  );

const ticketsOf = (orderId: string) =>
  cell.db.query<{ id: string; token: string }>('SELECT id, token FROM tickets WHERE order_id = $1 ORDER BY id', [
    orderId,
  ]);

async function storedPdf(load: EventLoad, orderId: string) {
  const key = store.keys.orderPdf(load.eventId, orderId);
  await eventually(() => store.exists(key), 'the order PDF in S3');
  return (await store.get(key))!;
}

const asBuyer = async (userId: string, path: string) =>
  fetch(`${cell.url}${path}`, { headers: { authorization: `Bearer ${await identity.buyerToken(userId)}` } });

/** A real decoder on real pixels: the SVG the route serves, rasterized by resvg, read by jsQR. */
function decodeSvg(svg: string): string | null {
  const png = PNG.sync.read(
    new Resvg(svg, { fitTo: { mode: 'width', value: 500 }, background: '#fff' }).render().asPng(),
  );
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null;
}

/**
 * `pnpm --filter @onsale/cell scan-ticket ...`, as a door device runs it. Asynchronous: the cell it
 * syncs from answers in this very process.
 */
function scanTicket(stateDir: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', resolve(repoRoot, 'cell/src/tickets/scan-main.ts'), ...args],
    {
      cwd: repoRoot,
      env: { ...process.env, SCANNER_STATE_DIR: stateDir, INIT_CWD: repoRoot },
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise((r) => child.on('close', (code) => r({ code, out, err })));
}

/** A scanner's state directory, removed when the test ends. */
const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanner-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe('ticket documents', () => {
  it('stores one PDF per paid order (a page per ticket) and serves it to the owner only; 404 until issued', async () => {
    const seats = event.seats.slice(0, 3).map((s) => s.id);
    const { orderId, userId } = await paidOrder(event, seats);
    const path = `/events/${event.eventId}/orders/${orderId}/tickets.pdf`;

    const early = await asBuyer(userId, path);
    expect(early.status).toBe(404);
    expect((await early.json()).error.code).toBe('tickets_not_issued');

    await requestTickets(event, orderId, seats);
    const stored = await storedPdf(event, orderId);
    const pdf = await PDFDocument.load(stored);
    expect(pdf.getPageCount()).toBe(3);
    expect(pdf.getTitle()).toBe('Tickets: The Tickets Tour');
    expect(pdf.getSubject()).toBe(`order ${orderId}`);

    const own = await asBuyer(userId, path);
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await own.arrayBuffer()).equals(Buffer.from(stored))).toBe(true);

    const stranger = await asBuyer(`fan-${randomUUID()}`, path);
    expect(stranger.status).toBe(404);
    expect((await stranger.json()).error.code).toBe('not_found');
    expect((await fetch(`${cell.url}${path}`)).status).toBe(401);
  });

  it('through the edge router: the owner gets the PDF and the QR codes, a stranger nothing, the scanner its sync', async () => {
    const seats = [event.seats[8]!.id, event.seats[9]!.id];
    const { orderId, userId } = await paidOrder(event, seats);
    await requestTickets(event, orderId, seats);
    const stored = await storedPdf(event, orderId);
    const viaRouter = async (who: string, path: string) =>
      fetch(`${router.url}${path}`, { headers: { authorization: `Bearer ${await identity.buyerToken(who)}` } });

    const pdf = await viaRouter(userId, `/events/${event.eventId}/orders/${orderId}/tickets.pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await pdf.arrayBuffer()).equals(Buffer.from(stored))).toBe(true);
    const stranger = await viaRouter(`fan-${randomUUID()}`, `/events/${event.eventId}/orders/${orderId}/tickets.pdf`);
    expect(stranger.status).toBe(404);

    const stateDir = tmp();
    await syncScanner({ baseUrl: router.url, eventId: event.eventId, stateDir });
    const state = await loadState(stateDir);
    for (const t of await ticketsOf(orderId)) {
      const qr = await viaRouter(userId, `/events/${event.eventId}/orders/${orderId}/tickets/${t.id}/qr.svg`);
      expect(qr.status).toBe(200);
      expect(await checkTicket(decodeSvg(await qr.text())!, state)).toMatchObject({
        admit: true,
        claims: { tid: t.id },
      });
    }
  });

  it('a redelivered TicketIssued leaves the stored PDF as it was; a lost one is rendered again to the same bytes', async () => {
    const seats = [event.seats[3]!.id, event.seats[4]!.id];
    const { orderId } = await paidOrder(event, seats);
    await requestTickets(event, orderId, seats);
    const first = await storedPdf(event, orderId);
    const key = store.keys.orderPdf(event.eventId, orderId);
    const head = await s3.send(new HeadObjectCommand({ Bucket: storeConfig.TICKETS_BUCKET, Key: key }));
    const ticketIds = (await ticketsOf(orderId)).map((t) => t.id);

    const again = envelope(cellId, 'TicketIssued', orderId, { orderId, ticketIds });
    await inject(workers.broker, cellId, again, 2);
    await eventually(
      async () =>
        (await cell.db.query(`SELECT 1 FROM inbox WHERE consumer = 'tickets' AND event_id = $1`, [again.eventId]))
          .length === 1,
      'the redelivery to be applied',
    );
    const after = await s3.send(new HeadObjectCommand({ Bucket: storeConfig.TICKETS_BUCKET, Key: key }));
    expect(after.ETag).toBe(head.ETag);
    expect(after.LastModified).toEqual(head.LastModified);

    // The object lost (or never written): the next TicketIssued renders it again, byte for byte.
    await s3.send(new DeleteObjectCommand({ Bucket: storeConfig.TICKETS_BUCKET, Key: key }));
    await inject(workers.broker, cellId, envelope(cellId, 'TicketIssued', orderId, { orderId, ticketIds }));
    expect(Buffer.from(await storedPdf(event, orderId)).equals(Buffer.from(first))).toBe(true);
  });

  it("each ticket's QR code decodes to a token the offline scanner admits", async () => {
    const seats = [event.seats[5]!.id, event.seats[6]!.id];
    const { orderId, userId } = await paidOrder(event, seats);
    await requestTickets(event, orderId, seats);
    await storedPdf(event, orderId);
    const stateDir = tmp();
    const sync = await scanTicket(stateDir, '--sync', '--url', cell.url, '--event', event.eventId);
    expect(sync.err).toBe('');
    expect(sync.code).toBe(0);
    expect(sync.out).toMatch(/1 key\(s\), 0 voided/);
    const state = await loadState(stateDir);

    const issued = await ticketsOf(orderId);
    expect(issued).toHaveLength(2);
    for (const t of issued) {
      const res = await asBuyer(userId, `/events/${event.eventId}/orders/${orderId}/tickets/${t.id}/qr.svg`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml');
      const svg = await res.text();
      const decoded = decodeSvg(svg);
      expect(decoded).not.toBeNull();
      const verdict = await checkTicket(decoded!, state);
      expect(verdict).toMatchObject({ admit: true, claims: { tid: t.id, orderId, eventId: event.eventId } });

      // The command on the image file, as the door runs it (once: each run starts a process).
      if (t !== issued[0]) continue;
      const file = join(stateDir, `${t.id}.svg`);
      writeFileSync(file, svg);
      const scan = await scanTicket(stateDir, file);
      expect(scan.code).toBe(0);
      expect(scan.out).toMatch(new RegExp(`^ADMIT ${t.id} Section `));
    }
    const other = await asBuyer(
      `fan-${randomUUID()}`,
      `/events/${event.eventId}/orders/${orderId}/tickets/${issued[0]!.id}/qr.svg`,
    );
    expect(other.status).toBe(404);
  });

  it('refuses forged tickets: a tampered payload, another key under the same kid, an unknown key, another event', async () => {
    const seats = [event.seats[7]!.id];
    const { orderId } = await paidOrder(event, seats);
    await requestTickets(event, orderId, seats);
    await storedPdf(event, orderId);
    const stateDir = tmp();
    await syncScanner({ baseUrl: cell.url, eventId: event.eventId, stateDir });
    const state = await loadState(stateDir);
    const [ticket] = await ticketsOf(orderId);
    const genuine = ticket!.token;
    expect(await checkTicket(genuine, state)).toMatchObject({ admit: true });

    // Tampered: the seat in the payload changed, the signature kept.
    const [h, p, s] = genuine.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const tampered = [
      h,
      Buffer.from(JSON.stringify({ ...claims, seat: { ...claims.seat, label: 'VIP-1' } })).toString('base64url'),
      s,
    ].join('.');
    expect(await checkTicket(tampered, state)).toMatchObject({ admit: false, reason: 'forged' });

    // Signed by another key that claims the published kid, and by a key nobody published.
    const { kid } = decodeProtectedHeader(genuine);
    for (const k of [kid!, 'tickets-rogue']) {
      const rogue = await ticketSigner(await ticketKeyJson(k));
      const forged = await rogue({ ...claims, tid: claims.tid });
      expect(await checkTicket(forged, state)).toMatchObject({ admit: false, reason: 'forged' });
    }

    // A genuine signature on a ticket for another event (same cell key): refused at this event's door.
    const other = await ticketSigner(ticketKey);
    const elsewhere = await other({ ...claims, eventId: randomUUID() });
    expect(await checkTicket(elsewhere, state)).toMatchObject({ admit: false, reason: 'wrong_event' });
    // A genuine signature on claims that are no ticket's (no order): refused, naming what is missing.
    const { orderId: _orderId, ...noOrder } = claims;
    expect(await checkTicket(await other(noOrder), state)).toMatchObject({
      admit: false,
      reason: 'forged',
      message: expect.stringContaining('(orderId)'),
    });

    // The command on a PNG of the tampered token: decoded by jsQR, refused with its own exit code.
    const file = join(stateDir, 'tampered.png');
    writeFileSync(file, await qrPng(tampered));
    const scan = await scanTicket(stateDir, file);
    expect(scan.code).toBe(3);
    expect(scan.out).toMatch(/^REFUSE forged: /);
    // An unsigned ("alg: none") token is no ticket either.
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'ticket+jwt' })).toString('base64url')}.${p}.`;
    expect(await checkTicket(none, state)).toMatchObject({ admit: false, reason: 'forged' });
  });

  it('a voided ticket is refused once the scanner syncs the signed void list; its routes answer 410', async () => {
    const doomed = await loadIntoCell(cell, eventLoad(4, { name: 'Cancelled Night' }));
    const seats = doomed.seats.slice(0, 2).map((s) => s.id);
    const { orderId, userId } = await paidOrder(doomed, seats);
    await requestTickets(doomed, orderId, seats);
    await storedPdf(doomed, orderId);
    const [first] = await ticketsOf(orderId);
    const stateDir = tmp();
    await eventually(() => store.exists(store.keys.voidList(doomed.eventId)), 'the first void list');
    await syncScanner({ baseUrl: cell.url, eventId: doomed.eventId, stateDir });
    expect(await checkTicket(first!.token, await loadState(stateDir))).toMatchObject({ admit: true });

    const cancel = await fetch(`${cell.url}/internal/events/${doomed.eventId}/sales`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'canceled', reason: 'artist ill' }),
    });
    expect(cancel.status).toBe(200);
    const ids = (await ticketsOf(orderId)).map((t) => t.id);
    const keys = publicTicketJwks(ticketKey);
    const cancelledAt = Date.now();
    await eventually(async () => {
      const list = await store.get(store.keys.voidList(doomed.eventId));
      return list && (await verifyVoidList(new TextDecoder().decode(list), keys)).voided.length === ids.length;
    }, 'the void list to name both tickets');
    console.log(`void list republished ${Date.now() - cancelledAt} ms after the cancel`);

    // Offline, the scanner knows only what it synced: the void reaches it with the next sync.
    expect(await checkTicket(first!.token, await loadState(stateDir))).toMatchObject({ admit: true });
    expect((await scanTicket(stateDir, '--sync', '--url', cell.url, '--event', doomed.eventId)).out).toMatch(
      /2 voided/,
    );
    const refused = await scanTicket(stateDir, '--json', first!.token);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.out)).toMatchObject({ admit: false, reason: 'voided', ticketId: first!.id });

    const pdf = await asBuyer(userId, `/events/${doomed.eventId}/orders/${orderId}/tickets.pdf`);
    expect(pdf.status).toBe(410);
    const body = (await pdf.json()).error;
    expect(body.code).toBe('ticket_voided');
    expect([...body.details.ticketIds].sort()).toEqual([...ids].sort());
    const qr = await asBuyer(userId, `/events/${doomed.eventId}/orders/${orderId}/tickets/${first!.id}/qr.svg`);
    expect(qr.status).toBe(410);
    expect((await qr.json()).error.code).toBe('ticket_voided');
  });

  it('a void list edited in transit is refused at sync', async () => {
    const stateDir = tmp();
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = JSON.parse(ticketKey).kid as string;
    const forgedList = await new SignJWT({ eventId: event.eventId, cell: cellId, voided: [] })
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'ticket-voids+jwt' })
      .setIssuer(`onsale:cell:${cellId}`)
      .setIssuedAt()
      .sign(privateKey);
    // A stand-in for a cache or proxy on the way: the genuine keys, a list someone else signed.
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      if (req.url?.endsWith('/tickets/keys'))
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(publicTicketJwks(ticketKey)));
      else res.writeHead(200, { 'content-type': 'application/jwt' }).end(forgedList);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await expect(
      syncScanner({ baseUrl: `http://127.0.0.1:${port}`, eventId: event.eventId, stateDir }),
    ).rejects.toThrow(/signature/);
    server.close();
  });

  it('a ticket store the cell cannot reach is a 503 with Retry-After, not a 500', async () => {
    const cut = await startTestCell(identity, {
      cellId: uniqueCellId('tdx'),
      env: {
        TICKETS_BUCKET: storeConfig.TICKETS_BUCKET,
        S3_ENDPOINT: 'http://127.0.0.1:9',
        S3_REGION: storeConfig.S3_REGION,
        S3_ACCESS_KEY_ID: 'nobody',
        S3_SECRET_ACCESS_KEY: 'nothing',
      },
    });
    try {
      const load = await loadIntoCell(cut, eventLoad(2));
      const res = await fetch(`${cut.url}/events/${load.eventId}/tickets/voids`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect((await res.json()).error.code).toBe('cell_unavailable');
    } finally {
      await cut.close();
    }
  });
});
