import { z } from 'zod';
import { PREWARM_ROLES } from '../db/schema/prewarm';

const count = z.number().int().min(0).max(10_000);
const RoleCapacitySchema = z
  .object({ min: count, max: count })
  .refine((c) => c.min <= c.max, { message: 'min must not exceed max', path: ['min'] });

/** A min and max per pre-warmed role: the process default, or one onsale's (a capacity plan's figures). */
const CapacityPlanSchema = z.object(
  Object.fromEntries(PREWARM_ROLES.map((r) => [r, RoleCapacitySchema])) as Record<
    (typeof PREWARM_ROLES)[number],
    typeof RoleCapacitySchema
  >,
);

/**
 * One ECS service's scalable target, as the stacks declare it (infra/cdktf, `ecsServiceResourceId`): the role it
 * serves in a pre-warm, the cell it belongs to (none for the control plane's router and API), its region, and the
 * min and max the stacks size it at, which the scale-in after an onsale gives back.
 */
const PrewarmTargetSchema = z.object({
  role: z.enum(PREWARM_ROLES),
  cell: z.string().min(1).optional(),
  region: z.string().min(1),
  resourceId: z.string().regex(/^service\/[^/]+\/[^/]+$/, 'must be service/<cluster>/<service>'),
  min: count,
  max: count,
});
export type PrewarmTarget = z.infer<typeof PrewarmTargetSchema>;

const json = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

const DEFAULT_CAPACITY = {
  router: { min: 12, max: 40 },
  waitingRoom: { min: 6, max: 10 },
  cellApi: { min: 12, max: 30 },
  cellWorkers: { min: 6, max: 12 },
};

export const PrewarmConfig = z.object({
  /**
   * The scalable targets a pre-warm schedules actions on (JSON, an array; the control plane stack writes it). Unset:
   * onsales still record their pre-warm, and nothing syncs it (a local platform without an AWS API).
   */
  PREWARM_TARGETS: json(z.array(PrewarmTargetSchema)).optional(),
  /** How long before the waiting room opens the services are raised (tasks take minutes to start and warm). */
  PREWARM_LEAD_SECONDS: z.coerce.number().int().min(0).default(1800),
  /** How long after the onsale starts they are given back to the stacks' sizing. */
  PREWARM_HOLD_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 3600),
  /** The capacity of an onsale scheduled without its own (JSON: each role's min and max). */
  PREWARM_DEFAULT_CAPACITY: json(CapacityPlanSchema).default(DEFAULT_CAPACITY),
  PREWARM_TICK_MS: z.coerce.number().int().positive().default(5000),
  PREWARM_RETRY_BASE_MS: z.coerce.number().int().positive().default(5000),
  PREWARM_RETRY_MAX_MS: z.coerce.number().int().positive().default(300_000),
});
