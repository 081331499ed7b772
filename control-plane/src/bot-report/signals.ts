import type { Services } from '../context';

/**
 * The bot signals counted per onsale, in one place: every refusal the bot report shows that has no record of its
 * own elsewhere is one HINCRBY on the event's hash here.
 */
export const BOT_SIGNALS = [
  /** A proof-of-work challenge handed out at the door (waiting-room/door.ts), and one spent on a join. */
  'challenges_issued',
  'challenges_solved',
  /** A join the waiting room's rate limits (rate-limit.ts: per IP, per buyer) refused. */
  'joins_rate_limited',
  /** A join the presale's door refused: before the presale ended, without an access code of the account valid now. */
  'joins_without_presale_code',
  'registrations_duplicate',
  'registrations_over_ip_limit',
  'registrations_over_device_limit',
] as const;
export type BotSignal = (typeof BOT_SIGNALS)[number];

/** Hash-tagged by event, like the room's keys, so a sharded Redis keeps it beside the event's queue. */
export const botSignalsKey = (prefix: string, eventId: string) => `${prefix}bot:{${eventId}}`;

/** A report outlives its onsale by a season (each count renews it), then Redis forgets it. */
const KEPT_SECONDS = 180 * 86_400;

/**
 * Counts one signal. A count is a report, not a gate: a Redis that fails here is logged and the refusal the caller
 * is about to answer goes out anyway.
 */
export async function countBotSignal(ctx: Services, eventId: string, signal: BotSignal, by = 1): Promise<void> {
  try {
    const key = botSignalsKey(ctx.prefix, eventId);
    await ctx.redis.multi().hincrby(key, signal, by).expire(key, KEPT_SECONDS).exec();
  } catch (err) {
    ctx.log.warn('bot signal not counted', { eventId, signal, err: (err as Error).message });
  }
}

export async function readBotSignals(ctx: Services, eventId: string): Promise<Record<BotSignal, number>> {
  const raw = await ctx.redis.hgetall(botSignalsKey(ctx.prefix, eventId));
  return Object.fromEntries(BOT_SIGNALS.map((s) => [s, Number(raw[s] ?? 0)])) as Record<BotSignal, number>;
}
