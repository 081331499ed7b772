import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';

/**
 * Traces, one module for every process. A purchase is one trace: the router's request, the
 * cell's route and its transaction, the outbox row (its envelope carries the W3C
 * `traceparent`), the relay's publication, each consumer's handling, the Stripe calls and the
 * webhook that continues the saga.
 *
 * Nothing is recorded unless an exporter exists: OTLP over HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, or one a test hands in. Otherwise no provider
 * is registered and every call below is the API's no-op.
 */
export { SpanKind } from '@opentelemetry/api';
/** For tests: spans kept in memory, handed to initTracing({ exporter }). */
export { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

const TRACER = 'onsale';
let provider: NodeTracerProvider | undefined;

export interface TracingOptions {
  /** service.name: the process role (cell-api, relay, saga, payments, router, ...). */
  service: string;
  cellId?: string;
  /** An exporter of one's own (tests: InMemorySpanExporter), exported synchronously on span end. */
  exporter?: SpanExporter;
  env?: NodeJS.ProcessEnv;
}

/** Starts tracing for this process if an exporter is configured; returns whether it did. */
export function initTracing(options: TracingOptions): boolean {
  if (provider) return true;
  const env = options.env ?? process.env;
  const processors: SpanProcessor[] = [];
  if (options.exporter) processors.push(new SimpleSpanProcessor(options.exporter));
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
  if (!processors.length) return false;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME ?? options.service,
      ...(options.cellId ? { 'onsale.cell': options.cellId } : {}),
    }),
    spanProcessors: processors,
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return true;
}

/** Flushes and stops the exporter (SIGTERM); a no-op without tracing. */
export async function shutdownTracing(): Promise<void> {
  const p = provider;
  provider = undefined;
  if (!p) return;
  await p.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

export const tracingEnabled = () => provider !== undefined;
export const tracer = () => trace.getTracer(TRACER);

/** The W3C traceparent of the active span, to put in an envelope or a request; undefined without tracing. */
export function currentTraceparent(ctx: Context = context.active()): string | undefined {
  if (!provider) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** The context a traceparent (from an envelope or a header) names; the root context when absent. */
export function contextFrom(traceparent: string | null | undefined): Context {
  if (!traceparent || !provider) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** The ids of the active span, for log lines; undefined when nothing is traced. */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & 1 ? { traceId, spanId } : undefined;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** A traceparent to parent the span on (an envelope's); otherwise the active span. */
  parent?: string | null;
  /** Only as a child of an active span: a polling loop's own transactions start no trace. */
  childOnly?: boolean;
}

/**
 * Runs `work` inside a span that ends when it settles; a thrown error marks it failed. Without
 * tracing it only calls `work` (one comparison of overhead).
 */
export async function withSpan<T>(name: string, options: SpanOptions, work: (span?: Span) => Promise<T>): Promise<T> {
  if (!provider || (options.childOnly && !trace.getActiveSpan())) return work();
  const parent = options.parent !== undefined ? contextFrom(options.parent) : context.active();
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    parent,
    async (span) => {
      try {
        return await work(span);
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * The server span of an HTTP request, parented by an incoming `traceparent` header, named by
 * the route pattern once it is known. Put it first, so the request id and logs see the span.
 */
export function httpTracing(): MiddlewareHandler {
  return async (c, next) => {
    if (!provider) return next();
    const parent = contextFrom(c.req.header('traceparent'));
    await tracer().startActiveSpan(
      `${c.req.method} ${c.req.path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method } },
      parent,
      async (span) => {
        try {
          await next();
        } finally {
          const matched = routePath(c, -1);
          const route = !matched || matched === '/*' || matched === '*' ? 'unmatched' : matched;
          span.updateName(`${c.req.method} ${route}`);
          span.setAttributes({ 'http.route': route, 'http.response.status_code': c.res.status });
          if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
    );
  };
}

/**
 * A span started now and ended by the caller, parented by a traceparent (an outbox row's), with
 * its own traceparent to pass on: the relay publishes a batch, one span per row. Undefined
 * without tracing or without a parent.
 */
export function startSpanFrom(
  name: string,
  parent: string | null | undefined,
  options: { kind?: SpanKind; attributes?: Attributes } = {},
): { traceparent: string | undefined; end(err?: unknown): void } | undefined {
  if (!provider || !parent) return undefined;
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, contextFrom(parent));
  return {
    traceparent: currentTraceparent(trace.setSpan(ROOT_CONTEXT, span)),
    end(err) {
      if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      span.end();
    },
  };
}
