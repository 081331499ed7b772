import { EDGE_PATHS, pathPattern } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { createHarness, type Harness } from '../../test/support/control-plane';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { classify } from '../src/routing/classify';

/**
 * The edge's table of public paths (contracts/edge-paths.ts) held against what the services really
 * serve: every route in a service's OpenAPI document is routed to that service, or is one of the
 * routes kept off the edge on purpose; and every entry of the table serves at least one route.
 */
const OFF_EDGE = [
  /^\/internal\//,
  /^\/operator\//,
  /^\/(healthz|readyz|metrics)$/,
  /^\/webhooks\/stripe$/,
  // Every tenant's events and each cell's internal address: the router polls it from the control plane itself.
  /^\/directory$/,
];
/** A cell's share of the buyer's orders: the router asks every cell for it itself (its own /me/orders). */
const GATHERED_BY_ROUTER = [/^\/me\/orders$/];
const sample = (template: string) => template.replace(/\{(\w+)\}/g, '$1-sample');

let identity: TestIdentity;
let cell: TestCell;
let controlPlane: Harness;
const documents: Record<'cell' | 'control-plane', string[]> = { cell: [], 'control-plane': [] };

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  controlPlane = await createHarness();
  documents.cell = Object.keys((await (await fetch(`${cell.url}/openapi.json`)).json()).paths);
  documents['control-plane'] = Object.keys((await controlPlane.req('GET', '/openapi.json')).body.paths);
});
afterAll(async () => {
  await controlPlane?.close();
  await cell?.close();
  await identity?.close();
});

describe('the edge table against the services', () => {
  it.each(['cell', 'control-plane'] as const)('every public route of the %s is routed to it', (service) => {
    expect(documents[service].length).toBeGreaterThan(5);
    for (const path of documents[service]) {
      const expected = [...OFF_EDGE, ...GATHERED_BY_ROUTER].some((p) => p.test(path)) ? 'unknown' : service;
      expect(classify(sample(path)).kind, path).toBe(expected);
    }
  });

  it('every entry of the table serves a route of its service (the console and the shop are HTML, outside the document)', () => {
    const owners = [
      ['cell', EDGE_PATHS.cell],
      ['control-plane', EDGE_PATHS.controlPlane.filter((t) => t !== '/console/**' && t !== '/shop/**')],
    ] as const;
    for (const [service, templates] of owners)
      for (const template of templates)
        expect(
          documents[service].some((path) => pathPattern(template).test(sample(path))),
          `${template} serves nothing in the ${service}`,
        ).toBe(true);
  });
});
