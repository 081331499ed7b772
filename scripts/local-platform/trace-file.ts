import { appendFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';

/** One span as the file holds it: a JSON line, with the service (the process) that recorded it. */
export interface TraceFileSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number; message?: string };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: (Omit<TraceFileSpan, 'service' | 'attributes'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}

const plainValue = (v: OtlpValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? '';
const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, plainValue(a.value)]));

/**
 * The local platform's trace collector: an OTLP/HTTP receiver (JSON, as every process's exporter sends it, see
 * contracts/src/runtime/tracing.ts) that appends each span to `file` as one JSON line. What the collector beside
 * each task does on AWS (to X-Ray), without a collector binary to install: `grep <traceId>` shows one purchase.
 */
export async function startTraceFile(file: string, port = 0): Promise<{ endpoint: string; close(): Promise<void> }> {
  mkdirSync(dirname(file), { recursive: true });
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') return res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: OtlpExport;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      } catch {
        return res.writeHead(400, { 'content-type': 'application/json' }).end('{"code":"not_otlp_json"}');
      }
      const lines: string[] = [];
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? 'unknown');
        for (const ss of rs.scopeSpans ?? [])
          for (const span of ss.spans ?? [])
            lines.push(JSON.stringify({ ...span, service, attributes: attributesOf(span.attributes) }));
      }
      if (lines.length) appendFileSync(file, `${lines.join('\n')}\n`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
