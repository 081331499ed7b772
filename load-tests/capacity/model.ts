/**
 * The capacity model: from an onsale (onsale.ts) and the CPU per request measured here (figures.ts) to a plan —
 * release rate per event, cells and what goes where, tasks per role, Redis shards, partitions, database class and
 * cost. Pure arithmetic, no I/O: every figure it prints is derived in this file from those two inputs, the prices
 * (prices.ts) and the assumptions below.
 */
import type { MeasuredFigures } from './figures';
import type { Onsale } from './onsale';
import { type BrokerType, type CacheNode, type DatabaseClass, PRICES, type Prices } from './prices';

/** What the plan assumes beyond the onsale and the measurements; printed with it. */
export const ASSUMPTIONS = {
  /** The share of each core a plan may use at its peak; the rest is the margin (a burst, a slower host, GC). */
  utilization: 0.6,
  /** Redis runs commands on one thread: the share of that one core a shard may use at the peak. */
  redisUtilization: 0.5,
  /** Fargate task sizes (vCPU) by role, as the stacks' defaults (infra/cdktf/src/roles.ts). */
  taskVcpu: { router: 1, controlPlaneApi: 1, cellApi: 1, relay: 0.5, consumer: 0.5 },
  taskMemoryGiB: { router: 2, controlPlaneApi: 2, cellApi: 2, relay: 1, consumer: 1 },
  /** Tasks a role keeps between onsales (the stacks' defaults: an API keeps 3, a worker 2, one per AZ and more). */
  minTasks: { router: 3, controlPlaneApi: 2, cellApi: 3, relay: 2, consumer: 2 },
  /** Kafka events per paid order (the brief's saga: HoldCreated … TicketIssued) and per abandoned hold. */
  kafkaEventsPerOrder: 8,
  kafkaEventsPerAbandonedHold: 2,
  /** The manifest's default partitions per topic: the plan never asks for fewer. */
  minPartitions: 24,
  /** Aurora readers beside the writer (failover targets, one per other AZ) and cache replicas per shard. */
  databaseReaders: 2,
  cacheReplicas: 2,
  /** Capacity is up this long before the doors open and after the last buyer is answered (the pre-warm, item 3). */
  prewarmMinutes: 30,
  tailMinutes: 30,
  /**
   * The largest database a cell grows to before the plan opens another: a bigger writer takes longer to fail over
   * and to restore, and a cell is the blast radius.
   */
  cellCeilingClass: 'db.r7g.4xlarge',
  /** At most this many events share a cell: one cell's failure stops no more of the onsale than that. */
  maxEventsPerCell: 8,
  /** An event that needs more than this share of a cell at its ceiling gets a cell of its own. */
  dedicatedCellShare: 0.5,
  /**
   * The release controller's ramp (control-plane/src/config.ts defaults): an onsale starts at this share of its
   * ceiling R (floor 1), and each tick without a breached signal adds the larger of 1 and this share of it. The check
   * against a run (check.ts) showed R is not there from the first second.
   */
  controller: { initialFraction: 0.25, increaseFraction: 0.05, tickSeconds: 5 },
  /** The simulation's step. */
  stepSeconds: 1,
} as const;
export type Assumptions = typeof ASSUMPTIONS;

export interface EventPlan {
  id: string;
  seats: number;
  orders: number;
  /** Buyers who come for it. */
  demand: number;
  /** Buyers to admit for every seat to be taken (orders ÷ conversion), or every comer when fewer come. */
  toAdmit: number;
  sellsOut: boolean;
  /** The release rate: buyers admitted per second. */
  releaseRate: number;
  /** What the target sell-out asked for, before the cell's ceiling. */
  wantedReleaseRate: number;
  /** R was lowered to what the largest cell holds. */
  cappedByCell: boolean;
  holdsPerSecond: number;
  ordersPerSecond: number;
  kafkaEventsPerSecond: number;
  /** PostgreSQL cores at R (holds and their outbox events). */
  postgresCores: number;
  /** Seconds from the doors' opening to the last seat taken (the last buyer needed admitted). */
  sellOutSeconds: number | null;
  /** Queue wait of the buyers admitted: median and worst (FIFO). */
  queueWaitSeconds: { p50: number; max: number };
  peakQueued: number;
  /** Redis cores of this event's queue at its peak: one event's queue lives on one shard. */
  redisCores: number;
  cell: string;
}

export interface CellPlan {
  id: string;
  events: string[];
  dedicated: boolean;
  holdsPerSecond: number;
  kafkaEventsPerSecond: number;
  postgresCores: number;
  databaseClass: DatabaseClass;
  tasks: { api: number; relay: number; consumers: number };
  kafka: { brokerType: BrokerType; brokers: number; partitions: number; cores: number };
}

export interface Plan {
  onsale: string;
  figures: MeasuredFigures['source'];
  assumptions: Assumptions;
  /** Per-core throughputs derived from the measured CPU per request (1000 ÷ ms). */
  perCore: Record<string, number>;
  events: EventPlan[];
  cells: CellPlan[];
  peak: {
    joinsPerSecond: number;
    pollsPerSecond: number;
    holdsPerSecond: number;
    requestsPerSecond: number;
    queued: number;
  };
  requestsTotal: number;
  durationSeconds: number;
  controlPlane: { routerTasks: number; apiTasks: number };
  waitingRoom: {
    shards: number;
    nodeType: CacheNode;
    memoryGiB: number;
    cores: number;
    oneEventOverOneShard: string[];
  };
  cost: CostPlan;
  warnings: string[];
}

export interface CostPlan {
  peakPerHour: Record<string, number>;
  steadyPerHour: Record<string, number>;
  monthly: number;
  onsaleHours: number;
  perOnsale: { scaleOut: number; edgeRequests: number; loadBalancer: number; total: number };
}

const ceilDiv = (a: number, b: number) => Math.ceil(a / b - 1e-9);
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** Tasks of `vcpu` each that carry `cores` of work at the plan's utilization, never fewer than `min`. */
export function tasksFor(cores: number, vcpu: number, min: number, utilization = ASSUMPTIONS.utilization): number {
  return Math.max(min, ceilDiv(cores, vcpu * utilization));
}

/** The smallest class whose vCPUs carry `cores` at the plan's utilization; the largest when none does. */
export function databaseClassFor(cores: number, prices: Prices = PRICES): DatabaseClass {
  const classes = Object.entries(prices.auroraPostgres) as [DatabaseClass, { vcpu: number }][];
  return (classes.find(([, c]) => c.vcpu * ASSUMPTIONS.utilization >= cores) ?? classes.at(-1)!)[0];
}

/** Hold requests per admitted buyer: those who try (they buy or abandon) times their attempts. */
export const holdsPerAdmitted = (o: Onsale) => (o.conversion + o.abandonment) * o.holdAttemptsPerBuyer;

/** Per admitted buyer: hold requests, Kafka events and the PostgreSQL CPU (ms) they cost. */
export function perAdmittedBuyer(o: Onsale, f: MeasuredFigures) {
  const holds = holdsPerAdmitted(o);
  const kafkaEvents =
    o.conversion * ASSUMPTIONS.kafkaEventsPerOrder + o.abandonment * ASSUMPTIONS.kafkaEventsPerAbandonedHold;
  return { holds, kafkaEvents, postgresMs: holds * f.hold.postgres + kafkaEvents * f.relayEvent.postgres };
}

/** The rate the release controller lets an event's room admit at, `t` seconds after the doors open, ceiling `r`. */
export function rampedRate(r: number, t: number): number {
  const c = ASSUMPTIONS.controller;
  const initial = Math.min(r, Math.max(1, Math.round(r * c.initialFraction)));
  return Math.min(r, initial + Math.floor(t / c.tickSeconds) * Math.max(1, r * c.increaseFraction));
}

/** Arrivals per second at second `t` from the doors' opening (the curve's windows, each even within). */
export function arrivalRate(o: Onsale, comers: number, t: number): number {
  let from = 0;
  for (const w of o.arrival) {
    if (t < from + w.seconds) return (comers * w.share) / w.seconds;
    from += w.seconds;
  }
  return 0;
}

export function demandShares(o: Onsale): number[] {
  const seats = o.events.reduce((a, e) => a + e.seats, 0);
  return o.events.map((e) => e.demandShare ?? e.seats / seats);
}

/** R for one event: its buyers to admit over the target sell-out less the payment tail, within the cell's ceiling. */
export function releaseRateFor(o: Onsale, toAdmit: number, ceiling: number) {
  const window = Math.max(60, o.targetSellOutSeconds - o.paymentSeconds);
  const wanted = Math.max(1, Math.ceil(toAdmit / window));
  return { wanted, rate: Math.min(wanted, Math.floor(ceiling)), capped: wanted > ceiling };
}

interface Timeline {
  /** Per event: seconds when its last needed buyer was admitted (null: never within the simulation). */
  lastAdmitted: (number | null)[];
  waits: { p50: number; max: number }[];
  peakQueuedPerEvent: number[];
  peakPollsPerEvent: number[];
  peakJoinsPerEvent: number[];
  peak: { joins: number; polls: number; holds: number; requests: number; queued: number };
  requestsTotal: number;
  seconds: number;
}

/**
 * Second by second: buyers arrive by the curve, each event's queue admits at R (after the release controller's ramp,
 * rampedRate) per second (FIFO) until it has admitted
 * the buyers its seats need, then tells the rest it sold out. Queued buyers poll every poll interval; a buyer told
 * "sold out" or admitted stops polling. Returns the peaks the tasks are sized for.
 */
export function simulate(o: Onsale, rates: number[], toAdmit: number[], holdsPerAdmitted: number): Timeline {
  const shares = demandShares(o);
  const comers = o.registeredBuyers * o.turnout;
  const arrivalSeconds = o.arrival.reduce((a, w) => a + w.seconds, 0);
  const n = o.events.length;
  const queued = new Array<number>(n).fill(0);
  const admitted = new Array<number>(n).fill(0);
  const arrived = new Array<number>(n).fill(0);
  const lastAdmitted = new Array<number | null>(n).fill(null);
  // FIFO waits: the k-th admitted buyer arrived when the arrivals count passed k.
  const arrivals: { at: number; count: number }[][] = Array.from({ length: n }, () => []);
  const waitSamples: number[][] = Array.from({ length: n }, () => []);
  const seen = new Array<number>(n).fill(0);
  const peakQueuedPerEvent = new Array<number>(n).fill(0);
  const peakPollsPerEvent = new Array<number>(n).fill(0);
  const peakJoinsPerEvent = new Array<number>(n).fill(0);
  const peak = { joins: 0, polls: 0, holds: 0, requests: 0, queued: 0 };
  let requestsTotal = 0;
  const step = ASSUMPTIONS.stepSeconds;
  let t = 0;
  const done = () => t >= arrivalSeconds && queued.every((q) => q < 0.5);
  for (; !done() && t < 7 * 86_400; t += step) {
    let joins = 0;
    let polls = 0;
    let holds = 0;
    let queuedNow = 0;
    for (let e = 0; e < n; e++) {
      const join = arrivalRate(o, comers, t) * shares[e]! * step;
      arrived[e]! += join;
      arrivals[e]!.push({ at: t, count: arrived[e]! });
      joins += join / step;
      peakJoinsPerEvent[e] = Math.max(peakJoinsPerEvent[e]!, join / step);
      if (admitted[e]! >= toAdmit[e]! - 1e-9) {
        // Sold out: a newcomer learns it at its first poll and leaves.
        polls += join / step;
        queued[e] = 0;
        continue;
      }
      queued[e]! += join;
      const admit = Math.min(queued[e]!, rampedRate(rates[e]!, t) * step, toAdmit[e]! - admitted[e]!);
      const before = admitted[e]!;
      admitted[e]! += admit;
      queued[e]! -= admit;
      holds += (admit * holdsPerAdmitted) / step;
      // The buyers admitted this step arrived when the cumulative arrivals passed their rank.
      for (let k = Math.ceil(before + 1e-9); k <= admitted[e]! + 1e-9; k += Math.max(1, Math.floor(admit / 20) || 1)) {
        const list = arrivals[e]!;
        while (seen[e]! < list.length - 1 && list[seen[e]!]!.count < k - 1e-9) seen[e]!++;
        waitSamples[e]!.push(t - list[seen[e]!]!.at);
      }
      if (admitted[e]! >= toAdmit[e]! - 1e-9) {
        lastAdmitted[e] = t + step;
        queued[e] = 0;
      }
      const eventPolls = queued[e]! / o.pollIntervalSeconds;
      polls += eventPolls;
      queuedNow += queued[e]!;
      peakQueuedPerEvent[e] = Math.max(peakQueuedPerEvent[e]!, queued[e]!);
      peakPollsPerEvent[e] = Math.max(peakPollsPerEvent[e]!, eventPolls);
    }
    const requests = joins + polls + holds;
    requestsTotal += requests * step;
    peak.joins = Math.max(peak.joins, joins);
    peak.polls = Math.max(peak.polls, polls);
    peak.holds = Math.max(peak.holds, holds);
    peak.requests = Math.max(peak.requests, requests);
    peak.queued = Math.max(peak.queued, queuedNow);
  }
  const quantile = (xs: number[], q: number) => {
    if (xs.length === 0) return 0;
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  };
  return {
    lastAdmitted,
    waits: waitSamples.map((w) => ({ p50: quantile(w, 0.5), max: w.length ? Math.max(...w) : 0 })),
    peakQueuedPerEvent,
    peakPollsPerEvent,
    peakJoinsPerEvent,
    peak,
    requestsTotal,
    seconds: t,
  };
}

export function plan(o: Onsale, f: MeasuredFigures, prices: Prices = PRICES): Plan {
  const A = ASSUMPTIONS;
  const warnings: string[] = [];
  const per = perAdmittedBuyer(o, f);
  const ceilingDb = prices.auroraPostgres[A.cellCeilingClass];
  // The most buyers per second one cell admits: its database at the ceiling class, at the plan's utilization.
  const cellCeiling = (ceilingDb.vcpu * A.utilization * 1000) / per.postgresMs;
  const comers = o.registeredBuyers * o.turnout;
  const shares = demandShares(o);

  const base = o.events.map((e, i) => {
    const orders = e.seats / e.seatsPerOrder;
    const demand = comers * shares[i]!;
    const needed = o.conversion > 0 ? orders / o.conversion : Number.POSITIVE_INFINITY;
    const toAdmit = Math.min(demand, needed);
    const r = releaseRateFor(o, toAdmit, cellCeiling);
    if (r.capped)
      warnings.push(
        `${e.id}: R ${r.wanted}/s would need a database beyond a cell's ceiling (${A.cellCeilingClass}); held to ${r.rate}/s, so it sells out later than the target`,
      );
    return { e, orders, demand, toAdmit, sellsOut: demand >= needed, ...r };
  });
  const timeline = simulate(
    o,
    base.map((b) => b.rate),
    base.map((b) => b.toAdmit),
    per.holds,
  );

  // Events onto cells: first fit, largest first, by PostgreSQL cores; a big event gets a cell of its own.
  const cellCores = ceilingDb.vcpu * A.utilization;
  const events: EventPlan[] = base.map((b, i) => {
    const pgCores = (b.rate * per.postgresMs) / 1000;
    const redisCores =
      (timeline.peakJoinsPerEvent[i]! * f.join.redis + timeline.peakPollsPerEvent[i]! * f.poll.redis) / 1000;
    return {
      id: b.e.id,
      seats: b.e.seats,
      orders: round(b.orders, 1),
      demand: Math.round(b.demand),
      toAdmit: Math.round(b.toAdmit),
      sellsOut: b.sellsOut,
      releaseRate: b.rate,
      wantedReleaseRate: b.wanted,
      cappedByCell: b.capped,
      holdsPerSecond: round(b.rate * per.holds, 1),
      ordersPerSecond: round(b.rate * o.conversion, 1),
      kafkaEventsPerSecond: round(b.rate * per.kafkaEvents, 1),
      postgresCores: round(pgCores, 3),
      sellOutSeconds: b.sellsOut && timeline.lastAdmitted[i] !== null ? timeline.lastAdmitted[i]! : null,
      queueWaitSeconds: timeline.waits[i]!,
      peakQueued: Math.round(timeline.peakQueuedPerEvent[i]!),
      redisCores: round(redisCores, 3),
      cell: '',
    };
  });
  const bins: { events: EventPlan[]; cores: number; dedicated: boolean }[] = [];
  for (const ev of [...events].sort((a, b) => b.postgresCores - a.postgresCores)) {
    if (ev.postgresCores > cellCores * A.dedicatedCellShare) {
      bins.push({ events: [ev], cores: ev.postgresCores, dedicated: true });
      continue;
    }
    const bin = bins.find(
      (c) => !c.dedicated && c.events.length < A.maxEventsPerCell && c.cores + ev.postgresCores <= cellCores,
    );
    if (bin) {
      bin.events.push(ev);
      bin.cores += ev.postgresCores;
    } else bins.push({ events: [ev], cores: ev.postgresCores, dedicated: false });
  }
  const cells: CellPlan[] = bins.map((bin, k) => {
    const id = `c${k + 1}`;
    for (const ev of bin.events) ev.cell = id;
    const rate = bin.events.reduce((a, ev) => a + ev.releaseRate, 0);
    const holds = rate * per.holds;
    const kafkaEvents = rate * per.kafkaEvents;
    const consumers = tasksFor((kafkaEvents * f.relayEvent.relay) / 1000, A.taskVcpu.consumer, A.minTasks.consumer);
    const kafkaCores = (kafkaEvents * f.relayEvent.kafka) / 1000;
    return {
      id,
      events: bin.events.map((ev) => ev.id),
      dedicated: bin.dedicated,
      holdsPerSecond: round(holds, 1),
      kafkaEventsPerSecond: round(kafkaEvents, 1),
      postgresCores: round(bin.cores, 3),
      databaseClass: databaseClassFor(bin.cores, prices),
      tasks: {
        api: tasksFor((holds * f.hold.cellApi) / 1000, A.taskVcpu.cellApi, A.minTasks.cellApi),
        relay: tasksFor((kafkaEvents * f.relayEvent.relay) / 1000, A.taskVcpu.relay, A.minTasks.relay),
        consumers,
      },
      kafka: {
        ...brokersFor(kafkaCores, prices),
        partitions: Math.max(A.minPartitions, consumers),
        cores: round(kafkaCores, 3),
      },
    };
  });

  const p = timeline.peak;
  const routerCores = (p.requests * f.routerForward.router) / 1000;
  const apiCores = (p.joins * f.join.controlPlaneApi + p.polls * f.poll.controlPlaneApi) / 1000;
  const redisCores = (p.joins * f.join.redis + p.polls * f.poll.redis) / 1000;
  const shards = Math.max(1, ceilDiv(redisCores, A.redisUtilization));
  const memoryGiB = (p.queued * f.redisBytesPerQueuedBuyer) / 2 ** 30;
  const nodeType = cacheNodeFor(memoryGiB / shards, prices);
  const overOneShard = events.filter((ev) => ev.redisCores > A.redisUtilization).map((ev) => ev.id);
  if (overOneShard.length > 0)
    warnings.push(
      `one event's queue lives on one Redis shard, and ${overOneShard.length > 4 ? `${overOneShard.length} events (${overOneShard.slice(0, 3).join(', ')}, …)` : overOneShard.join(', ')} need more than one primary's core at the peak: the sharded waiting room (issue 43 item 4) or a poll that needs no Redis (item 5) is needed, or a longer poll interval`,
    );
  const controlPlane = {
    routerTasks: tasksFor(routerCores, A.taskVcpu.router, A.minTasks.router),
    apiTasks: tasksFor(apiCores, A.taskVcpu.controlPlaneApi, A.minTasks.controlPlaneApi),
  };
  const cost = costOf(cells, controlPlane, { shards, nodeType }, timeline, prices);
  return {
    onsale: o.name,
    figures: f.source,
    assumptions: A,
    perCore: {
      'holds/s per cell API core': round(1000 / f.hold.cellApi, 0),
      'holds/s per PostgreSQL core': round(1000 / f.hold.postgres, 0),
      'forwards/s per router core': round(1000 / f.routerForward.router, 0),
      ...(f.nginxForward ? { 'forwards/s per nginx core (reference)': round(1000 / f.nginxForward.nginx, 0) } : {}),
      'joins/s per control plane API core': round(1000 / f.join.controlPlaneApi, 0),
      'polls/s per control plane API core': round(1000 / f.poll.controlPlaneApi, 0),
      'polls/s per Redis core': round(1000 / f.poll.redis, 0),
      'joins/s per Redis core': round(1000 / f.join.redis, 0),
      'events/s per relay core': round(1000 / f.relayEvent.relay, 0),
      'events/s per Kafka broker core': round(1000 / f.relayEvent.kafka, 0),
    },
    events,
    cells,
    peak: {
      joinsPerSecond: Math.round(p.joins),
      pollsPerSecond: Math.round(p.polls),
      holdsPerSecond: Math.round(p.holds),
      requestsPerSecond: Math.round(p.requests),
      queued: Math.round(p.queued),
    },
    requestsTotal: Math.round(timeline.requestsTotal),
    durationSeconds: timeline.seconds,
    controlPlane,
    waitingRoom: {
      shards,
      nodeType,
      memoryGiB: round(memoryGiB, 2),
      cores: round(redisCores, 2),
      oneEventOverOneShard: overOneShard,
    },
    cost,
    warnings,
  };
}

/** The smallest broker type that carries `cores` on at most 6 brokers (3 per AZ pair), in multiples of 3. */
export function brokersFor(cores: number, prices: Prices = PRICES): { brokerType: BrokerType; brokers: number } {
  const types = Object.entries(prices.msk.brokers) as [BrokerType, { vcpu: number }][];
  for (const [type, spec] of types) {
    const brokers = Math.max(3, 3 * ceilDiv(ceilDiv(cores, spec.vcpu * ASSUMPTIONS.utilization), 3));
    if (brokers <= 6) return { brokerType: type, brokers };
  }
  const [type, spec] = types.at(-1)!;
  return {
    brokerType: type,
    brokers: Math.max(3, 3 * ceilDiv(ceilDiv(cores, spec.vcpu * ASSUMPTIONS.utilization), 3)),
  };
}

/** The smallest node whose memory holds `gib` with half of it free (replication buffers, fragmentation). */
export function cacheNodeFor(gib: number, prices: Prices = PRICES): CacheNode {
  const nodes = Object.entries(prices.elasticache) as [CacheNode, { memoryGiB: number }][];
  return (nodes.find(([, n]) => n.memoryGiB / 2 >= gib) ?? nodes.at(-1)!)[0];
}

function costOf(
  cells: CellPlan[],
  cp: { routerTasks: number; apiTasks: number },
  room: { shards: number; nodeType: CacheNode },
  timeline: Timeline,
  prices: Prices,
): CostPlan {
  const A = ASSUMPTIONS;
  const task = (vcpu: number, gib: number) => vcpu * prices.fargate.vcpuHour + gib * prices.fargate.gbHour;
  const tasksHourly = (peak: boolean) => {
    const n = (tasks: number, min: number) => (peak ? tasks : min);
    let cellTasks = 0;
    for (const c of cells) {
      cellTasks +=
        n(c.tasks.api, A.minTasks.cellApi) * task(A.taskVcpu.cellApi, A.taskMemoryGiB.cellApi) +
        n(c.tasks.relay, A.minTasks.relay) * task(A.taskVcpu.relay, A.taskMemoryGiB.relay) +
        // Three consumer roles (saga, payment, ticket), each sized alike.
        3 * n(c.tasks.consumers, A.minTasks.consumer) * task(A.taskVcpu.consumer, A.taskMemoryGiB.consumer);
    }
    return {
      'router tasks': n(cp.routerTasks, A.minTasks.router) * task(A.taskVcpu.router, A.taskMemoryGiB.router),
      'control plane API tasks':
        n(cp.apiTasks, A.minTasks.controlPlaneApi) * task(A.taskVcpu.controlPlaneApi, A.taskMemoryGiB.controlPlaneApi),
      'cell tasks': cellTasks,
    };
  };
  // Databases and brokers stay at the plan's size (an instance class change is a failover, done days ahead); the
  // waiting room keeps one shard between onsales and gets the rest before the doors open.
  const roomShards = (peak: boolean) => (peak ? room.shards : 1);
  const provisioned = (peak: boolean) => ({
    'cell databases (writer + readers)': cells.reduce(
      (a, c) => a + (1 + A.databaseReaders) * prices.auroraPostgres[c.databaseClass].hour,
      0,
    ),
    'cell Kafka brokers': cells.reduce((a, c) => a + c.kafka.brokers * prices.msk.brokers[c.kafka.brokerType].hour, 0),
    'waiting room Redis (primaries + replicas)':
      roomShards(peak) * (1 + A.cacheReplicas) * prices.elasticache[room.nodeType].hour,
  });
  const fix = (r: Record<string, number>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, round(v, 2)]));
  const peakPerHour = fix({ ...tasksHourly(true), ...provisioned(true) });
  const steadyPerHour = fix({ ...tasksHourly(false), ...provisioned(false) });
  const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  const onsaleHours = (A.prewarmMinutes + A.tailMinutes) / 60 + timeline.seconds / 3600;
  const scaleOut = (sum(peakPerHour) - sum(steadyPerHour)) * onsaleHours;
  const edgeRequests = (timeline.requestsTotal / 10_000) * prices.cloudfront.httpsPer10k;
  const averageRps = timeline.requestsTotal / Math.max(1, timeline.seconds);
  const loadBalancer =
    (averageRps / prices.alb.requestsPerSecondPerLcu) * prices.alb.lcuHour * (timeline.seconds / 3600);
  return {
    peakPerHour,
    steadyPerHour,
    monthly: round(sum(steadyPerHour) * prices.hoursPerMonth, 0),
    onsaleHours: round(onsaleHours, 2),
    perOnsale: {
      scaleOut: round(scaleOut, 2),
      edgeRequests: round(edgeRequests, 2),
      loadBalancer: round(loadBalancer, 2),
      total: round(scaleOut + edgeRequests + loadBalancer, 2),
    },
  };
}

/** The plan's cells as the stacks' manifest takes them (infra/cdktf/cells.json `cells`), plus the control plane's services. */
export function manifestFragment(p: Plan, region: string) {
  return {
    controlPlane: {
      services: {
        api: { max: Math.max(p.controlPlane.apiTasks, ASSUMPTIONS.minTasks.controlPlaneApi) },
        router: { max: Math.max(p.controlPlane.routerTasks, ASSUMPTIONS.minTasks.router) },
      },
      cache: { nodeType: p.waitingRoom.nodeType, replicas: ASSUMPTIONS.cacheReplicas },
    },
    cells: p.cells.map((c, k) => ({
      id: c.id,
      region,
      cidr: `10.${20 + k}.0.0/16`,
      sizing: {
        database: { instanceClass: c.databaseClass, readers: ASSUMPTIONS.databaseReaders },
        kafka: { brokerType: c.kafka.brokerType, brokers: c.kafka.brokers, partitions: c.kafka.partitions },
        services: {
          api: { max: Math.max(c.tasks.api, ASSUMPTIONS.minTasks.cellApi) },
          'outbox-relay': { max: Math.max(c.tasks.relay, ASSUMPTIONS.minTasks.relay) },
          saga: { max: c.tasks.consumers },
          payment: { max: c.tasks.consumers },
          ticket: { max: c.tasks.consumers },
        },
      },
    })),
  };
}
