/** The consumer groups of a cell: each reads the cell's purchase topic for its own part of the saga. */
export const CELL_CONSUMERS = ['saga', 'tickets', 'payments'] as const;

export const consumerGroupId = (cellId: string, consumer: string) => `${cellId}.${consumer}`;
