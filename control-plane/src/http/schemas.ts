import { z } from '@hono/zod-openapi';
import {
  CELL_KAFKA_AUTH_MODES,
  EVENT_STATUSES,
  type EventRow,
  LOAD_STATUSES,
  PREWARM_ROLES,
  PREWARM_STATUSES,
} from '../db/schema';

export const EventIdParam = z.object({
  eventId: z
    .string()
    .uuid()
    .openapi({ param: { name: 'eventId', in: 'path' }, example: '0b9f6a52-8f5e-4f55-9d4c-1f3c8c1c2b11' }),
});
export const CellIdParam = z.object({
  cellId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'cellId', in: 'path' }, example: 'cell-1' }),
});

export const EventSchema = z
  .object({
    id: z.string().uuid(),
    tenantId: z.string().uuid(),
    name: z.string(),
    venue: z.string(),
    timeZone: z.string().openapi({ example: 'Europe/Paris' }),
    startsAt: z.string(),
    onsaleAt: z.string().nullable(),
    status: z.enum(['draft', 'scheduled', 'on_sale', 'paused', 'sold_out', 'ended']),
    cellId: z.string().nullable(),
    cellPinned: z.boolean(),
    directoryEpoch: z.number().int(),
    seatCount: z.number().int(),
    seatMapVersion: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Event');
export type EventDto = z.infer<typeof EventSchema>;

export const toEventDto = (e: EventRow): EventDto => ({
  id: e.id,
  tenantId: e.tenantId,
  name: e.name,
  venue: e.venue,
  timeZone: e.timeZone,
  startsAt: e.startsAt.toISOString(),
  onsaleAt: e.onsaleAt?.toISOString() ?? null,
  status: e.status,
  cellId: e.cellId,
  cellPinned: e.cellPinned,
  directoryEpoch: e.directoryEpoch,
  seatCount: e.seatCount,
  seatMapVersion: e.seatMapVersion,
  createdAt: e.createdAt.toISOString(),
  updatedAt: e.updatedAt.toISOString(),
});

export const CellSchema = z
  .object({
    id: z.string(),
    baseUrl: z.string(),
    region: z.string(),
    status: z.enum(['active', 'draining', 'down', 'evacuated']),
    capacity: z.number().int(),
    dedicatedEventId: z.string().nullable(),
    /** Null for a cell registered without them: cross-cell readers (reporting) skip it until it has them. */
    kafkaBrokers: z.string().nullable(),
    kafkaAuth: z.enum(CELL_KAFKA_AUTH_MODES),
    events: z.number().int().optional(),
    load: z.number().optional(),
  })
  .openapi('Cell');

export const toCellDto = (c: {
  id: string;
  baseUrl: string;
  region: string;
  status: 'active' | 'draining' | 'down' | 'evacuated';
  capacity: number;
  dedicatedEventId: string | null;
  kafkaBrokers: string | null;
  kafkaAuth: (typeof CELL_KAFKA_AUTH_MODES)[number];
  events?: number;
  load?: number;
}) => ({
  id: c.id,
  baseUrl: c.baseUrl,
  region: c.region,
  status: c.status,
  capacity: c.capacity,
  dedicatedEventId: c.dedicatedEventId,
  kafkaBrokers: c.kafkaBrokers,
  kafkaAuth: c.kafkaAuth,
  ...(c.events === undefined ? {} : { events: c.events, load: c.load }),
});

export const QueueStatusSchema = z
  .object({
    eventId: z.string(),
    status: z.enum(['waiting', 'released', 'expired', 'skipped', 'revoked', 'not_in_queue']),
    roomOpen: z.boolean(),
    position: z.number().int().nullable(),
    peopleAhead: z.number().int().nullable(),
    waiting: z.number().int().nullable(),
    releaseRate: z.number(),
    estimatedWaitSeconds: z.number().nullable(),
    soldOutForNow: z.boolean(),
    paused: z.boolean(),
    onsaleAt: z.string().nullable(),
    admission: z
      .object({
        token: z.string(),
        jti: z.string(),
        expiresAt: z.string(),
        purchaseCell: z.string(),
        directoryEpoch: z.number().int(),
      })
      .nullable(),
    pseudonym: z.string().nullable(),
    ticket: z
      .string()
      .nullable()
      .openapi({
        description:
          'While waiting: your queue ticket. Send it as the x-queue-ticket header of GET /events/{eventId}/queue/poll, ' +
          'which answers from it without a Redis call; opaque (qt1.<claims>.<MAC>, claims as contracts QueueTicketClaims). ' +
          'Replace it with each new one you are given.',
      }),
    message: z.string(),
    joined: z.boolean().optional(),
  })
  .openapi('QueueStatus');

export const TicketPollSchema = z
  .object({
    eventId: z.string(),
    status: z.enum(['waiting', 'your_turn', 'ended']).openapi({
      description:
        'your_turn: call GET /events/{eventId}/queue/me now to collect your admission token (once; later calls return the same token)',
    }),
    roomOpen: z.boolean(),
    position: z.number().int().nullable(),
    peopleAhead: z.number().int().nullable(),
    releaseRate: z.number(),
    estimatedWaitSeconds: z.number().nullable(),
    soldOutForNow: z.boolean(),
    paused: z.boolean(),
    refreshTicket: z.boolean().openapi({
      description:
        'The ticket cannot place you any more (issued before the room opened, or the room was rebuilt): call GET queue/me once for a new one',
    }),
    markAgeMs: z.number().int().openapi({
      description: 'How old the room state this answer came from is: a turn is announced at most this late',
    }),
    message: z.string(),
  })
  .openapi('QueueTicketPoll');

export const DecisionSchema = z
  .object({
    id: z.number(),
    at: z.string(),
    cellId: z.string().nullable(),
    mode: z.string(),
    oldRate: z.number(),
    newRate: z.number(),
    reason: z.string(),
    actor: z.string(),
    signals: z.unknown().openapi({
      description:
        "The cell's health figures the controller decided on, with availableSeats of this event only; " +
        '{unavailable: true} when the cell could not be read; null for a change made by hand',
    }),
  })
  .openapi('ReleaseDecision');

/** What pause, resume and cancel answer. */
export const OnsaleControlSchema = z
  .object({
    eventId: z.string(),
    /** The event's status after the change: paused, on_sale, ended (a started onsale cancelled) or draft (one cancelled before it started). */
    status: z.enum(EVENT_STATUSES),
    /** What a started onsale's cancellation ended in its cell; null otherwise. */
    canceled: z
      .object({
        holdsReleased: z.number().int(),
        refundsRequested: z.number().int(),
        ticketsVoided: z.number().int(),
        pendingCapture: z.number().int(),
      })
      .nullable(),
  })
  .openapi('OnsaleControl');

export const OnsaleSchema = z
  .object({
    eventId: z.string(),
    roomOpensAt: z.string(),
    onsaleAt: z.string(),
    perBuyerLimit: z.number().int(),
    maxReleaseRate: z.number().int(),
    minReleaseRate: z.number().int(),
    maxActiveShoppers: z.number().int().nullable(),
    holdTtlSeconds: z.number().int(),
    ready: z.boolean(),
    load: z.object({
      status: z.enum(LOAD_STATUSES),
      attempts: z.number().int(),
      lastError: z.string().nullable(),
      lastAttemptAt: z.string().nullable(),
      nextAttemptAt: z.string().nullable(),
      loadedAt: z.string().nullable(),
      cellId: z.string().nullable(),
      directoryEpoch: z.number().int().nullable(),
    }),
    roomOpenedAt: z.string().nullable(),
    startedAt: z.string().nullable(),
    release: z.object({ mode: z.string(), rate: z.number(), pinnedRate: z.number().nullable() }),
    prewarm: z
      .object({
        status: z.enum(PREWARM_STATUSES),
        cellId: z.string(),
        scaleOutAt: z.string(),
        scaleInAt: z.string(),
        capacity: z.record(z.enum(PREWARM_ROLES), z.object({ min: z.number().int(), max: z.number().int() })),
        attempts: z.number().int(),
        lastError: z.string().nullable(),
        syncedAt: z.string().nullable(),
      })
      .nullable(),
    room: z.object({
      open: z.boolean(),
      releasing: z.boolean(),
      paused: z.boolean(),
      soldOutForNow: z.boolean(),
      rate: z.number(),
      waiting: z.number().int(),
      activeShoppers: z.number().int(),
      released: z.number().int(),
      skipped: z.number().int(),
      availableSeats: z.number().int().nullable(),
    }),
  })
  .openapi('Onsale');

/** What a join may bring to the onsale's door (waiting-room/door.ts). */
export const JoinQueueSchema = z
  .object({
    pow: z
      .object({
        challenge: z.string().min(1).max(1024),
        counter: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      })
      .strict()
      .optional()
      .openapi({ description: 'A challenge from POST queue/challenge and a counter solving it' }),
    jkt: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'an RFC 7638 SHA-256 thumbprint, base64url (43 characters)')
      .optional()
      .openapi({ description: 'Thumbprint of the device key (ES256) that signs the DPoP proof of every hold' }),
  })
  .strict()
  .openapi('JoinQueue');

export const PowChallengeSchema = z
  .object({
    scheme: z.literal('onsale-pow/1'),
    required: z.boolean().openapi({ description: 'false: this onsale asks for no proof (difficulty 0)' }),
    challenge: z.string(),
    difficulty: z.number().int().openapi({
      description: 'Find a counter such that SHA-256(challenge + ":" + counter) starts with this many zero bits',
    }),
    expiresAt: z.string(),
  })
  .openapi('PowChallenge');

export const DoorSchema = z
  .object({
    powDifficulty: z.number().int().min(0).max(32),
    powAdaptiveAbovePerSecond: z.number().int().min(1).max(10_000_000).nullable().default(null).openapi({
      description:
        'Challenges issued per second at which the difficulty gains a bit, and another per doubling; null: fixed',
    }),
    powMaxDifficulty: z.number().int().min(0).max(32).default(24),
    requireDeviceBinding: z.boolean().default(false),
  })
  .strict()
  .refine((d) => d.powMaxDifficulty >= d.powDifficulty, {
    path: ['powMaxDifficulty'],
    message: 'must be at least powDifficulty',
  })
  .openapi('Door');
