/** The plan as the platform team reads it (see README "Reading a capacity plan"). */
import { ASSUMPTIONS, manifestFragment, type Plan } from './model';
import { PRICES } from './prices';

const n = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 2 });
const usd = (x: number) => `$${x.toLocaleString('en-US', { maximumFractionDigits: x < 100 ? 2 : 0 })}`;
const dur = (s: number | null) =>
  s === null
    ? 'does not sell out'
    : s < 120
      ? `${Math.round(s)} s`
      : s < 7200
        ? `${n(s / 60)} min`
        : `${n(s / 3600)} h`;

export function printPlan(p: Plan, region: string): string {
  const A = ASSUMPTIONS;
  const lines: string[] = [];
  const out = (s = '') => lines.push(s);
  out(`# Capacity plan: ${p.onsale}`);
  out();
  out(`Measured figures: ${p.figures.file} (bench:all of ${p.figures.date}, commit ${p.figures.commit}).`);
  out(
    `Margin: every pool of cores is sized to ${A.utilization * 100} % at the peak (Redis: ${A.redisUtilization * 100} % of its one thread); prices: prices.ts (${PRICES.region}, as of ${PRICES.asOf}).`,
  );
  out();
  out('## Per-core throughput (1000 ÷ measured CPU ms per request)');
  for (const [k, v] of Object.entries(p.perCore)) out(`  ${k.padEnd(42)} ${n(v)}`);
  out();
  out('## Peak load');
  out(
    `  joins ${n(p.peak.joinsPerSecond)}/s, polls ${n(p.peak.pollsPerSecond)}/s, holds ${n(p.peak.holdsPerSecond)}/s: ${n(p.peak.requestsPerSecond)} requests/s; ${n(p.peak.queued)} queued at once`,
  );
  out(
    `  ${n(p.requestsTotal)} requests in ${dur(p.durationSeconds)} from the doors' opening to the last queued buyer answered`,
  );
  out();
  out('## Events: release rate R, sell-out, queue');
  out('  event             seats    R/s (wanted)  holds/s  PG cores  sell-out      wait p50 / max   peak queued  cell');
  for (const e of p.events) {
    const rate = `${String(e.releaseRate).padStart(6)} (${e.wantedReleaseRate})${e.cappedByCell ? '*' : ' '}`;
    const wait = `${dur(e.queueWaitSeconds.p50)} / ${dur(e.queueWaitSeconds.max)}`;
    out(
      `  ${e.id.padEnd(16)} ${String(e.seats).padStart(7)}  ${rate.padEnd(13)} ${n(e.holdsPerSecond).padStart(8)} ${n(e.postgresCores).padStart(9)}  ${dur(e.sellOutSeconds).padEnd(12)}  ${wait.padEnd(18)} ${n(e.peakQueued).padStart(10)}  ${e.cell}`,
    );
  }
  if (p.events.some((e) => e.cappedByCell)) out('  * R held below the wanted rate by the cell ceiling (see warnings)');
  out();
  out('## Cells');
  for (const c of p.cells)
    out(
      `  ${c.id}${c.dedicated ? ' (dedicated)' : ''}: ${c.events.join(', ')}; ${n(c.holdsPerSecond)} holds/s, ${n(c.kafkaEventsPerSecond)} Kafka events/s; ` +
        `database ${c.databaseClass} (${n(c.postgresCores)} PG cores), API ${c.tasks.api} tasks, relay ${c.tasks.relay}, saga/payment/ticket ${c.tasks.consumers} each; ` +
        `Kafka ${c.kafka.brokers} × ${c.kafka.brokerType}, ${c.kafka.partitions} partitions`,
    );
  out();
  out('## Control plane and edge');
  out(
    `  router tasks ${p.controlPlane.routerTasks}, control plane API (waiting room) tasks ${p.controlPlane.apiTasks}`,
  );
  out(
    `  waiting room Redis: ${p.waitingRoom.shards} shard(s) of ${p.waitingRoom.nodeType} (${n(p.waitingRoom.cores)} cores of commands at the peak, ${n(p.waitingRoom.memoryGiB)} GiB of queue)`,
  );
  out();
  out('## Cost');
  out(
    `  at the peak, per hour: ${Object.entries(p.cost.peakPerHour)
      .map(([k, v]) => `${k} ${usd(v)}`)
      .join(', ')}`,
  );
  out(
    `  between onsales, per hour: ${Object.entries(p.cost.steadyPerHour)
      .map(([k, v]) => `${k} ${usd(v)}`)
      .join(', ')}`,
  );
  out(`  monthly (between onsales, provisioned for this one): ${usd(p.cost.monthly)}`);
  out(
    `  per onsale (${n(p.cost.onsaleHours)} h scaled out): ${usd(p.cost.perOnsale.total)} = scale-out ${usd(p.cost.perOnsale.scaleOut)} + edge requests ${usd(p.cost.perOnsale.edgeRequests)} + load balancer ${usd(p.cost.perOnsale.loadBalancer)}`,
  );
  if (p.warnings.length > 0) {
    out();
    out('## Warnings');
    for (const w of p.warnings) out(`  - ${w}`);
  }
  out();
  out('## Manifest fragment (infra/cdktf/cells.json shape)');
  out(JSON.stringify(manifestFragment(p, region), null, 2));
  return lines.join('\n');
}
