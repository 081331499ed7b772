export * from './ledger';
export * from './messaging';
export * from './notifications';
