export * from './admission';
export * from './cells';
export * from './directory';
export * from './events';
export * from './onsales';
export * from './outbox';
export * from './release';
export * from './tenants';
