export const consumerGroupId = (cellId: string, consumer: string) => `${cellId}.${consumer}`;
