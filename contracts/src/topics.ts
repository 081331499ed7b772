/** Each cell owns its topics; names carry the cell id so cells never share a partition. */
export function cellTopics(cellId: string) {
  return {
    purchase: `cell.${cellId}.purchase`,
    retryShort: `cell.${cellId}.purchase.retry.short`,
    retryLong: `cell.${cellId}.purchase.retry.long`,
    deadLetter: `cell.${cellId}.purchase.dlq`,
  } as const;
}
export type CellTopics = ReturnType<typeof cellTopics>;
