import type { Server } from 'node:http';

/**
 * Seconds the load balancer in front of every HTTP service (an internal ALB, infra's internal-alb.ts) keeps an
 * idle connection to a task open. The stacks set it from here.
 */
export const LOAD_BALANCER_IDLE_SECONDS = 60;

/**
 * A server behind that load balancer keeps idle keep-alive connections open for longer than the load balancer
 * does, so the load balancer is always the side that closes them (as AWS asks of an ALB's targets). With Node's
 * default of 5 s the server closes connections the load balancer still holds as open, and a request it sends on
 * one as the server closes it is answered 502: a buyer's hold fails for no fault of the platform.
 */
export function keepAliveBehindLoadBalancer<S extends Server>(server: S): S {
  server.keepAliveTimeout = (LOAD_BALANCER_IDLE_SECONDS + 5) * 1000;
  return server;
}
