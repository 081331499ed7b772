import {
  cellTopics,
  EnvelopeError,
  type EventType,
  metrics,
  parseEnvelope,
  SpanKind,
  type TypedEnvelope,
  withSpan,
} from '@onsale/contracts';
import type { Broker, Disposition, IncomingMessage, RunningConsumer } from '@onsale/messaging/broker';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { withWriteTx } from '../db/tx';
import { PermanentError } from '../errors';
import { failpoint } from '../failpoints';
import type { Causation } from '../outbox/append';
import { consumerGroupId } from './consumers';

export type Handler<T extends EventType = EventType> = (
  tx: Tx,
  event: TypedEnvelope<T>,
  cause: Causation,
) => Promise<void>;

/**
 * An effect that starts outside the database (a Stripe request): `callFirst` runs before any
 * transaction opens and returns the write to commit with the inbox row. A crash between the
 * two replays the call, so it must be idempotent (a Stripe idempotency key). A duplicate whose
 * inbox row is already committed does not call again.
 */
export interface CallFirst<T extends EventType = EventType> {
  callFirst(event: TypedEnvelope<T>): Promise<Handler<T>>;
}
export type Handlers = { [T in EventType]?: Handler<T> };
export type CallFirstHandlers = { [T in EventType]?: CallFirst<T> };

export interface RetryPolicy {
  shortDelayMs: number;
  shortAttempts: number;
  longDelayMs: number;
  longAttempts: number;
  /**
   * Retries a transient failure on the long topic for this long after the first failure, however many attempts
   * that takes (instead of `longAttempts`), its delay doubling from `longDelayMs` up to `maxLongDelayMs`: for a
   * consumer whose dependency's outages end and whose work must not be dead-lettered meanwhile (Stripe).
   */
  transientBudget?: { ms: number; maxLongDelayMs: number };
}
export const defaultRetryPolicy: RetryPolicy = {
  shortDelayMs: 1_000,
  shortAttempts: 3,
  longDelayMs: 30_000,
  longAttempts: 3,
};

export const RETRY = {
  consumer: 'x-retry-consumer',
  attempt: 'x-retry-attempt',
  notBefore: 'x-retry-not-before',
  firstFailure: 'x-first-failure-at',
  reason: 'x-failure-reason',
  origin: 'x-original-coordinates',
} as const;

/**
 * Runs one consumer of the cell's purchase topic. For each message: parse it against the
 * shared contract, then in one transaction record (consumer, eventId) in the inbox and apply
 * the effect, and only then let the offset move. A duplicate finds its inbox row and does
 * nothing. A transient failure goes to a delayed retry topic, a permanent one to the dead
 * letter topic with its reason and original coordinates; either way the partition moves on.
 * A CallFirst handler makes its remote call before that transaction, never inside it.
 */
export async function runConsumer(opts: {
  name: string;
  ctx: CellContext;
  broker: Broker;
  handlers: Handlers | CallFirstHandlers;
  retry?: RetryPolicy;
}): Promise<RunningConsumer> {
  const { name, ctx, broker, handlers } = opts;
  const retry = opts.retry ?? defaultRetryPolicy;
  const topics = cellTopics(ctx.cellId);

  async function alreadyApplied(event: TypedEnvelope): Promise<boolean> {
    const rows = await ctx.db.execute(
      sql`SELECT 1 FROM inbox WHERE consumer = ${name} AND event_id = ${event.eventId}`,
    );
    return rows.rows.length > 0;
  }

  async function apply(event: TypedEnvelope, message: IncomingMessage): Promise<boolean> {
    const entry = handlers[event.eventType] as Handler | CallFirst | undefined;
    if (!entry) return false;
    let handler: Handler;
    if (typeof entry === 'function') handler = entry;
    else {
      if (await alreadyApplied(event)) {
        metrics.inboxDuplicates.inc({ consumer: name });
        return false;
      }
      handler = await entry.callFirst(event);
    }
    const cause: Causation = { cellId: ctx.cellId, correlationId: event.correlationId, causationId: event.eventId };
    return withWriteTx(ctx, async (tx) => {
      const fresh = await tx.execute(
        sql`INSERT INTO inbox (consumer, event_id) VALUES (${name}, ${event.eventId}) ON CONFLICT DO NOTHING`,
      );
      if (fresh.rowCount === 0) {
        metrics.inboxDuplicates.inc({ consumer: name });
        return false;
      }
      await handler(tx, event, cause);
      failpoint(`${name}.before-commit`);
      ctx.log.debug('applied', {
        consumer: name,
        eventId: event.eventId,
        eventType: event.eventType,
        orderId: event.aggregateId,
        ...coordinates(message),
      });
      return true;
    });
  }

  async function divert(message: IncomingMessage, err: unknown, permanent: boolean): Promise<void> {
    const attempt = Number(message.headers[RETRY.attempt] ?? 0) + 1;
    const firstFailure = Number(message.headers[RETRY.firstFailure] ?? Date.now());
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const budget = retry.transientBudget;
    const exhausted = budget
      ? Date.now() - firstFailure > budget.ms
      : attempt > retry.shortAttempts + retry.longAttempts;
    const target =
      permanent || exhausted
        ? topics.deadLetter
        : attempt <= retry.shortAttempts
          ? topics.retryShort
          : topics.retryLong;
    const longDelay = budget
      ? Math.min(retry.longDelayMs * 2 ** (attempt - retry.shortAttempts - 1), budget.maxLongDelayMs)
      : retry.longDelayMs;
    const delay = target === topics.retryShort ? retry.shortDelayMs : longDelay;
    await broker.publish(target, [
      {
        key: message.key ?? '',
        value: message.value,
        headers: {
          ...message.headers,
          [RETRY.consumer]: name,
          [RETRY.attempt]: String(attempt),
          [RETRY.firstFailure]: String(firstFailure),
          [RETRY.notBefore]: String(Date.now() + delay),
          [RETRY.reason]: reason.slice(0, 500),
          [RETRY.origin]: message.headers[RETRY.origin] ?? JSON.stringify(coordinates(message)),
        },
      },
    ]);
    if (target === topics.deadLetter) {
      metrics.deadLettered.inc({
        consumer: name,
        reason: permanent ? (err instanceof Error ? err.name : 'error') : 'exhausted',
      });
    } else metrics.retries.inc({ consumer: name, topic: target === topics.retryShort ? 'short' : 'long' });
    ctx.log.warn(target === topics.deadLetter ? 'dead-lettered' : 'retry scheduled', {
      consumer: name,
      orderId: message.key,
      reason,
      attempt,
      target,
      ...coordinates(message),
    });
  }

  async function handle(message: IncomingMessage): Promise<Disposition> {
    if (message.topic !== topics.purchase) {
      if (message.headers[RETRY.consumer] !== name) return { kind: 'done' };
      const due = Number(message.headers[RETRY.notBefore] ?? 0);
      if (due > Date.now()) return { kind: 'later', at: due };
    }
    let event: TypedEnvelope;
    try {
      event = parseEnvelope(JSON.parse(message.value));
    } catch (err) {
      if (err instanceof EnvelopeError || err instanceof SyntaxError) {
        await divert(message, err, true);
        return { kind: 'done' };
      }
      throw err;
    }
    const run = async (): Promise<Disposition> => {
      let applied: boolean;
      try {
        applied = await apply(event, message);
      } catch (err) {
        await divert(message, err, err instanceof PermanentError);
        return { kind: 'done' };
      }
      if (applied) failpoint(`${name}.after-commit`);
      return { kind: 'done' };
    };
    if (!(event.eventType in handlers)) return run();
    // One span per handled message, child of the relay's publication (the envelope's traceparent).
    return withSpan(
      `${name} ${event.eventType}`,
      {
        kind: SpanKind.CONSUMER,
        parent: event.traceparent ?? null,
        attributes: {
          'messaging.consumer.group.name': name,
          'messaging.destination.name': message.topic,
          'messaging.kafka.offset': Number(message.offset),
          'onsale.event_id': event.eventId,
          'onsale.order_id': event.aggregateId,
        },
      },
      run,
    );
  }

  return broker.consume({
    groupId: consumerGroupId(ctx.cellId, name),
    topics: [topics.purchase, topics.retryShort, topics.retryLong],
    handle,
    onError: (err) => ctx.log.error('consumer crashed', { consumer: name, err }),
  });
}

const coordinates = (m: IncomingMessage) => ({ topic: m.topic, partition: m.partition, offset: m.offset });
