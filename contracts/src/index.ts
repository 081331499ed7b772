export * from './admission';
export * from './errors';
export * from './events';
export * from './holds';
export * from './topics';
export * from './cell-signals';
export * from './runtime/env';
export * from './runtime/log';
