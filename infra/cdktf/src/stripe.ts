/**
 * Stripe's documented webhook source addresses: https://stripe.com/files/ips/ips_webhooks.txt, linked from
 * https://docs.stripe.com/ips#webhook-notifications ("Webhook notifications"). Stripe announces changes seven
 * days ahead on its api-announce list; update this list (and re-apply the edge stack) when it does. Read on
 * 2026-12-01 (the list as published since 2026-05: 15 addresses).
 */
export const STRIPE_WEBHOOK_IPS = [
  '3.18.12.63',
  '3.69.109.8',
  '3.120.168.93',
  '3.130.192.231',
  '13.235.14.237',
  '13.235.122.149',
  '18.211.135.69',
  '35.154.171.200',
  '35.157.207.129',
  '52.15.183.38',
  '54.88.130.119',
  '54.88.130.237',
  '54.187.174.169',
  '54.187.205.235',
  '54.187.216.72',
] as const;

/** The router's path for a cell's Stripe webhook (`/cells/<id>/webhooks/stripe`), as a WAF regex. */
export const STRIPE_WEBHOOK_PATH_REGEX = '^/cells/[^/]+/webhooks/stripe/?$';
