import { z } from 'zod';

/** The control plane's own fact topic; reporting reads it beside every cell's purchase topic. */
export const CONTROL_PLANE_FACTS_TOPIC = 'control-plane.facts';

const Uuid = z.string().uuid();

/**
 * Facts the control plane publishes through its outbox, version 1. Buyers appear only as
 * counts: reporting needs the funnel, not who queued.
 */
export const controlPlaneFactPayloads = {
  QueueJoined: z.object({ tenantId: z.string(), eventId: Uuid }),
  BuyersAdmitted: z.object({ tenantId: z.string(), eventId: Uuid, count: z.number().int().positive() }),
  ReleaseDecided: z.object({
    tenantId: z.string(),
    eventId: Uuid,
    cellId: z.string(),
    oldRate: z.number(),
    newRate: z.number(),
    reason: z.string(),
  }),
} as const;
export type ControlPlaneFactType = keyof typeof controlPlaneFactPayloads;

export const ControlPlaneFact = z.object({
  eventId: Uuid,
  eventType: z.string(),
  schemaVersion: z.literal(1),
  /** The onsale event the fact is about; also the Kafka key. */
  aggregateId: Uuid,
  occurredAt: z.string(),
  source: z.literal('control-plane'),
  payload: z.unknown(),
});

export type TypedControlPlaneFact = {
  [T in ControlPlaneFactType]: Omit<z.infer<typeof ControlPlaneFact>, 'eventType' | 'payload'> & {
    eventType: T;
    payload: z.infer<(typeof controlPlaneFactPayloads)[T]>;
  };
}[ControlPlaneFactType];

export function parseControlPlaneFact(raw: unknown): TypedControlPlaneFact {
  const fact = ControlPlaneFact.parse(raw);
  const schema = controlPlaneFactPayloads[fact.eventType as ControlPlaneFactType];
  if (!schema) throw new Error(`unknown control-plane fact ${fact.eventType}`);
  return { ...fact, payload: schema.parse(fact.payload) } as TypedControlPlaneFact;
}
