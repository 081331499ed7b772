/**
 * Replays a cell's dead-letter topic onto its purchase topic, after the cause was fixed.
 * Safe to run twice: the consumers' inboxes make a replayed event that was already applied a
 * no-op. It reads with its own consumer group, so each dead letter is replayed once, and stops
 * when it has caught up with what was in the topic when it started.
 *
 *   CELL_ID=c1 KAFKA_BROKERS=127.0.0.1:59102 [DLQ_CONSUMER=saga] [DRY_RUN=1] \
 *     pnpm --filter @onsale/cell replay-dlq
 */
import { cellTopics, createLogger, parseEnv } from '@onsale/contracts';
import { z } from 'zod';
import { RETRY } from '../messaging/consumer-runner';
import { createKafkaBroker } from '../messaging/kafka-broker';

const config = parseEnv(
  z.object({
    CELL_ID: z.string().min(1),
    KAFKA_BROKERS: z.string().min(1),
    /** Only dead letters of this consumer (saga, tickets, payments); all when unset. */
    DLQ_CONSUMER: z.string().optional(),
    DRY_RUN: z.enum(['0', '1']).default('0'),
  }),
);
const log = createLogger({ role: 'replay-dlq', cellId: config.CELL_ID });
const topics = cellTopics(config.CELL_ID);
const broker = createKafkaBroker({
  brokers: config.KAFKA_BROKERS.split(','),
  clientId: `${config.CELL_ID}-replay-dlq`,
  log,
});
// A dry run reads with a group of its own, so the real run afterwards still finds everything.
const group = config.DRY_RUN === '1' ? `${config.CELL_ID}.dlq-dry-run-${Date.now()}` : `${config.CELL_ID}.dlq-replay`;

const pending = await broker.lag(group, [topics.deadLetter]);
let seen = 0;
let replayed = 0;
if (pending > 0) {
  await new Promise<void>((done) => {
    void broker.consume({
      groupId: group,
      topics: [topics.deadLetter],
      handle: async (m) => {
        seen++;
        const wanted = !config.DLQ_CONSUMER || m.headers[RETRY.consumer] === config.DLQ_CONSUMER;
        if (wanted) {
          log.info('replaying', { reason: m.headers[RETRY.reason], origin: m.headers[RETRY.origin], key: m.key });
          if (config.DRY_RUN === '0') {
            // A fresh start: the retry history stays in the log line above, not on the message.
            const headers = Object.fromEntries(Object.entries(m.headers).filter(([k]) => !k.startsWith('x-')));
            await broker.publish(topics.purchase, [{ key: m.key ?? '', value: m.value, headers }]);
          }
          replayed++;
        }
        if (seen >= pending) done();
        return { kind: 'done' };
      },
    });
  });
}
log.info('dead letters replayed', { seen, replayed, dryRun: config.DRY_RUN === '1' });
await broker.close();
