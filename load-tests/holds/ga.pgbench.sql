-- The GA hold transaction of cell/src/holds/place-hold.ts and ga-units.ts as plain SQL, for
-- pgbench: two places from one hot area, the stripe taken under its row lock until COMMIT with the
-- order, hold and outbox rows written meanwhile, as in the cell. A stripe nobody holds is taken
-- first (SKIP LOCKED); when every stripe with room is locked, the transaction waits for one.
-- {{CELL_ID}}, {{EVENT_ID}}, {{AREA_ID}} and {{STRIPES}} are filled in by ga-phase.ts.
\set k random(1, 1000000000)
\set offset random(0, 15)
BEGIN;
SELECT epoch FROM cell_epoch WHERE cell_id = '{{CELL_ID}}' FOR SHARE;
SELECT sales_status FROM events WHERE id = '{{EVENT_ID}}' FOR SHARE;
INSERT INTO idempotency_keys (user_id, key, request_hash, expires_at) VALUES ('pgbench-ga-' || :k, 'key-' || :k, 'hash', now() + interval '24 hours') ON CONFLICT (user_id, key) DO NOTHING;
INSERT INTO buyer_limits (event_id, user_id) VALUES ('{{EVENT_ID}}', 'pgbench-ga-' || :k) ON CONFLICT (event_id, user_id) DO UPDATE SET event_id = excluded.event_id;
SELECT coalesce((SELECT stripe FROM ga_stripes WHERE area_id = '{{AREA_ID}}' AND remaining >= 2 ORDER BY (stripe + :offset) % {{STRIPES}} LIMIT 1 FOR UPDATE SKIP LOCKED), -1) AS stripe \gset
\if :stripe < 0
SELECT stripe FROM ga_stripes WHERE area_id = '{{AREA_ID}}' AND remaining >= 2 ORDER BY (stripe + :offset) % {{STRIPES}} LIMIT 1 FOR UPDATE \gset
\endif
UPDATE ga_stripes SET remaining = remaining - 2 WHERE area_id = '{{AREA_ID}}' AND stripe = :stripe;
INSERT INTO orders (id, event_id, user_id, status, amount, currency, correlation_id) VALUES (gen_random_uuid(), '{{EVENT_ID}}', 'pgbench-ga-' || :k, 'pending_payment', 8000, 'eur', 'pgbench') RETURNING id AS order_id \gset
INSERT INTO holds (id, order_id, event_id, user_id, status, expires_at) VALUES (gen_random_uuid(), ':order_id', '{{EVENT_ID}}', 'pgbench-ga-' || :k, 'active', now() + make_interval(secs => 600)) RETURNING id AS hold_id, expires_at \gset
INSERT INTO hold_ga_units (hold_id, area_id, stripe, quantity) VALUES (':hold_id', '{{AREA_ID}}', :stripe, 2);
INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope) VALUES (gen_random_uuid(), ':order_id', 'HoldCreated', 'cell.{{CELL_ID}}.purchase', jsonb_build_object('orderId', ':order_id', 'holdId', ':hold_id', 'seatIds', jsonb_build_array(), 'gaUnits', jsonb_build_array(jsonb_build_object('areaId', '{{AREA_ID}}', 'quantity', 2)), 'amount', 8000, 'currency', 'eur', 'expiresAt', ':expires_at'));
UPDATE idempotency_keys SET response_status = 202, response_body = jsonb_build_object('orderId', ':order_id', 'holdId', ':hold_id', 'status', 'pending_payment', 'expiresAt', ':expires_at')::text WHERE user_id = 'pgbench-ga-' || :k AND key = 'key-' || :k;
COMMIT;
