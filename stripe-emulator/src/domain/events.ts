import { resourceMissing } from './errors.js';
import { newId, unixNow } from './ids.js';
import type { EventType, ListPage, RequestOrigin, StripeEvent, StripeObject } from './objects.js';
import { type ListParams, listPage, matchesRange, type RangeFilter } from './pagination.js';
import { type Store, snapshot } from './store.js';

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

  retrieve(id: string): StripeEvent {
    const event = this.store.events.get(id);
    if (!event) throw resourceMissing('event', id, 'id');
    return snapshot(event);
  }

  /** Stripe's events API, which reconciliation can use to find events a webhook missed. */
  list(params: ListEventsParams): ListPage<StripeEvent> {
    const matching = [...this.store.events.values()]
      .reverse()
      .filter(
        (event) =>
          (params.type === undefined || matchesType(event.type, params.type)) &&
          matchesRange(event.created, params.created),
      );
    const page = listPage(matching, params, '/v1/events', 'event');
    return { ...page, data: page.data.map(snapshot) };
  }
}

export interface ListEventsParams extends ListParams {
  /** An event type, or a prefix pattern such as `payment_intent.*`. */
  type?: string | undefined;
  created?: number | RangeFilter | undefined;
}

function matchesType(type: EventType, pattern: string): boolean {
  return pattern.endsWith('.*') ? type.startsWith(pattern.slice(0, -1)) : type === pattern;
}
