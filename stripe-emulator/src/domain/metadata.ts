import type { Metadata } from './objects.js';

/** A metadata parameter: `''` clears every key; a key set to `''` is removed. */
export type MetadataUpdate = '' | Record<string, string>;

export function applyMetadata(current: Metadata, update: MetadataUpdate | undefined): Metadata {
  if (update === undefined) return current;
  if (update === '') return {};
  const merged = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === '') delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
