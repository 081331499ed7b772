import { z } from '@hono/zod-openapi';
import { INVITATION_STATUSES } from '../db/schema';

const iso = z.string().openapi({ format: 'date-time' });

/** The presale's settings and its lottery's commitment, as promoters and buyers see them. */
const PresaleSettings = {
  eventId: z.string(),
  registrationOpensAt: iso,
  registrationClosesAt: iso,
  presaleStartsAt: iso,
  presaleEndsAt: iso,
  invitations: z.number().int(),
  waitlistSize: z.number().int(),
  invitationTtlSeconds: z.number().int(),
  lotteryCommitment: z.string().openapi({ description: "SHA-256 (hex) of the lottery's seed, published from opening" }),
  drawnAt: iso.nullable(),
};

export const PresaleSchema = z
  .object({
    ...PresaleSettings,
    limits: z.object({ accountsPerIp: z.number().int(), accountsPerDevice: z.number().int() }),
    counts: z.object({
      registrations: z.number().int(),
      invited: z.number().int(),
      waitlisted: z.number().int(),
      notSelected: z.number().int(),
      refusedDuplicate: z.number().int(),
      refusedOverIpLimit: z.number().int(),
      refusedOverDeviceLimit: z.number().int(),
    }),
    conversion: z.object({
      offered: z.number().int(),
      open: z.number().int(),
      used: z.number().int().openapi({ description: 'Invitations whose buyer joined the waiting room with the code' }),
      declined: z.number().int(),
      lapsed: z.number().int(),
      rate: z.number(),
    }),
    sources: z.array(
      z.object({
        kind: z.enum(['ip', 'device']),
        value: z.string(),
        accounts: z.number().int(),
        refused: z.number().int(),
      }),
    ),
    registrations: z.array(
      z.object({
        buyer: z.string(),
        ip: z.string(),
        deviceId: z.string(),
        registeredAt: iso,
        drawRank: z.number().int().nullable(),
        outcome: z.string(),
        accountsFromIp: z.number().int(),
        accountsFromDevice: z.number().int(),
      }),
    ),
    invitations: z.array(
      z.object({
        buyer: z.string(),
        status: z.enum(INVITATION_STATUSES),
        fromWaitlistRank: z.number().int().nullable(),
        offeredAt: iso,
        expiresAt: iso,
        usedAt: iso.nullable(),
      }),
    ),
  })
  .openapi('Presale');

export const PresaleOutcomeSchema = z
  .object({
    eventId: z.string(),
    registrationOpensAt: iso,
    registrationClosesAt: iso,
    presaleStartsAt: iso,
    presaleEndsAt: iso,
    drawn: z.boolean(),
    registered: z.boolean(),
    registeredAt: iso.nullable(),
    pseudonym: z.string().nullable().openapi({ description: 'Your name in the published lottery log' }),
    outcome: z.enum(['not_registered', 'registered', 'invited', 'waitlisted', 'not_selected']),
    drawRank: z.number().int().nullable(),
    waitlistAhead: z.number().int().nullable().openapi({ description: 'Waitlisted buyers before you, now' }),
    invitation: z
      .object({
        accessCode: z.string().openapi({ description: 'Send as X-Presale-Code when joining the queue' }),
        status: z.enum(INVITATION_STATUSES),
        validFrom: iso,
        expiresAt: iso,
        usedAt: iso.nullable(),
      })
      .nullable(),
  })
  .openapi('PresaleOutcome');
