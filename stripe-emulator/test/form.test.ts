import { describe, expect, it } from 'vitest';
import { StripeApiError } from '../src/domain/errors.js';
import { parseForm } from '../src/http/form.js';

describe("Stripe's form encoding", () => {
  it('decodes bracketed keys into nested objects and lists', () => {
    expect(
      parseForm(
        'amount=5000&metadata[orderId]=ord%5B1%5D&expand[]=latest_charge&expand[]=payment_method&created[gte]=1',
      ),
    ).toEqual({
      amount: '5000',
      metadata: { orderId: 'ord[1]' },
      expand: ['latest_charge', 'payment_method'],
      created: { gte: '1' },
    });
  });

  it("keeps indexed keys (the SDK's expand[0]=...) as object keys for list parameters to read", () => {
    expect(parseForm('expand%5B0%5D=latest_charge&metadata[0]=zero')).toEqual({
      expand: { '0': 'latest_charge' },
      metadata: { '0': 'zero' },
    });
  });

  it('rejects a key used both as a value and as an object', () => {
    expect(() => parseForm('metadata=x&metadata[orderId]=1')).toThrow(StripeApiError);
  });
});
