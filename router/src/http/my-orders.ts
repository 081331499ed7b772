import {
  BUYER_ORDERS_PAGE,
  BuyerOrderSummary,
  BuyerOrdersAfter,
  buyerOrdersAfter,
  byNewestOrder,
  errorResponse,
  type Logger,
  validationIssues,
} from '@onsale/contracts';
import type { Context } from 'hono';
import { z } from 'zod';
import type { RouterConfig } from '../config';
import type { Directory } from '../directory/directory';
import type { Upstreams } from '../proxy/upstreams';
import type { RouterEnv } from './env';

const CellAnswer = z.object({ orders: z.array(BuyerOrderSummary) });

/**
 * "My orders" across events: an order lives in the cell that took it, and no cell or control-plane store knows every
 * buyer's orders, so the router asks every cell that may hold some (all but those marked down; a drained or
 * evacuated cell still answers for the orders it took) with the buyer's own token, and merges the answers newest
 * first. Each cell verifies the token itself; the router only forwards it. A cell that does not answer in time leaves
 * its orders out and is named in `unavailableCells`, so the page says the list may be incomplete instead of failing:
 * one cell's outage must not hide every other cell's orders. A 401 from any cell is the buyer's answer (a bad token).
 * A page at a time: every cell answers its first page after the cursor `after` (./contracts BuyerOrdersAfter), the
 * router keeps the first page of their merge and gives the cursor after its last order as `nextAfter`.
 */
export function gatherMyOrders(deps: {
  config: RouterConfig;
  directory: Directory;
  upstreams: Upstreams;
  log: Logger;
}) {
  return async (c: Context<RouterEnv>) => {
    const authorization = c.req.header('authorization');
    if (!authorization) return errorResponse(c, 'unauthenticated', 'a buyer token is required');
    const given = c.req.query('after');
    const after = given === undefined ? undefined : BuyerOrdersAfter.safeParse(given);
    if (after && !after.success) {
      const issues = validationIssues(after.error, 'after');
      return errorResponse(c, 'validation_failed', `after: ${issues[0]?.message}`, { details: { issues } });
    }
    const dir = deps.directory.current;
    if (!dir)
      return errorResponse(c, 'cell_unavailable', 'the directory is not loaded yet', {
        details: { status: 'directory_unavailable' },
        retryAfter: deps.config.RETRY_AFTER_SECONDS,
      });
    const cells = [...dir.cells.values()].filter((cell) => cell.status !== 'down');
    const answers = await Promise.all(
      cells.map(async (cell) => {
        const upstream = deps.upstreams.for(cell.baseUrl);
        try {
          const res = await upstream.pool.request({
            method: 'GET',
            path: `${upstream.prefix}/me/orders${after ? `?after=${encodeURIComponent(after.data)}` : ''}`,
            headers: { authorization, 'x-correlation-id': c.get('correlationId') },
            headersTimeout: deps.config.UPSTREAM_TIMEOUT_MS,
            bodyTimeout: deps.config.UPSTREAM_TIMEOUT_MS,
          });
          const body = await res.body.json().catch(() => null);
          if (res.statusCode === 401) return { cell: cell.id, unauthenticated: true as const };
          const parsed = res.statusCode === 200 ? CellAnswer.safeParse(body) : null;
          if (parsed?.success) return { cell: cell.id, orders: parsed.data.orders };
          deps.log.warn('my orders: a cell answered without its list', { cellId: cell.id, status: res.statusCode });
        } catch (err) {
          deps.log.warn('my orders: a cell did not answer', { cellId: cell.id, err: (err as Error).message });
        }
        return { cell: cell.id };
      }),
    );
    if (answers.some((a) => 'unauthenticated' in a))
      return errorResponse(c, 'unauthenticated', 'the buyer token is not valid');
    const merged = answers
      .flatMap((a): BuyerOrderSummary[] => ('orders' in a && a.orders ? a.orders : []))
      .sort(byNewestOrder);
    const orders = merged.slice(0, BUYER_ORDERS_PAGE);
    // A full page may have more after it: a cell's page was full, or the merge was longer than a page.
    const nextAfter = merged.length >= BUYER_ORDERS_PAGE ? buyerOrdersAfter(orders.at(-1)!) : null;
    const unavailableCells = answers.filter((a) => !('orders' in a)).map((a) => a.cell);
    c.header('cache-control', 'no-store');
    return c.json({ orders, nextAfter, unavailableCells }, 200);
  };
}
