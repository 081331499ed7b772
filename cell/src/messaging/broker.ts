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

/**
 * Whether a consumer is a live member of its group and fetching. `joined` with recent
 * activity is ready; a member that lost its group (a frozen broker, a rebalance, a fenced
 * member) is `rejoining` until the group takes it back.
 */
export interface ConsumerHealth {
  groupId: string;
  state: 'starting' | 'joined' | 'rejoining' | 'stopped';
  ready: boolean;
  /** Fresh members created after the group dropped this process. */
  rejoins: number;
  lastActivityAt: string;
  lastError?: string;
}

export interface RunningConsumer {
  stop(): Promise<void>;
  health(): ConsumerHealth;
}

export interface Broker {
  /** Resolves once every in-sync replica has the whole batch. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  consume(options: ConsumerOptions): Promise<RunningConsumer>;
  /** Messages the group has not yet committed past, summed over the topics' partitions. */
  lag(groupId: string, topics: string[]): Promise<number>;
  /** Messages retained in a topic (the dead-letter topic is never consumed: its depth is its size). */
  depth(topic: string): Promise<number>;
  close(): Promise<void>;
}
