import { newId, newWebhookSecret } from '../domain/ids.js';
import type { EventType } from '../domain/objects.js';

export interface WebhookEndpoint {
  id: string;
  url: string;
  secret: string;
  /** A rolled secret still in its overlap: every delivery is also signed with it, as Stripe does after a roll. */
  previousSecret: string | null;
  /** Event types sent to this endpoint; `['*']` sends all of them. */
  enabledEvents: string[];
}

export interface WebhookEndpointInput {
  url: string;
  /** Generated (`whsec_...`) when omitted. */
  secret?: string | undefined;
  previousSecret?: string | undefined;
  enabledEvents?: string[] | undefined;
}

export class WebhookEndpoints {
  readonly #endpoints = new Map<string, WebhookEndpoint>();

  add(input: WebhookEndpointInput): WebhookEndpoint {
    const endpoint: WebhookEndpoint = {
      id: newId('we'),
      url: input.url,
      secret: input.secret ?? newWebhookSecret(),
      previousSecret: input.previousSecret ?? null,
      enabledEvents: input.enabledEvents ?? ['*'],
    };
    this.#endpoints.set(endpoint.id, endpoint);
    return endpoint;
  }

  remove(id: string): boolean {
    return this.#endpoints.delete(id);
  }

  list(): WebhookEndpoint[] {
    return [...this.#endpoints.values()];
  }

  subscribedTo(type: EventType): WebhookEndpoint[] {
    return this.list().filter(
      (endpoint) => endpoint.enabledEvents.includes('*') || endpoint.enabledEvents.includes(type),
    );
  }
}
