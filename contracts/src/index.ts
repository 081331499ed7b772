export * from './admission';
export * from './cell-signals';
export * from './errors';
export * from './events';
export * from './holds';
export * from './runtime/env';
export * from './runtime/log';
export * from './topics';
