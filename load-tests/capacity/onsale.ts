import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';

/**
 * An onsale as the platform team describes it before it is scheduled: who comes, when, how often they poll, what is
 * for sale and how buyers behave once admitted. The capacity model (model.ts) turns it into a plan.
 */
const Share = z.number().min(0).max(1);

export const OnsaleEvent = z
  .object({
    id: z.string().min(1),
    seats: z.number().int().positive(),
    /** How long a hold keeps its seats before they return to sale (the cell's hold TTL). */
    holdTtlSeconds: z.number().positive(),
    /** Seats per order, on average (the seeds: 2.4). */
    seatsPerOrder: z.number().min(1).default(2.4),
    /** This event's share of the buyers who come; when no event gives one, shares follow the seats. */
    demandShare: Share.optional(),
  })
  .strict();

export const Onsale = z
  .object({
    name: z.string().min(1),
    registeredBuyers: z.number().int().positive(),
    /** The share of registered buyers who actually come on the day. */
    turnout: Share.default(1),
    /**
     * When they come: consecutive windows from the doors' opening, each with the share of the comers who arrive in it
     * (evenly within it). The shares add up to 1.
     */
    arrival: z
      .array(z.object({ seconds: z.number().positive(), share: Share }).strict())
      .min(1)
      .refine((w) => Math.abs(w.reduce((a, x) => a + x.share, 0) - 1) < 1e-6, 'the shares must add up to 1'),
    /** How often a queued buyer's page asks for its place. */
    pollIntervalSeconds: z.number().positive(),
    events: z.array(OnsaleEvent).min(1),
    /** Of the buyers admitted, the share who end up paying for an order. */
    conversion: Share,
    /** Of the buyers admitted, the share who take a hold and leave it to expire (its seats come back after the TTL). */
    abandonment: Share,
    /** Hold requests per admitted buyer who tries (a 409 on a seat someone else took is retried with another). */
    holdAttemptsPerBuyer: z.number().min(1).default(1.3),
    /** From the hold to the paid order, for a buyer who pays. */
    paymentSeconds: z.number().positive(),
    /** The sell-out the release rate aims at: each event's R is set to sell its seats in about this long. */
    targetSellOutSeconds: z.number().positive().default(900),
    /** Where the cells go (the manifest's region for each new cell). */
    region: z.string().default('us-east-2'),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.conversion + o.abandonment > 1)
      ctx.addIssue({ code: 'custom', path: ['abandonment'], message: 'conversion + abandonment must not exceed 1' });
    const given = o.events.filter((e) => e.demandShare !== undefined);
    if (given.length > 0 && given.length < o.events.length)
      ctx.addIssue({ code: 'custom', path: ['events'], message: 'give demandShare for every event or for none' });
    if (given.length === o.events.length && Math.abs(given.reduce((a, e) => a + e.demandShare!, 0) - 1) > 1e-6)
      ctx.addIssue({ code: 'custom', path: ['events'], message: 'the demand shares must add up to 1' });
    const ids = new Set<string>();
    o.events.forEach((e, i) => {
      if (ids.has(e.id))
        ctx.addIssue({ code: 'custom', path: ['events', i, 'id'], message: `duplicate event id ${e.id}` });
      ids.add(e.id);
    });
  });

export type Onsale = z.output<typeof Onsale>;
export type OnsaleInput = z.input<typeof Onsale>;
export type OnsaleEvent = z.output<typeof OnsaleEvent>;

export const EXAMPLES_DIR = resolve(import.meta.dirname, 'examples');

export function loadOnsale(file: string): Onsale {
  const parsed = Onsale.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(onsale)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}
