-- The hold transaction of cell/src/holds/place-hold.ts (a seated hold of two seats) as plain SQL,
-- statement for statement and round trip for round trip: the raw limit the HTTP path is compared
-- against. Keep it in step with placeHold. {{CELL_ID}} and {{EVENT_ID}} are filled in by bench.ts;
-- each transaction takes the next two seats of the pgbench event for a buyer of its own.
SELECT k, (SELECT seat_id FROM bench_seat_numbers WHERE n = 2 * k - 1) AS s1, (SELECT seat_id FROM bench_seat_numbers WHERE n = 2 * k) AS s2 FROM (SELECT nextval('bench_hold_seq') AS k) x \gset
BEGIN;
SELECT epoch FROM cell_epoch WHERE cell_id = '{{CELL_ID}}' FOR SHARE;
INSERT INTO idempotency_keys (user_id, key, request_hash, expires_at) VALUES ('pgbench-' || :k, 'key-' || :k, 'hash', now() + interval '24 hours') ON CONFLICT (user_id, key) DO NOTHING;
SELECT tenant_id, hold_ttl_seconds, max_seats_per_order, sales_status, sales_status_reason FROM events WHERE id = '{{EVENT_ID}}' FOR SHARE;
SELECT s.id, s.section, s.tier, coalesce(t.price + CASE WHEN t.fees_included THEN 0 ELSE t.fee END, s.price) AS price, trim(coalesce(t.currency, s.currency)) AS currency FROM seats s LEFT JOIN price_tiers t ON t.event_id = s.event_id AND t.code = s.tier WHERE s.event_id = '{{EVENT_ID}}' AND s.id = ANY(CAST(ARRAY[':s1', ':s2'] AS uuid[])) ORDER BY s.id FOR UPDATE OF s;
INSERT INTO buyer_limits (event_id, user_id) VALUES ('{{EVENT_ID}}', 'pgbench-' || :k) ON CONFLICT (event_id, user_id) DO UPDATE SET event_id = excluded.event_id;
SELECT coalesce(sum((SELECT count(*) FROM hold_seats hs WHERE hs.hold_id = h.id) + (SELECT coalesce(sum(g.quantity), 0) FROM hold_ga_units g WHERE g.hold_id = h.id)), 0)::int AS seats FROM orders o JOIN holds h ON h.order_id = o.id WHERE o.event_id = '{{EVENT_ID}}' AND o.user_id = 'pgbench-' || :k AND ((o.status = 'pending_payment' AND h.status = 'active' AND h.expires_at > now()) OR o.status IN ('confirmed', 'paid', 'ticketed'));
SELECT hs.seat_id, h.order_id, (h.status = 'active' AND h.expires_at <= now()) AS lapsed FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id WHERE hs.seat_id = ANY(CAST(ARRAY[':s1', ':s2'] AS uuid[])) AND hs.released_at IS NULL UNION ALL SELECT seat_id, NULL, false FROM tickets WHERE seat_id = ANY(CAST(ARRAY[':s1', ':s2'] AS uuid[])) AND voided_at IS NULL;
INSERT INTO orders (id, event_id, user_id, status, amount, currency, correlation_id) VALUES (gen_random_uuid(), '{{EVENT_ID}}', 'pgbench-' || :k, 'pending_payment', 10000, 'eur', 'pgbench') RETURNING id AS order_id \gset
INSERT INTO holds (id, order_id, event_id, user_id, status, expires_at) VALUES (gen_random_uuid(), ':order_id', '{{EVENT_ID}}', 'pgbench-' || :k, 'active', now() + make_interval(secs => 600)) RETURNING id AS hold_id, expires_at \gset
INSERT INTO hold_seats (hold_id, seat_id) VALUES (':hold_id', ':s1'), (':hold_id', ':s2');
INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope) VALUES (gen_random_uuid(), ':order_id', 'HoldCreated', 'cell.{{CELL_ID}}.purchase', jsonb_build_object('orderId', ':order_id', 'holdId', ':hold_id', 'seatIds', jsonb_build_array(':s1', ':s2'), 'amount', 10000, 'currency', 'eur', 'expiresAt', ':expires_at'));
UPDATE idempotency_keys SET response_status = 202, response_body = jsonb_build_object('orderId', ':order_id', 'holdId', ':hold_id', 'status', 'pending_payment', 'expiresAt', ':expires_at')::text WHERE user_id = 'pgbench-' || :k AND key = 'key-' || :k;
COMMIT;
