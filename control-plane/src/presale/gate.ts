import { DomainError } from '@onsale/contracts';
import { and, eq, gt, or, sql } from 'drizzle-orm';
import { countBotSignal } from '../bot-report/signals';
import type { Services } from '../context';
import { presaleInvitations, presales } from '../db/schema';

type Window = { startsAt: number; endsAt: number } | null;

/**
 * Each event's presale window, read once per process and kept WINDOW_KEPT_MS: a join outside every presale costs
 * no read. A presale opened or moved is enforced by every process within that time.
 */
const windows = new WeakMap<Services, Map<string, { w: Window; until: number }>>();
const WINDOW_KEPT_MS = 5000;

async function presaleWindow(ctx: Services, eventId: string, nowMs: number): Promise<Window> {
  let byEvent = windows.get(ctx);
  if (!byEvent) {
    byEvent = new Map();
    windows.set(ctx, byEvent);
  }
  const hit = byEvent.get(eventId);
  if (hit && hit.until > nowMs) return hit.w;
  const [row] = await ctx.db
    .select({ startsAt: presales.presaleStartsAt, endsAt: presales.presaleEndsAt })
    .from(presales)
    .where(eq(presales.eventId, eventId));
  const w = row ? { startsAt: row.startsAt.getTime(), endsAt: row.endsAt.getTime() } : null;
  byEvent.set(eventId, { w, until: nowMs + WINDOW_KEPT_MS });
  return w;
}

/**
 * The waiting room's presale door. Until an event's presale ends, a join needs an access code of the joining
 * account, valid now: from the presale's start, while its invitation is open (or once used); so nobody queues
 * ahead of the presale, and the general sale follows it. An event without a presale asks nothing. The first join
 * with a code marks the invitation used (its conversion). Refusals are 403s whose details.reason says why, counted
 * for the bot report.
 */
export async function checkPresaleAccess(
  ctx: Services,
  eventId: string,
  buyer: string,
  accessCode: string | undefined,
  nowMs: number,
): Promise<void> {
  const w = await presaleWindow(ctx, eventId, nowMs);
  if (!w || nowMs >= w.endsAt) return;
  const presaleEndsAt = new Date(w.endsAt).toISOString();
  if (nowMs < w.startsAt) {
    await countBotSignal(ctx, eventId, 'joins_without_presale_code');
    throw new DomainError('forbidden', 'the presale has not started: its waiting room takes nobody yet', {
      reason: 'presale_not_started',
      presaleStartsAt: new Date(w.startsAt).toISOString(),
    });
  }
  if (!accessCode) {
    await countBotSignal(ctx, eventId, 'joins_without_presale_code');
    throw new DomainError('forbidden', 'this event is in its presale: joining needs your access code', {
      reason: 'presale_access_code_required',
      presaleEndsAt,
    });
  }
  const now = new Date(nowMs);
  const [ok] = await ctx.db
    .update(presaleInvitations)
    .set({ status: 'used', usedAt: sql`coalesce(${presaleInvitations.usedAt}, ${now})` })
    .where(
      and(
        eq(presaleInvitations.accessCode, accessCode.trim().toUpperCase()),
        eq(presaleInvitations.eventId, eventId),
        eq(presaleInvitations.buyerSub, buyer),
        or(
          eq(presaleInvitations.status, 'used'),
          and(eq(presaleInvitations.status, 'offered'), gt(presaleInvitations.expiresAt, now)),
        ),
      ),
    )
    .returning({ id: presaleInvitations.id });
  if (!ok) {
    await countBotSignal(ctx, eventId, 'joins_without_presale_code');
    throw new DomainError(
      'forbidden',
      'this access code is not valid for your account and this presale, or its invitation has lapsed',
      { reason: 'presale_access_code_invalid', presaleEndsAt },
    );
  }
}
