import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import type { JSONWebKeySet } from 'jose';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { z } from 'zod';
import { type TicketClaims, verifyTicketWithKeys, verifyVoidList } from './signing';

/*
 * The door scanner, offline. `sync` (before the doors open, and again whenever the network allows)
 * downloads the event's ticket keys and its signed void list; `scan` needs neither network nor
 * database: a ticket is admitted when its signature verifies against a synced key, it is for the
 * synced event, and it is not on the synced void list.
 *
 * Why a signed list fetched at sync time: voids are rare (a cancelled event, a refunded order) and
 * known ahead, while the door must answer in milliseconds with no network. A list signed with the
 * ticket key is trusted exactly as far as the tickets are, wherever it was cached on the way; a
 * scanner cannot see a void that happened after its last sync, so it reports how old its list is.
 */

export const ScannerState = z.object({
  eventId: z.string().uuid(),
  baseUrl: z.string().url(),
  syncedAt: z.string(),
  keys: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }),
  /** The void list exactly as published (a JWT), verified again at every scan. */
  voidList: z.string(),
});
export type ScannerState = z.infer<typeof ScannerState>;

export const stateFile = (dir: string) => join(dir, 'scanner.json');

export async function syncScanner(opts: { baseUrl: string; eventId: string; stateDir: string }): Promise<{
  state: ScannerState;
  keys: number;
  voided: number;
  listIssuedAt: Date;
}> {
  const base = opts.baseUrl.replace(/\/$/, '');
  const get = async (path: string) => {
    const res = await fetch(`${base}/events/${opts.eventId}/tickets/${path}`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new ScanSetupError(`GET ${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res;
  };
  const keys = z
    .object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) })
    .parse(await (await get('keys')).json());
  const voidList = (await (await get('voids')).text()).trim();
  // Verified before it is kept: a list the keys do not sign, or for another event, is refused at sync.
  const list = await verifyVoidList(voidList, keys as JSONWebKeySet);
  if (list.eventId !== opts.eventId) throw new ScanSetupError(`the void list is for event ${list.eventId}`);
  const state: ScannerState = {
    eventId: opts.eventId,
    baseUrl: base,
    syncedAt: new Date().toISOString(),
    keys,
    voidList,
  };
  await mkdir(opts.stateDir, { recursive: true });
  // Written whole, then renamed: a scanner that dies mid-sync keeps its previous state.
  const tmp = `${stateFile(opts.stateDir)}.tmp`;
  await writeFile(tmp, JSON.stringify(state, null, 2));
  await rename(tmp, stateFile(opts.stateDir));
  return { state, keys: keys.keys.length, voided: list.voided.length, listIssuedAt: new Date(list.iat * 1000) };
}

export class ScanSetupError extends Error {
  override name = 'ScanSetupError';
}

/** Why a ticket is refused, each with its own exit code so a gate device can act on it. */
export const REFUSALS = {
  voided: 2,
  forged: 3,
  wrong_event: 4,
  unreadable: 5,
} as const;
export type Refusal = keyof typeof REFUSALS;

export type ScanResult =
  | { admit: true; claims: TicketClaims; voidListAgeSeconds: number }
  | { admit: false; reason: Refusal; message: string; ticketId?: string };

export async function loadState(stateDir: string): Promise<ScannerState> {
  const file = stateFile(stateDir);
  if (!existsSync(file)) throw new ScanSetupError(`not synced: run scan-ticket --sync first (no ${file})`);
  return ScannerState.parse(JSON.parse(await readFile(file, 'utf8')));
}

/** Checks one ticket token against the synced state: signature, event, void list. */
export async function checkTicket(token: string, state: ScannerState): Promise<ScanResult> {
  const keys = state.keys as JSONWebKeySet;
  let claims: TicketClaims;
  try {
    claims = await verifyTicketWithKeys(token.trim(), keys);
  } catch (err) {
    return { admit: false, reason: 'forged', message: `not a genuine ticket: ${(err as Error).message}` };
  }
  if (claims.eventId !== state.eventId)
    return {
      admit: false,
      reason: 'wrong_event',
      message: `ticket is for event ${claims.eventId}, this door is ${state.eventId}`,
      ticketId: claims.tid,
    };
  const list = await verifyVoidList(state.voidList, keys);
  if (list.voided.includes(claims.tid))
    return {
      admit: false,
      reason: 'voided',
      message: 'ticket was voided (event cancelled or order refunded)',
      ticketId: claims.tid,
    };
  return { admit: true, claims, voidListAgeSeconds: Math.round(Date.now() / 1000 - list.iat) };
}

/** A QR code's text from an image: PNG decoded as is, SVG rendered to pixels first; jsQR reads the pixels. */
export async function decodeQrImage(path: string): Promise<string | null> {
  const bytes = await readFile(path);
  const ext = extname(path).toLowerCase();
  if (ext === '.svg') return decodeQrSvg(bytes.toString('utf8'));
  if (ext === '.png') return decodeQrPng(bytes);
  throw new ScanSetupError(`unsupported image ${ext || path}: give a .png or .svg, or the payload itself`);
}

export function decodeQrSvg(svg: string): string | null {
  const png = new Resvg(svg, { fitTo: { mode: 'width', value: 600 }, background: '#ffffff' }).render().asPng();
  return decodeQrPng(png);
}

export function decodeQrPng(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return (
    jsQR(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)
      ?.data ?? null
  );
}

/** The input of a scan: an image file to decode, or the QR payload itself. */
export async function scanInput(input: string, state: ScannerState): Promise<ScanResult> {
  let token = input;
  if (/\.(png|svg)$/i.test(input) && existsSync(input)) {
    const decoded = await decodeQrImage(input);
    if (!decoded) return { admit: false, reason: 'unreadable', message: `no QR code found in ${input}` };
    token = decoded;
  }
  return checkTicket(token, state);
}
