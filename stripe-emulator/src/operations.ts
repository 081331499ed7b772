/** The API operations the emulator serves; fault injection and latency target them by name. */
export const OPERATIONS = [
  'payment_intents.create',
  'payment_intents.retrieve',
  'payment_intents.update',
  'payment_intents.confirm',
  'payment_intents.capture',
  'payment_intents.cancel',
  'payment_intents.list',
  'payment_intents.search',
  'refunds.create',
  'refunds.retrieve',
  'refunds.update',
  'refunds.list',
  'charges.retrieve',
  'charges.list',
  'events.retrieve',
  'events.list',
] as const;

export type OperationName = (typeof OPERATIONS)[number];
