import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { percentile, round } from '../lib/stats';
import type { Form, Scenario, Stage } from '../scenarios/definition';
import type { Sample } from './generator';

export interface Check {
  name: string;
  limit: string;
  actual: number | string;
  ok: boolean;
}

export interface ScenarioReport {
  scenario: string;
  description: string;
  form: Form;
  startedAt: string;
  stages: Stage[];
  offered: number;
  dropped: number;
  seconds: number;
  summary: Record<
    string,
    {
      requests: number;
      perSecond: number;
      statuses: Record<number, number>;
      p50Ms: number;
      p95Ms: number;
      p99Ms: number;
    }
  >;
  timeline: { second: number; requests: number; unexpected: number; p50Ms: number; p99Ms: number }[];
  thresholds: Check[];
  invariants: Check[];
  passed: boolean;
}

function stats(samples: Sample[], seconds: number, expected: number[]) {
  const ms = samples.map((s) => s.ms);
  const statuses: Record<number, number> = {};
  for (const s of samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  return {
    requests: samples.length,
    perSecond: round(samples.length / Math.max(seconds, 0.001)),
    statuses,
    unexpected: samples.filter((s) => !expected.includes(s.status)).length,
    p50Ms: round(percentile([...ms], 50), 2),
    p95Ms: round(percentile([...ms], 95), 2),
    p99Ms: round(percentile([...ms], 99), 2),
  };
}

/** The run judged by the scenario's thresholds (the same ones the k6 script declares), with its invariants. */
export function buildReport(
  scenario: Scenario,
  form: Form,
  stages: Stage[],
  startedAt: Date,
  run: { samples: Sample[]; offered: number; dropped: number; seconds: number },
  invariants: Check[],
): ScenarioReport {
  const measured = run.samples.filter((s) => !s.op.startsWith('setup'));
  const all = stats(measured, run.seconds, scenario.expectedStatuses);
  const summary: ScenarioReport['summary'] = { all: all };
  for (const op of new Set(measured.map((s) => s.op))) {
    const { unexpected: _u, ...rest } = stats(
      measured.filter((s) => s.op === op),
      run.seconds,
      scenario.expectedStatuses,
    );
    summary[op] = rest;
  }
  const timeline: ScenarioReport['timeline'] = [];
  for (let second = 0; second < Math.ceil(run.seconds); second++) {
    const inSecond = measured.filter((s) => Math.floor(s.t / 1000) === second);
    const st = stats(inSecond, 1, scenario.expectedStatuses);
    timeline.push({ second, requests: st.requests, unexpected: st.unexpected, p50Ms: st.p50Ms, p99Ms: st.p99Ms });
  }
  const t = scenario.thresholds;
  const errorRate = measured.length ? all.unexpected / measured.length : 1;
  const droppedRate = run.offered ? run.dropped / run.offered : 0;
  const thresholds: Check[] = [
    { name: 'p95 latency', limit: `< ${t.p95Ms} ms`, actual: all.p95Ms, ok: all.p95Ms < t.p95Ms },
    { name: 'p99 latency', limit: `< ${t.p99Ms} ms`, actual: all.p99Ms, ok: all.p99Ms < t.p99Ms },
    {
      name: 'unexpected answers',
      limit: `< ${t.maxErrorRate * 100} % (expected: ${scenario.expectedStatuses.join(', ')})`,
      actual: round(errorRate * 100, 3),
      ok: errorRate < t.maxErrorRate,
    },
    {
      name: 'dropped arrivals',
      limit: `< ${t.maxDroppedRate * 100} % of ${run.offered}`,
      actual: round(droppedRate * 100, 3),
      ok: droppedRate < t.maxDroppedRate,
    },
  ];
  const { unexpected: _u, ...allSummary } = all;
  summary.all = allSummary;
  return {
    scenario: scenario.name,
    description: scenario.description,
    form,
    startedAt: startedAt.toISOString(),
    stages,
    offered: run.offered,
    dropped: run.dropped,
    seconds: round(run.seconds, 2),
    summary,
    timeline,
    thresholds,
    invariants,
    passed: [...thresholds, ...invariants].every((c) => c.ok),
  };
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A line chart as inline SVG: one polyline per series, axes labelled; no script, no external resource. */
function lineChart(title: string, unit: string, xs: number[], series: { name: string; color: string; ys: number[] }[]) {
  const w = 760;
  const h = 240;
  const pad = { l: 56, r: 16, t: 28, b: 32 };
  const finite = series.flatMap((s) => s.ys).filter(Number.isFinite);
  const maxY = Math.max(1, ...finite) * 1.1;
  const maxX = Math.max(1, ...xs);
  const x = (v: number) => pad.l + (v / maxX) * (w - pad.l - pad.r);
  const y = (v: number) => h - pad.b - (v / maxY) * (h - pad.t - pad.b);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxY);
  const lines = series.map((s) => {
    const pts = xs.flatMap((xv, k) =>
      Number.isFinite(s.ys[k]!) ? [`${x(xv).toFixed(1)},${y(s.ys[k]!).toFixed(1)}`] : [],
    );
    return `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.join(' ')}"/>`;
  });
  const legend = series.map(
    (s, k) =>
      `<text x="${pad.l + 8 + k * 120}" y="${pad.t - 10}" fill="${s.color}" font-size="12">■ ${esc(s.name)}</text>`,
  );
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${esc(title)}">
<rect x="0" y="0" width="${w}" height="${h}" fill="#fff"/>
${ticks.map((v) => `<line x1="${pad.l}" x2="${w - pad.r}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/><text x="${pad.l - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="11">${round(v, 1)}</text>`).join('\n')}
<line x1="${pad.l}" x2="${w - pad.r}" y1="${h - pad.b}" y2="${h - pad.b}" stroke="#333"/>
<text x="${w / 2}" y="${h - 6}" text-anchor="middle" font-size="11">seconds from start</text>
<text x="12" y="${h / 2}" font-size="11" transform="rotate(-90 12 ${h / 2})" text-anchor="middle">${esc(unit)}</text>
${lines.join('\n')}
${legend.join('\n')}
</svg></figure>`;
}

export function html(report: ScenarioReport): string {
  const xs = report.timeline.map((b) => b.second);
  const row = (c: Check) =>
    `<tr><td>${esc(c.name)}</td><td>${esc(c.limit)}</td><td>${esc(String(c.actual))}</td><td class="${c.ok ? 'ok' : 'fail'}">${c.ok ? 'pass' : 'FAIL'}</td></tr>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(report.scenario)} (${report.form}) ${esc(report.startedAt)}</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:820px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.ok{color:#14632d}.fail{color:#b00020;font-weight:bold}figure{margin:16px 0}figcaption{font-weight:bold}</style></head>
<body>
<h1>${esc(report.scenario)} — ${report.passed ? '<span class="ok">passed</span>' : '<span class="fail">failed</span>'}</h1>
<p>${esc(report.description)}</p>
<p>Form <b>${report.form}</b>, started ${esc(report.startedAt)}, ${report.seconds} s; ${report.offered} arrivals offered, ${report.dropped} dropped. Stages: ${report.stages.map((s) => `${s.target}/s over ${s.seconds} s`).join(', ')}.</p>
${lineChart('Latency over time', 'ms', xs, [
  { name: 'p50', color: '#1f77b4', ys: report.timeline.map((b) => b.p50Ms) },
  { name: 'p99', color: '#d62728', ys: report.timeline.map((b) => b.p99Ms) },
])}
${lineChart('Throughput', 'requests/s', xs, [
  { name: 'answered', color: '#2ca02c', ys: report.timeline.map((b) => b.requests) },
  { name: 'unexpected', color: '#d62728', ys: report.timeline.map((b) => b.unexpected) },
])}
<h2>Thresholds</h2><table><tr><th>check</th><th>limit</th><th>actual</th><th></th></tr>${report.thresholds.map(row).join('')}</table>
<h2>Invariants</h2><table><tr><th>check</th><th>limit</th><th>actual</th><th></th></tr>${report.invariants.map(row).join('')}</table>
<h2>By request</h2><table><tr><th>request</th><th>count</th><th>per s</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>statuses</th></tr>
${Object.entries(report.summary)
  .map(
    ([op, s]) =>
      `<tr><td>${esc(op)}</td><td>${s.requests}</td><td>${s.perSecond}</td><td>${s.p50Ms}</td><td>${s.p95Ms}</td><td>${s.p99Ms}</td><td>${esc(JSON.stringify(s.statuses))}</td></tr>`,
  )
  .join('\n')}</table>
</body></html>
`;
}

/** Writes `<scenario>-<form>-<time>.json` and `.html` under `dir`; returns both paths. */
export function writeReport(report: ScenarioReport, dir: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const base = resolve(dir, `${report.scenario}-${report.form}-${report.startedAt.replace(/[:.]/g, '-')}`);
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2));
  writeFileSync(`${base}.html`, html(report));
  return { json: `${base}.json`, html: `${base}.html` };
}
