/** A positive whole number from the environment (the fallback when unset); anything else fails, naming the variable. */
export function positiveIntegerFromEnv(name: string, fallback: number): number {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}
