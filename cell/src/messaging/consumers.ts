export const consumerGroupId = (cellId: string, consumer: string) => `${cellId}.${consumer}`;

/**
 * The dead-letter replayer's groups: the real run's, so each dead letter is replayed once, and a dry run's own
 * throwaway one, so the real run afterwards still finds everything. Both start with `<cell>.dlq-`, which is
 * what its task role may join.
 */
export const deadLetterReplayGroup = (cellId: string, dryRun: boolean, now = Date.now()) =>
  dryRun ? consumerGroupId(cellId, `dlq-dry-run-${now}`) : consumerGroupId(cellId, 'dlq-replay');
export const deadLetterReplayGroupPrefix = (cellId: string) => consumerGroupId(cellId, 'dlq-');
