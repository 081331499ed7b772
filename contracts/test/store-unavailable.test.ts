import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { DomainError, renderError } from '../src/runtime/http-errors';

/** What a request answers when the store behind it is gone: a 503 to retry, not a 500 that reads as a bug. */
const answerTo = async (err: Error) => {
  const app = new Hono();
  app.get('/', () => {
    throw err;
  });
  app.onError(renderError());
  const res = await app.request('/');
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as { error: { code: string } },
  };
};
const wrapped = (cause: object) => Object.assign(new Error('Failed query: select 1'), { cause });

describe('an unreachable store', () => {
  it.each([
    ['a refused connection under a query error', wrapped({ code: 'ECONNREFUSED' })],
    ['a reset socket', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['PostgreSQL shutting down', wrapped(Object.assign(new Error('terminating connection'), { code: '57P01' }))],
    ['a connection exception (class 08)', wrapped({ code: '08006' })],
    ['pg losing its connection', new Error('Connection terminated unexpectedly')],
    [
      'ioredis giving up',
      Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }),
    ],
    ['ioredis timing out on a frozen server', new Error('Command timed out')],
    [
      'ioredis reconnecting without an offline queue',
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
    ],
    ['no pool connection in time', wrapped(new Error('timeout exceeded when trying to connect'))],
    ['PostgreSQL starting up', wrapped({ code: '57P03' })],
    [
      'a Kafka broker refusing connections',
      Object.assign(new Error('Connection error'), { name: 'KafkaJSConnectionError' }),
    ],
    [
      "kafkajs's retries spent on a frozen broker",
      Object.assign(new Error('Request ListOffsets(key: 2, version: 4) timed out'), {
        name: 'KafkaJSNumberOfRetriesExceeded',
        cause: { name: 'KafkaJSRequestTimeoutError', message: 'Request ListOffsets(key: 2, version: 4) timed out' },
      }),
    ],
    ['a kafkajs broker not connected', new Error('Broker not connected')],
  ])('%s answers 503 store_unavailable with Retry-After', async (_, err) => {
    expect(await answerTo(err)).toEqual({
      status: 503,
      retryAfter: '5',
      body: expect.objectContaining({ error: expect.objectContaining({ code: 'store_unavailable' }) }),
    });
  });

  it.each([
    ['a deadlock', '40P01'],
    ['a serialization failure', '40001'],
  ])('%s still there after the writer retried answers 503 with Retry-After 1', async (_, code) => {
    expect(await answerTo(wrapped(Object.assign(new Error('deadlock detected'), { code })))).toEqual({
      status: 503,
      retryAfter: '1',
      body: expect.objectContaining({ error: expect.objectContaining({ code: 'store_unavailable' }) }),
    });
  });

  it('a bug is still a 500, a constraint violation too, and a refusal keeps its code', async () => {
    expect((await answerTo(new TypeError('x is undefined'))).status).toBe(500);
    expect((await answerTo(wrapped({ code: '23505' }))).status).toBe(500);
    // kafkajs refusing what was asked (not the broker being away) is no outage either.
    expect(
      (await answerTo(Object.assign(new Error('Invalid topic'), { name: 'KafkaJSNonRetriableError' }))).status,
    ).toBe(500);
    expect((await answerTo(new DomainError('seats_unavailable', 'taken'))).body.error.code).toBe('seats_unavailable');
  });
});
