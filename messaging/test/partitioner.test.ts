import { randomBytes, randomUUID } from 'node:crypto';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { keyPartitioner, murmur2 } from '../src/partitioner';

const partitions = (n: number): PartitionMetadata[] =>
  Array.from({ length: n }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
  }));

describe('key partitioner', () => {
  it("hashes as the Java client's Utils.murmur2 (its own test vectors)", () => {
    expect(murmur2('21')).toBe(-973932308);
    expect(murmur2('foobar')).toBe(-790332482);
    expect(murmur2('a-little-bit-long-string')).toBe(-985981536);
    expect(murmur2('a-little-bit-longer-string')).toBe(-1486304829);
    expect(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')).toBe(-58897971);
    expect(murmur2('abc')).toBe(479470107);
  });

  it("puts every key on the partition kafkajs's Java-compatible partitioner picks", () => {
    const ours = keyPartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    const keys = [
      ...Array.from({ length: 5_000 }, () => randomUUID()),
      // every length modulo 4, multi-byte UTF-8, and keys longer than the scratch buffer
      ...Array.from({ length: 2_000 }, (_, i) =>
        randomBytes(i % 700)
          .toString('base64')
          .slice(0, i % 700),
      ),
      // keys given as bytes, not all of them valid UTF-8
      ...Array.from({ length: 300 }, (_, i) => randomBytes(i)),
      'é',
      'ticket-€',
      '票务-訂單',
      '',
    ];
    for (const count of [1, 6, 12, 7]) {
      const partitionMetadata = partitions(count);
      for (const key of keys) {
        const message = { key, value: 'x' };
        expect(ours({ topic: 't', partitionMetadata, message }), String(key)).toBe(
          theirs({ topic: 't', partitionMetadata, message }),
        );
      }
    }
  });

  it('refuses an unkeyed message instead of spreading it round-robin', () => {
    expect(() => keyPartitioner()({ topic: 't', partitionMetadata: partitions(6), message: { value: 'x' } })).toThrow(
      /always keyed/,
    );
  });
});
