/**
 * Replays a cell's dead-letter topic onto its purchase topic, after the cause was fixed.
 * Safe to run twice: the consumers' inboxes make a replayed event that was already applied a
 * no-op. It reads with its own consumer group, so each dead letter is replayed once, and stops
 * when it has caught up with what was in the topic when it started. It signs in to the broker as
 * the services do (KAFKA_AUTH: plaintext locally, MSK IAM over TLS in a cell's one-off task).
 *
 *   CELL_ID=c1 KAFKA_BROKERS=127.0.0.1:19102 [DLQ_CONSUMER=saga] [DRY_RUN=1] \
 *     pnpm --filter @onsale/cell replay-dlq
 */
import { kafkaSecurity } from '@onsale/aws-auth';
import { cellTopics, configOrExit, createLogger, shutdownTracing } from '@onsale/contracts';
import { createKafkaBroker } from '@onsale/messaging/kafka-broker';
import { CellReplayDeadLettersConfig } from '../config';
import { RETRY } from '../messaging/consumer-runner';
import { deadLetterReplayGroup } from '../messaging/consumers';

const config = configOrExit('replay-dead-letters', CellReplayDeadLettersConfig);
const log = createLogger({ role: 'replay-dead-letters', cellId: config.CELL_ID }, config.LOG_LEVEL);
const topics = cellTopics(config.CELL_ID);
const broker = createKafkaBroker({
  brokers: config.KAFKA_BROKERS.split(','),
  clientId: `${config.CELL_ID}-replay-dlq`,
  log,
  security: kafkaSecurity(config),
});
const group = deadLetterReplayGroup(config.CELL_ID, config.DRY_RUN === '1');

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
await shutdownTracing();
