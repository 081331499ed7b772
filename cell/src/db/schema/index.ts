export * from './ledger';
export * from './messaging';
