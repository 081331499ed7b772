import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { timestamps, tstz } from './columns';
import { events } from './events';

/**
 * A presale of an onsale (presale/presale.ts): buyers register in [registrationOpensAt, registrationClosesAt), a
 * lottery seeded by `lotterySeed` (its SHA-256 published from the opening of registration) invites `invitations`
 * of them and ranks `waitlistSize` more, and during [presaleStartsAt, presaleEndsAt) the waiting room takes only
 * buyers holding a valid access code for their own account.
 */
export const presales = pgTable(
  'presales',
  {
    eventId: uuid('event_id')
      .primaryKey()
      .references(() => events.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull(),
    registrationOpensAt: tstz('registration_opens_at').notNull(),
    registrationClosesAt: tstz('registration_closes_at').notNull(),
    presaleStartsAt: tstz('presale_starts_at').notNull(),
    presaleEndsAt: tstz('presale_ends_at').notNull(),
    invitations: integer('invitations').notNull(),
    waitlistSize: integer('waitlist_size').notNull().default(0),
    /** How long an invitation stays open once the presale has started (or from its offer, if later). */
    invitationTtlSeconds: integer('invitation_ttl_seconds').notNull(),
    /** hex of 32 random bytes, drawn when registration is first opened and never changed; published after the draw. */
    lotterySeed: text('lottery_seed').notNull(),
    drawnAt: tstz('drawn_at'),
    openedBy: text('opened_by').notNull(),
    ...timestamps,
  },
  (t) => [
    check(
      'presales_windows_check',
      sql`${t.registrationOpensAt} < ${t.registrationClosesAt}
      and ${t.registrationClosesAt} <= ${t.presaleStartsAt} and ${t.presaleStartsAt} < ${t.presaleEndsAt}`,
    ),
    check('presales_sizes_check', sql`${t.invitations} > 0 and ${t.waitlistSize} >= 0`),
  ],
);
export type Presale = InferSelectModel<typeof presales>;

export const REGISTRATION_OUTCOMES = ['pending', 'invited', 'waitlisted', 'not_selected'] as const;
export type RegistrationOutcome = (typeof REGISTRATION_OUTCOMES)[number];

/** One per buyer account and presale (the unique index refuses a second). */
export const presaleRegistrations = pgTable(
  'presale_registrations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => presales.eventId, { onDelete: 'cascade' }),
    buyerSub: text('buyer_sub').notNull(),
    ip: text('ip').notNull(),
    deviceId: text('device_id').notNull(),
    registeredAt: tstz('registered_at').notNull(),
    /** 1-based place in the lottery's order (every registration gets one at the draw). */
    drawRank: integer('draw_rank'),
    outcome: text('outcome', { enum: REGISTRATION_OUTCOMES }).notNull().default('pending'),
  },
  (t) => [
    uniqueIndex('presale_registrations_buyer_idx').on(t.eventId, t.buyerSub),
    index('presale_registrations_waitlist_idx').on(t.eventId, t.drawRank).where(sql`outcome = 'waitlisted'`),
  ],
);
export type PresaleRegistration = InferSelectModel<typeof presaleRegistrations>;

/**
 * Accounts registered per client IP and per device for a presale, and the registrations refused for going over the
 * limit: the counter a registration raises with a conditional UPDATE (so concurrent ones cannot pass the limit
 * together), and what the promoter sees.
 */
export const presaleSources = pgTable(
  'presale_sources',
  {
    eventId: uuid('event_id')
      .notNull()
      .references(() => presales.eventId, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['ip', 'device'] }).notNull(),
    value: text('value').notNull(),
    accounts: integer('accounts').notNull().default(0),
    refused: integer('refused').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.eventId, t.kind, t.value] })],
);

export const INVITATION_STATUSES = ['offered', 'used', 'declined', 'lapsed'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/**
 * An access code bound to one account for one presale. `offered` until the buyer joins the waiting room with it
 * (`used`), declines it, or lets `expiresAt` pass (`lapsed`, by the worker's presale step); a declined or lapsed
 * invitation passes its place to the next buyer on the waitlist.
 */
export const presaleInvitations = pgTable(
  'presale_invitations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => presales.eventId, { onDelete: 'cascade' }),
    buyerSub: text('buyer_sub').notNull(),
    accessCode: text('access_code').notNull(),
    status: text('status', { enum: INVITATION_STATUSES }).notNull().default('offered'),
    /** The waitlist place this invitation was offered from (null: invited by the draw itself). */
    fromWaitlistRank: integer('from_waitlist_rank'),
    offeredAt: tstz('offered_at').notNull(),
    expiresAt: tstz('expires_at').notNull(),
    usedAt: tstz('used_at'),
    closedAt: tstz('closed_at'),
  },
  (t) => [
    uniqueIndex('presale_invitations_buyer_idx').on(t.eventId, t.buyerSub),
    uniqueIndex('presale_invitations_code_idx').on(t.accessCode),
    index('presale_invitations_due_idx').on(t.expiresAt).where(sql`status = 'offered'`),
  ],
);
export type PresaleInvitation = InferSelectModel<typeof presaleInvitations>;
