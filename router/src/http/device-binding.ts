import type { IncomingMessage } from 'node:http';
import { checkDpopProof, DPOP_HEADER, type DpopRefusal, RecentProofs, type RouterMetrics } from '@onsale/contracts';

/**
 * Proof that the client presenting a device-bound admission token holds its key (RFC 9449): checked here, before a
 * cell sees the request, and again by the cell. Replays are caught by a bounded memory of this process only (a first
 * line: another router process, or a flood that pushes a jti out, lets a replay through to the cell, whose Redis
 * refuses it).
 */
export function createProofOfPossession(metrics: RouterMetrics) {
  const recent = new RecentProofs();
  return (incoming: IncomingMessage, pathname: string, token: string, jkt: string): DpopRefusal | null => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const header = incoming.headers[DPOP_HEADER];
    const verdict = checkDpopProof(typeof header === 'string' ? header : undefined, {
      jkt,
      accessToken: token,
      method: incoming.method ?? '',
      path: pathname,
      host: incoming.headers.host,
      nowSeconds,
    });
    const outcome = !verdict.ok
      ? verdict.reason
      : recent.firstUse(`${jkt}:${verdict.jti}`, nowSeconds)
        ? null
        : 'dpop_replayed';
    metrics.dpopProof(outcome ?? 'accepted');
    return outcome;
  };
}
