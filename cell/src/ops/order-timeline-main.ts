/**
 * Prints one order's whole history from the cell's own tables, oldest first.
 *
 *   CELL_ID=c1 DATABASE_URL=$DATABASE_URL_CELL_C1 pnpm --filter @onsale/cell order-timeline <orderId> [--json]
 */
import { createLogger, parseEnv } from '@onsale/contracts';
import { z } from 'zod';
import { CellBaseConfig } from '../config';
import { openDatabase } from '../db/client';
import { orderTimeline } from './order-timeline';

const args = process.argv.slice(2).filter((a) => a !== '--');
const orderId = args.find((a) => !a.startsWith('--'));
if (!orderId || !z.string().uuid().safeParse(orderId).success) {
  console.error('usage: order-timeline <orderId (uuid)> [--json]');
  process.exit(2);
}
const config = parseEnv(CellBaseConfig);
const database = openDatabase(config.DATABASE_URL, 1, 'order-timeline', config);
try {
  const ctx = {
    db: database.db,
    database,
    cellId: config.CELL_ID,
    epoch: config.CELL_EPOCH,
    log: createLogger({ role: 'order-timeline', cellId: config.CELL_ID }, 'warn'),
  };
  const timeline = await orderTimeline(ctx, orderId);
  if (!timeline) {
    console.error(`no order ${orderId} in ${config.CELL_ID}`);
    process.exitCode = 1;
  } else if (args.includes('--json')) {
    console.log(JSON.stringify(timeline, null, 2));
  } else {
    console.log(`order ${timeline.orderId}  cell ${timeline.cellId}  event ${timeline.eventId}`);
    console.log(`status ${timeline.status}  correlation ${timeline.correlationId}\n`);
    for (const e of timeline.entries) {
      const details = Object.entries(e.details)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      console.log(`${e.at}  ${e.what.padEnd(22)} ${details}`);
    }
  }
} finally {
  await database.close();
}
