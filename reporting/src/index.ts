export { migrateReporting } from './db/migrate';
export * from './queries';
