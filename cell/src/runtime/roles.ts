import {
  CellExpiryConfig,
  CellNotificationsConfig,
  CellPaymentsConfig,
  CellReconcilerConfig,
  CellRelayConfig,
  CellSagaConfig,
  CellTicketConfig,
} from '../config';

/**
 * The worker roles of a cell: the process name each logs and labels its metrics with, its entry
 * point, the schema it parses its environment with, and for the consumers the name of their group
 * and inbox. Read by the main files, the stacks (processes/src/index.ts), the local launcher
 * and the test support, so a role is named once. How each one starts is its folder's `role.ts`.
 */
export const CELL_ROLES = {
  relay: { process: 'outbox-relay', entry: 'cell/src/relay/main.ts', config: CellRelayConfig },
  saga: { process: 'saga', entry: 'cell/src/saga/main.ts', config: CellSagaConfig, consumer: 'saga' },
  payments: {
    process: 'payments',
    entry: 'cell/src/payments/main.ts',
    config: CellPaymentsConfig,
    consumer: 'payments',
  },
  tickets: {
    process: 'ticket-issuer',
    entry: 'cell/src/tickets/main.ts',
    config: CellTicketConfig,
    consumer: 'tickets',
  },
  expiry: { process: 'expiry', entry: 'cell/src/expiry/main.ts', config: CellExpiryConfig },
  reconciler: { process: 'reconciler', entry: 'cell/src/reconciler/main.ts', config: CellReconcilerConfig },
  notifications: {
    process: 'notifier',
    entry: 'cell/src/notifications/main.ts',
    config: CellNotificationsConfig,
    consumer: 'notifications',
  },
} as const;

export type CellRoleName = keyof typeof CELL_ROLES;
export type CellRole = (typeof CELL_ROLES)[CellRoleName];
export const CELL_ROLE_NAMES = Object.keys(CELL_ROLES) as CellRoleName[];

/** The consumer groups of a cell: each reads the cell's purchase topic for its own part; each one's lag is a metric. */
export const CELL_CONSUMERS = [
  CELL_ROLES.saga.consumer,
  CELL_ROLES.tickets.consumer,
  CELL_ROLES.payments.consumer,
  CELL_ROLES.notifications.consumer,
];

/**
 * The consumers a sale waits on: their lag is the signal the release controller slows admission on. Not the
 * notifier's: mail running late is no reason to sell slower.
 */
export const SALE_PATH_CONSUMERS = [
  CELL_ROLES.saga.consumer,
  CELL_ROLES.tickets.consumer,
  CELL_ROLES.payments.consumer,
];
