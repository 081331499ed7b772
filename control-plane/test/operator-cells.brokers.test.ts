import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness } from '../../test/support/control-plane';

/**
 * A cell's registry entry carries what other parts of the platform need to reach its brokers (the
 * reporting consumer reads each cell's purchase topic through them): the operator sets them when
 * registering or changing a cell, and a bad value is a 400 naming the field that writes nothing.
 */
let h: Harness;
const MSK =
  'b-1.onsale-c7.abc123.c2.kafka.eu-west-2.amazonaws.com:9098,b-2.onsale-c7.abc123.c2.kafka.eu-west-2.amazonaws.com:9098';

beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h?.close());

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected ad hoc
type Json = any;
const listed = async (id: string) =>
  ((await h.req('GET', '/operator/cells', { token: h.operatorToken })).body.cells as Json[]).find((c) => c.id === id);

function expectFieldRefused(r: { status: number; body: Json }, path: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.error.code).toBe('validation_failed');
  expect(r.body.error.details.issues).toContainEqual(expect.objectContaining({ path }));
}

describe("a cell's broker list and sign-in in the registry", () => {
  it('registered, listed and changed by the operator', async () => {
    const created = await addCell(h, 'cell-k1', 'http://127.0.0.1:9', { kafkaBrokers: MSK, kafkaAuth: 'aws-msk-iam' });
    expect(created).toMatchObject({ kafkaBrokers: MSK, kafkaAuth: 'aws-msk-iam' });
    expect(await listed('cell-k1')).toMatchObject({ kafkaBrokers: MSK, kafkaAuth: 'aws-msk-iam' });

    const moved = await h.req('PATCH', '/operator/cells/cell-k1', {
      token: h.operatorToken,
      body: { kafkaBrokers: '127.0.0.1:59112', kafkaAuth: 'plaintext' },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(await listed('cell-k1')).toMatchObject({ kafkaBrokers: '127.0.0.1:59112', kafkaAuth: 'plaintext' });
  });

  it('a cell registered without them lists no brokers (readers skip it) and plaintext, until the operator sets them', async () => {
    await addCell(h, 'cell-k2');
    expect(await listed('cell-k2')).toMatchObject({ kafkaBrokers: null, kafkaAuth: 'plaintext' });
    const set = await h.req('PATCH', '/operator/cells/cell-k2', {
      token: h.operatorToken,
      body: { kafkaBrokers: 'kafka-2.cells.internal:9092' },
    });
    expect(set.body).toMatchObject({ kafkaBrokers: 'kafka-2.cells.internal:9092', kafkaAuth: 'plaintext' });
  });

  it.each([
    ['a host without a port', 'kafka.internal'],
    ['an empty entry', '127.0.0.1:9092,'],
    ['port 0', '127.0.0.1:0'],
    ['a port above 65535', '127.0.0.1:70000'],
    ['a URL instead of host:port', 'kafka://127.0.0.1:9092'],
    ['spaces after the commas', '127.0.0.1:9092, 127.0.0.1:9093'],
    ['an empty list', ''],
  ])('refuses %s as kafkaBrokers, on register and on change, writing nothing', async (_what, kafkaBrokers) => {
    const created = await h.req('POST', '/operator/cells', {
      token: h.operatorToken,
      body: { id: 'cell-bad', baseUrl: 'http://127.0.0.1:9', region: 'local', kafkaBrokers },
    });
    expectFieldRefused(created, 'kafkaBrokers');
    expect(await listed('cell-bad')).toBeUndefined();
    const patched = await h.req('PATCH', '/operator/cells/cell-k1', { token: h.operatorToken, body: { kafkaBrokers } });
    expectFieldRefused(patched, 'kafkaBrokers');
    expect((await listed('cell-k1')).kafkaBrokers).toBe('127.0.0.1:59112');
  });

  it.each(['none', 'sasl-scram', 'IAM'])('refuses kafkaAuth %j, naming the field', async (kafkaAuth) => {
    const created = await h.req('POST', '/operator/cells', {
      token: h.operatorToken,
      body: { id: 'cell-bad', baseUrl: 'http://127.0.0.1:9', region: 'local', kafkaBrokers: MSK, kafkaAuth },
    });
    expectFieldRefused(created, 'kafkaAuth');
    expect(await listed('cell-bad')).toBeUndefined();
    const patched = await h.req('PATCH', '/operator/cells/cell-k1', { token: h.operatorToken, body: { kafkaAuth } });
    expectFieldRefused(patched, 'kafkaAuth');
    expect((await listed('cell-k1')).kafkaAuth).toBe('plaintext');
  });

  it('the API document describes both fields on register, change and the listed cell', async () => {
    const doc = (await h.req('GET', '/openapi.json')).body;
    for (const schema of ['RegisterCell', 'UpdateCell', 'Cell']) {
      expect(Object.keys(doc.components.schemas[schema].properties), schema).toEqual(
        expect.arrayContaining(['kafkaBrokers', 'kafkaAuth']),
      );
    }
    expect(doc.components.schemas.RegisterCell.properties.kafkaAuth.enum).toEqual(['plaintext', 'aws-msk-iam']);
  });
});
