import { cellTopics } from '@onsale/contracts';

export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
  configs?: Record<string, string>;
}

/**
 * A cell's topics. Retry topics keep the purchase topic's partitioning so one order's retries
 * stay ordered; the dead-letter topic keeps its messages for a month, long enough to fix and replay.
 */
export function cellTopicSpecs(cellId: string, partitions: number, replicationFactor: number): TopicSpec[] {
  const t = cellTopics(cellId);
  const durability: Record<string, string> =
    replicationFactor > 1 ? { 'min.insync.replicas': String(Math.min(2, replicationFactor)) } : {};
  return [
    { topic: t.purchase, partitions, replicationFactor, configs: durability },
    { topic: t.retryShort, partitions, replicationFactor, configs: durability },
    { topic: t.retryLong, partitions, replicationFactor, configs: durability },
    {
      topic: t.deadLetter,
      partitions: 1,
      replicationFactor,
      configs: { ...durability, 'retention.ms': String(30 * 86_400_000) },
    },
  ];
}
