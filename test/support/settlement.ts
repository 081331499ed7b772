/**
 * A settlement export (GET /events/{id}/sales/settlement.csv) as the tests read it: the places column (the last) of
 * an order's line, and the TOTAL line.
 */
export function settlementPlaces(csv: string) {
  const lines = csv.trim().split('\n');
  return {
    places: (orderId: string) =>
      lines
        .find((l) => l.startsWith(orderId))
        ?.split(',')
        .at(-1),
    total: lines.at(-1),
  };
}
