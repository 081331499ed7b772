-- The hold transaction of cell/src/holds/place-hold.ts as plain SQL, statement for statement,
-- for pgbench: the raw limit the HTTP path is compared against. {{CELL_ID}} and {{EVENT_ID}} are
-- filled in by bench.ts; each transaction takes the next two seats of the pgbench event.
SELECT k, (SELECT seat_id FROM bench_seat_numbers WHERE n = 2 * k - 1) AS s1, (SELECT seat_id FROM bench_seat_numbers WHERE n = 2 * k) AS s2 FROM (SELECT nextval('bench_hold_seq') AS k) x \gset
BEGIN;
SELECT epoch FROM cell_epoch WHERE cell_id = '{{CELL_ID}}' FOR SHARE;
INSERT INTO idempotency_keys (user_id, key, request_hash, expires_at) VALUES ('pgbench-' || :k, 'key-' || :k, 'hash', now() + interval '24 hours') ON CONFLICT (user_id, key) DO NOTHING;
SELECT s.id, s.price, s.currency, e.hold_ttl_seconds, e.max_seats_per_order FROM seats s JOIN events e ON e.id = s.event_id WHERE s.event_id = '{{EVENT_ID}}' AND s.id = ANY(CAST(ARRAY[':s1', ':s2'] AS uuid[])) ORDER BY s.id FOR UPDATE OF s;
SELECT hs.seat_id, h.order_id, (h.status = 'active' AND h.expires_at <= now()) AS lapsed FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id WHERE hs.seat_id = ANY(CAST(ARRAY[':s1', ':s2'] AS uuid[])) AND hs.released_at IS NULL UNION ALL SELECT seat_id, NULL, false FROM tickets WHERE seat_id = ANY(CAST(ARRAY[':s1', ':s2'] AS uuid[]));
INSERT INTO orders (id, event_id, user_id, status, amount, currency, correlation_id) VALUES (gen_random_uuid(), '{{EVENT_ID}}', 'pgbench-' || :k, 'pending_payment', 10000, 'eur', 'pgbench') RETURNING id AS order_id \gset
INSERT INTO holds (id, order_id, event_id, user_id, status, expires_at) VALUES (gen_random_uuid(), ':order_id', '{{EVENT_ID}}', 'pgbench-' || :k, 'active', now() + make_interval(secs => 600)) RETURNING id AS hold_id, expires_at \gset
INSERT INTO hold_seats (hold_id, seat_id) VALUES (':hold_id', ':s1'), (':hold_id', ':s2');
INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope) VALUES (gen_random_uuid(), ':order_id', 'HoldCreated', 'cell.{{CELL_ID}}.purchase', jsonb_build_object('orderId', ':order_id', 'holdId', ':hold_id', 'seatIds', jsonb_build_array(':s1', ':s2'), 'amount', 10000, 'currency', 'eur', 'expiresAt', ':expires_at'));
UPDATE idempotency_keys SET response_status = 202, response_body = jsonb_build_object('orderId', ':order_id', 'holdId', ':hold_id', 'status', 'pending_payment', 'expiresAt', ':expires_at')::text WHERE user_id = 'pgbench-' || :k AND key = 'key-' || :k;
COMMIT;
