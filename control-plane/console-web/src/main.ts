import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './console.css';

/**
 * The console's only script: the live view (server-sent snapshots into tiles, charts, the funnel,
 * the per-section table and the seat map) and the seat-map drawing on the event page. Forms work
 * without it.
 */

interface Snapshot {
  at: string;
  room: {
    waiting: number;
    released: number;
    activeShoppers: number;
    rate: number;
    paused: boolean;
    maxReleaseRate: number;
  } | null;
  sales: {
    holds: number;
    paidOrders: number;
    seatsSold: number;
    gross: number;
    refunded: number;
    net: number;
    declines: number;
    expiries: number;
    funnel: Record<'queued' | 'admitted' | 'held' | 'paid' | 'ticketed', number>;
  };
  sections: { section: string; tier: string; capacity: number; sold: number; held: number; remaining: number }[];
  decisions: { at: string; oldRate: number; newRate: number; reason: string }[];
  seats?: { held: string[]; sold: string[] };
}

const COLOURS = { available: '#2e7d32', held: '#f9a825', sold: '#6a1b9a' } as const;
const fmtMoney = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'EUR' });
const el = <T extends Element>(root: ParentNode, sel: string) => root.querySelector<T>(sel);

function text(tag: string, value: string, cls?: string) {
  const e = document.createElement(tag);
  e.textContent = value;
  if (cls) e.className = cls;
  return e;
}

/** Draws seats grouped by section (blocks side by side) and row; colours follow the latest seat states. */
class SeatMap {
  private seats: { id: string; x: number; y: number }[] = [];
  private state = new Map<string, 'held' | 'sold'>();
  private size = 6;
  private readonly canvas: HTMLCanvasElement;

  constructor(
    private readonly root: HTMLElement,
    eventId: string,
  ) {
    this.canvas = el<HTMLCanvasElement>(root, 'canvas')!;
    void this.load(eventId);
  }

  private async load(eventId: string) {
    // The live view stays open through a control plane's restart or a store's stall: a map it could not read yet is
    // asked for again (every 1, 2, 4... at most 10 s) rather than left blank until the promoter reloads.
    const read = () =>
      fetch(`/console/events/${eventId}/seats.json`, { credentials: 'same-origin' }).catch(() => undefined);
    let res = await read();
    for (let wait = 1000; !res || res.status >= 500; wait = Math.min(wait * 2, 10_000)) {
      await new Promise((r) => setTimeout(r, wait));
      res = await read();
    }
    if (!res.ok) return;
    const { seats } = (await res.json()) as { seats: { id: string; section: string; row: string }[] };
    const bySection = new Map<string, Map<string, string[]>>();
    for (const s of seats) {
      const rows = bySection.get(s.section) ?? new Map<string, string[]>();
      const row = rows.get(s.row) ?? [];
      row.push(s.id);
      rows.set(s.row, row);
      bySection.set(s.section, rows);
    }
    const width = Math.max(300, this.root.clientWidth || 600);
    // Seats shrink with the map so a stadium still fits the page width.
    this.size = seats.length > 20_000 ? 2 : seats.length > 2_000 ? 4 : 8;
    const gap = this.size * 3;
    let x0 = 0;
    let y0 = 0;
    let bandHeight = 0;
    for (const rows of bySection.values()) {
      const cols = Math.max(...[...rows.values()].map((r) => r.length));
      const w = cols * this.size;
      const h = rows.size * this.size;
      if (x0 > 0 && x0 + w > width) {
        x0 = 0;
        y0 += bandHeight + gap;
        bandHeight = 0;
      }
      let r = 0;
      for (const row of rows.values()) {
        row.forEach((id, c) => {
          this.seats.push({ id, x: x0 + c * this.size, y: y0 + r * this.size });
        });
        r++;
      }
      x0 += w + gap;
      bandHeight = Math.max(bandHeight, h);
    }
    this.canvas.width = width;
    this.canvas.height = y0 + bandHeight + 2;
    this.root.dataset.seats = String(seats.length);
    this.draw();
  }

  update(seats: { held: string[]; sold: string[] }) {
    this.state.clear();
    for (const id of seats.held) this.state.set(id, 'held');
    for (const id of seats.sold) this.state.set(id, 'sold');
    this.draw();
  }

  private draw() {
    const ctx = this.canvas.getContext('2d');
    if (!ctx || !this.seats.length) return;
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    const counts = { available: 0, held: 0, sold: 0 };
    const inner = Math.max(1, this.size - 1);
    for (const s of this.seats) {
      const st = this.state.get(s.id) ?? 'available';
      counts[st]++;
      ctx.fillStyle = COLOURS[st];
      ctx.fillRect(s.x, s.y, inner, inner);
    }
    // What the map shows, readable by assistive technology and by the browser tests.
    this.root.dataset.available = String(counts.available);
    this.root.dataset.held = String(counts.held);
    this.root.dataset.sold = String(counts.sold);
    this.canvas.setAttribute(
      'aria-label',
      `Seat map: ${counts.available} available, ${counts.held} held, ${counts.sold} sold`,
    );
  }
}

/** A small time-series chart; keeps the last 10 minutes of points. */
class Series {
  private readonly data: number[][];
  private readonly plot: uPlot;
  constructor(target: HTMLElement, labels: string[], colours: string[]) {
    this.data = [[], ...labels.map(() => [])];
    this.plot = new uPlot(
      {
        width: Math.max(260, target.clientWidth || 320),
        height: 180,
        series: [{}, ...labels.map((label, i) => ({ label, stroke: colours[i], width: 2 }))],
        axes: [{}, { size: 60 }],
        legend: { live: false },
      },
      this.data as uPlot.AlignedData,
      target,
    );
  }
  push(t: number, values: number[]) {
    this.data[0]!.push(t);
    for (const [i, v] of values.entries()) this.data[i + 1]!.push(v);
    while (this.data[0]!.length > 600) for (const s of this.data) s.shift();
    this.plot.setData(this.data as uPlot.AlignedData);
  }
}

function liveView(root: HTMLElement, eventId: string, map: SeatMap | null) {
  const stat = (k: string, v: string) => {
    const e = el<HTMLElement>(root, `[data-stat="${k}"]`);
    if (e) e.textContent = v;
  };
  const chart = (name: string, labels: string[], colours: string[]) => {
    const target = el<HTMLElement>(root, `[data-chart="${name}"]`);
    return target ? new Series(target, labels, colours) : null;
  };
  const room = chart('room', ['queue', 'admitted/min'], ['#1565c0', '#2e7d32']);
  const sales = chart('sales', ['holds/s', 'paid orders'], ['#f9a825', '#6a1b9a']);
  const revenue = chart('revenue', ['revenue (EUR)'], ['#00695c']);
  const state = document.querySelector<HTMLElement>('[data-live-state]');
  let prev: { t: number; released: number; holds: number } | null = null;
  const admitted: { t: number; released: number }[] = [];

  const source = new EventSource(`/console/events/${eventId}/live/stream`);
  source.addEventListener('open', () => {
    if (state) state.textContent = 'live';
  });
  source.addEventListener('error', () => {
    if (state) state.textContent = 'reconnecting…';
  });
  source.addEventListener('snapshot', (e) => {
    const s = JSON.parse((e as MessageEvent<string>).data) as Snapshot;
    const t = Date.parse(s.at) / 1000;
    const released = s.room?.released ?? 0;
    admitted.push({ t, released });
    while (admitted.length > 1 && t - admitted[0]!.t > 60) admitted.shift();
    const first = admitted[0]!;
    const perMin = t > first.t ? ((released - first.released) * 60) / (t - first.t) : 0;
    const holdsPerSec = prev && t > prev.t ? (s.sales.holds - prev.holds) / (t - prev.t) : 0;
    prev = { t, released, holds: s.sales.holds };

    stat('waiting', String(s.room?.waiting ?? 0));
    stat('admittedPerMin', perMin.toFixed(0));
    stat('rate', s.room ? (s.room.paused ? 'paused' : s.room.rate.toFixed(1)) : '—');
    stat('holdsPerSec', holdsPerSec.toFixed(1));
    stat('paidOrders', String(s.sales.paidOrders));
    stat('seatsSold', String(s.sales.seatsSold));
    stat('revenue', fmtMoney.format(s.sales.net / 100));
    stat('expiries', String(s.sales.expiries));
    stat('declines', String(s.sales.declines));
    room?.push(t, [s.room?.waiting ?? 0, perMin]);
    sales?.push(t, [holdsPerSec, s.sales.paidOrders]);
    revenue?.push(t, [s.sales.net / 100]);
    renderFunnel(root, s.sales.funnel);
    renderSections(root, s.sections);
    renderDecisions(root, s.decisions);
    if (s.seats) map?.update(s.seats);
    root.dataset.updatedAt = s.at;
    if (state) state.textContent = `live · updated ${new Date(s.at).toLocaleTimeString()}`;
  });
}

function renderFunnel(root: HTMLElement, f: Snapshot['sales']['funnel']) {
  const target = el<HTMLElement>(root, '[data-funnel]');
  if (!target) return;
  const steps = [
    ['queued', f.queued],
    ['admitted', f.admitted],
    ['held', f.held],
    ['paid', f.paid],
    ['ticketed', f.ticketed],
  ] as const;
  const top = Math.max(1, ...steps.map(([, n]) => n));
  const list = document.createElement('ol');
  list.className = 'funnel';
  for (const [name, n] of steps) {
    const li = document.createElement('li');
    li.append(text('span', name, 'label'));
    const bar = text('span', String(n), 'bar');
    bar.style.width = `${Math.max(2, (n / top) * 100)}%`;
    li.append(bar);
    list.append(li);
  }
  target.replaceChildren(list);
}

function renderSections(root: HTMLElement, rows: Snapshot['sections']) {
  const target = el<HTMLElement>(root, '[data-sections]');
  if (!target) return;
  const table = document.createElement('table');
  table.dataset.testid = 'sections';
  const head = table.createTHead().insertRow();
  head.append(text('th', 'Section'), text('th', 'Tier'));
  for (const h of ['Sold', 'Held', 'Remaining']) head.append(text('th', h, 'num'));
  head.append(text('th', ''));
  const body = table.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    tr.append(text('td', r.section), text('td', r.tier));
    tr.append(
      text('td', String(r.sold), 'num'),
      text('td', String(r.held), 'num'),
      text('td', String(r.remaining), 'num'),
    );
    const meter = document.createElement('meter');
    meter.max = Math.max(1, r.capacity);
    meter.value = r.sold;
    meter.setAttribute('aria-label', `${r.section} sold`);
    const cell = document.createElement('td');
    cell.append(meter);
    tr.append(cell);
  }
  target.replaceChildren(table);
}

function renderDecisions(root: HTMLElement, rows: Snapshot['decisions']) {
  const target = el<HTMLElement>(root, '[data-decisions]');
  if (!target) return;
  if (!rows.length) {
    target.replaceChildren(text('p', 'No decisions yet.'));
    return;
  }
  const list = document.createElement('ul');
  for (const d of rows)
    list.append(
      text(
        'li',
        `${new Date(d.at).toLocaleTimeString()}: ${d.oldRate.toFixed(1)} → ${d.newRate.toFixed(1)}/s, ${d.reason}`,
      ),
    );
  target.replaceChildren(list);
}

for (const root of document.querySelectorAll<HTMLElement>('[data-live]')) {
  const eventId = root.dataset.live!;
  const mapRoot = root.matches('[data-seatmap]') ? root : el<HTMLElement>(root, '[data-seatmap]');
  const map = mapRoot ? new SeatMap(mapRoot, eventId) : null;
  liveView(root, eventId, map);
}
