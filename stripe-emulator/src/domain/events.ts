import { newId, unixNow } from './ids.js';
import type { EventType, RequestOrigin, StripeEvent, StripeObject } from './objects.js';
import { snapshot, type Store } from './store.js';

/** Receives every event; webhook delivery implements it. */
export interface EventSubscriber {
  /** How many endpoints will be sent this event type (the event's `pending_webhooks`). */
  subscriberCount(type: EventType): number;
  /** Must not deliver synchronously: events are emitted inside API requests. */
  publish(event: StripeEvent): void;
}

export class EventLog {
  constructor(
    private readonly store: Store,
    private readonly apiVersion: string,
    private readonly subscriber: EventSubscriber,
  ) {}

  /** Records an event carrying the object as it is now, and hands it to webhook delivery. */
  emit(type: EventType, object: StripeObject, origin: RequestOrigin | null): void {
    const event: StripeEvent = {
      id: newId('evt'),
      object: 'event',
      api_version: this.apiVersion,
      created: unixNow(),
      data: { object: snapshot(object) },
      livemode: false,
      pending_webhooks: this.subscriber.subscriberCount(type),
      request: {
        id: origin?.requestId ?? null,
        idempotency_key: origin?.idempotencyKey ?? null,
      },
      type,
    };
    this.store.events.set(event.id, event);
    this.subscriber.publish(event);
  }
}
