/**
 * The cell's view of its message broker: publish a batch durably, run a consumer group with
 * manual offsets. Kafka implements it today; a PostgreSQL-backed transport may implement it
 * for laptops, and both must pass the same contract tests.
 */
export interface OutgoingMessage {
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface IncomingMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string;
  headers: Record<string, string>;
}

/**
 * What a handler tells the transport: `done` once the message's effect is durable (its offset
 * may then be committed), or `later` to have the same message delivered again no earlier than
 * `at` (its partition waits; the offset is not committed).
 */
export type Disposition = { kind: 'done' } | { kind: 'later'; at: number };

export interface ConsumerOptions {
  groupId: string;
  topics: string[];
  handle(message: IncomingMessage): Promise<Disposition>;
  onError?(err: unknown): void;
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

export interface Broker {
  /** Resolves once every in-sync replica has the whole batch. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  consume(options: ConsumerOptions): Promise<RunningConsumer>;
  /** Messages the group has not yet committed past, summed over the topics' partitions. */
  lag(groupId: string, topics: string[]): Promise<number>;
  close(): Promise<void>;
}
