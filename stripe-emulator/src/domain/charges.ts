import { resourceMissing } from './errors.js';
import type { Charge, ListPage } from './objects.js';
import { type ListParams, listPage } from './pagination.js';
import { type Store, snapshot } from './store.js';

export interface ListChargesParams extends ListParams {
  payment_intent?: string | undefined;
}

/** Read access to charges; they are created and changed only through their PaymentIntent. */
export class Charges {
  constructor(private readonly store: Store) {}

  retrieve(id: string): Charge {
    const charge = this.store.charges.get(id);
    if (!charge) throw resourceMissing('charge', id, 'id');
    return snapshot(charge);
  }

  list(params: ListChargesParams): ListPage<Charge> {
    const matching = [...this.store.charges.values()]
      .reverse()
      .filter((charge) => params.payment_intent === undefined || charge.payment_intent === params.payment_intent);
    const page = listPage(matching, params, '/v1/charges', 'charge');
    return { ...page, data: page.data.map(snapshot) };
  }
}
