import { CELL_FUNCTION_FOLDERS, writeFunctionMigration } from './functions';

// After `drizzle-kit generate` (the tables): a migration for the functions whose file changed, if any.
const tag = writeFunctionMigration();
console.log(
  tag
    ? `wrote drizzle/${tag}.sql from ${CELL_FUNCTION_FOLDERS.functions}`
    : 'the SQL functions match the migrations: nothing to write',
);
