export * from './queries';
export { migrateReporting } from './store';
