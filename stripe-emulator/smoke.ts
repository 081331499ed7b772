import Stripe from 'stripe';
import { createEmulator } from './src/index.js';
const em = await createEmulator({ processingDelayMs: 50 });
const stripe = new Stripe('sk_test_123', { host: '127.0.0.1', port: em.port, protocol: 'http', maxNetworkRetries: 0 });
const pi = await stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual', metadata: { orderId: 'o1' }, payment_method: 'pm_card_visa', confirm: true, expand: ['latest_charge'] });
console.log(pi.status, pi.amount_capturable, typeof pi.latest_charge, pi.id, pi.client_secret.slice(0, 40));
const cap = await stripe.paymentIntents.capture(pi.id);
console.log(cap.status, cap.amount_received);
try { await stripe.paymentIntents.capture(pi.id); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.code, e.message); }
try { await stripe.paymentIntents.create({ amount: 5000, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true }); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.code, e.decline_code, e.payment_intent?.status); }
try { await stripe.paymentIntents.create({ amount: 'x' as any, currency: 'usd' }); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.code, e.param, e.message); }
try { await stripe.paymentIntents.create({ currency: 'usd' } as any); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.code, e.param, e.message); }
try { await stripe.paymentIntents.create({ amount: 100, currency: 'usd', foo: 1 } as any); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.code, e.param, e.message); }
try { await stripe.paymentIntents.create({ amount: 100, currency: 'usd', metadata: { a: { b: 1 } } } as any); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.code, e.param, e.message); }
const r1 = await stripe.paymentIntents.create({ amount: 100, currency: 'usd' }, { idempotencyKey: 'k1' });
const r2 = await stripe.paymentIntents.create({ amount: 100, currency: 'usd' }, { idempotencyKey: 'k1' });
console.log(r1.id === r2.id, (r2 as any).lastResponse.headers['idempotent-replayed'], r2.lastResponse.requestId);
try { await stripe.paymentIntents.create({ amount: 200, currency: 'usd' }, { idempotencyKey: 'k1' }); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.type, e.message); }
const s = await stripe.paymentIntents.search({ query: "metadata['orderId']:'o1'" });
console.log(s.object, s.data.length, s.data[0]?.id === pi.id);
const l = await stripe.paymentIntents.list({ limit: 2 });
console.log(l.data.length, l.has_more);
const ref = await stripe.refunds.create({ payment_intent: pi.id, amount: 1000 });
console.log(ref.id, ref.status, (await stripe.charges.retrieve(cap.latest_charge as string)).amount_refunded);
const d = await stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_delayed', confirm: true });
console.log(d.status); await new Promise(r => setTimeout(r, 100)); console.log((await stripe.paymentIntents.retrieve(d.id)).status);
const bad = new Stripe('sk_live_abcdefgh1234', { host: '127.0.0.1', port: em.port, protocol: 'http', maxNetworkRetries: 0 });
try { await bad.paymentIntents.list(); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.message.slice(0, 80)); }
const res = await fetch(`${em.url}/v1/payment_intents`); console.log(res.status, [...res.headers], await res.text());
const res2 = await fetch(`${em.url}/v1/nope`, {headers: {authorization: 'Bearer sk_test_1'}}); console.log(res2.status, await res2.text());
em.control.injectFailures('payment_intents.capture', 1, 'lost_response');
const p3 = await stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true });
const c3 = await stripe.paymentIntents.capture(p3.id); console.log('after lost response', c3.status, c3.lastResponse.headers['idempotent-replayed']);
em.control.injectFailures('payment_intents.cancel', 1);
try { await stripe.paymentIntents.cancel(p3.id); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.type, e.message); }
try { await stripe.paymentIntents.retrieve('pi_nope'); } catch (e: any) { console.log(e.constructor.name, e.statusCode, e.code, e.param, e.message); }
console.log(em.control.counters());
await em.close();
