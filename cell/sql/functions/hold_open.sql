-- The hold's locks and reads (cell/src/holds/place-hold.ts) in one round trip, in the order every hold takes
-- them: the writer's fence; the idempotency key's claim, the event's rules under FOR SHARE of its row and the
-- buyer's row for the event (upserted); then the requested seats, FOR UPDATE in id order; then what stands in
-- the way. The function is VOLATILE, so each statement reads with a snapshot of its own: the last one's is taken
-- after the buyer's and the seats' locks were granted, and sees every hold committed before them.
-- A key claimed before (a replay) or an event not in this cell answers the opening alone, with nothing locked.
--   opening: {claimed, id, tenant_id, hold_ttl_seconds, max_seats_per_order, sales_status, sales_status_reason,
--             expires_at} (the event's columns null when the event is not here; expires_at is now() + the TTL)
--   seats: [{id, section, tier, price, currency}] of the seats found, in id order
--   held: the places the buyer holds or bought for the event (seats and GA alike)
--   occupied: [{seat_id, order_id, lapsed}] of the requested seats on a hold (lapsed or not) or a ticket
CREATE OR REPLACE FUNCTION hold_open(p_cell_id text, p_epoch bigint, p_user_id text, p_key text, p_request_hash text,
                          p_event_id uuid, p_seat_ids uuid[])
RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_opening jsonb;
  v_seats jsonb;
  v_standing jsonb;
BEGIN
  PERFORM writer_fence(p_cell_id, p_epoch);
  -- A concurrent request with the same key blocks on the unique index until the first transaction ends: if
  -- it committed, this one replays its stored response; if it rolled back, this one proceeds as the first.
  WITH claim AS (
    INSERT INTO idempotency_keys (user_id, key, request_hash, expires_at)
    VALUES (p_user_id, p_key, p_request_hash, now() + interval '24 hours')
    ON CONFLICT (user_id, key) DO NOTHING RETURNING true AS claimed
  ), event AS (
    SELECT e.id, e.tenant_id, e.hold_ttl_seconds, e.max_seats_per_order, e.sales_status, e.sales_status_reason,
           to_char((now() + make_interval(secs => e.hold_ttl_seconds)) AT TIME ZONE 'UTC',
                   'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at
      FROM events e WHERE e.id = p_event_id FOR SHARE
  ), buyer AS (
    INSERT INTO buyer_limits (event_id, user_id) SELECT event.id, p_user_id FROM event
    ON CONFLICT (event_id, user_id) DO UPDATE SET event_id = excluded.event_id
  )
  SELECT to_jsonb(o) INTO v_opening
    FROM (SELECT EXISTS (SELECT FROM claim) AS claimed, event.* FROM (VALUES (1)) AS one LEFT JOIN event ON true) o;
  IF NOT (v_opening->>'claimed')::boolean OR v_opening->>'id' IS NULL THEN
    RETURN jsonb_build_object('opening', v_opening);
  END IF;

  SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.id), '[]') INTO v_seats FROM (
    SELECT s.id, s.section, s.tier, seat_price(t.price, t.fee, t.fees_included, s.price) AS price,
           trim(coalesce(t.currency, s.currency)) AS currency
      FROM seats s LEFT JOIN price_tiers t ON t.event_id = s.event_id AND t.code = s.tier
     WHERE s.event_id = p_event_id AND s.id = ANY(p_seat_ids)
     ORDER BY s.id FOR UPDATE OF s) x;

  SELECT jsonb_build_object(
    'held', (SELECT coalesce(sum((SELECT count(*) FROM hold_seats hs WHERE hs.hold_id = h.id)
                               + (SELECT coalesce(sum(g.quantity), 0) FROM hold_ga_units g WHERE g.hold_id = h.id)), 0)::int
               FROM orders o JOIN holds h ON h.order_id = o.id
              WHERE o.event_id = p_event_id AND o.user_id = p_user_id
                AND ((o.status = 'pending_payment' AND h.status = 'active' AND h.expires_at > now())
                     OR o.status IN ('confirmed', 'paid', 'ticketed'))),
    'occupied', (SELECT coalesce(jsonb_agg(x), '[]') FROM (
       SELECT hs.seat_id, h.order_id, (h.status = 'active' AND h.expires_at <= now()) AS lapsed
         FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
        WHERE hs.seat_id = ANY(p_seat_ids) AND hs.released_at IS NULL
       UNION ALL
       SELECT t.seat_id, NULL, false FROM tickets t WHERE t.seat_id = ANY(p_seat_ids) AND t.voided_at IS NULL
    ) x)) INTO v_standing;

  RETURN jsonb_build_object('opening', v_opening, 'seats', v_seats) || v_standing;
END $$;
