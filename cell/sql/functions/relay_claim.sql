-- The relay's claim in one round trip: the writer's fence, the claim lock, then the claim. The function is
-- VOLATILE, so each statement in it reads with a snapshot of its own: the claim's, taken after the advisory lock
-- was granted, sees every lease committed before it. A writer whose epoch is fenced claims nothing.
CREATE OR REPLACE FUNCTION relay_claim(p_cell_id text, p_epoch bigint, p_lock bigint, p_owner text, p_limit integer, p_lease_ms integer)
RETURNS TABLE (id bigint, topic text, aggregate_id uuid, event_type text, event_id uuid, correlation_id text,
               traceparent text, envelope text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM writer_fence(p_cell_id, p_epoch);
  PERFORM pg_advisory_xact_lock(p_lock);
  -- A lapsed lease is ended by the claim that may take its rows: its relay's mark then finds no lease.
  RETURN QUERY
    WITH lapsed AS (DELETE FROM relay_leases WHERE until <= now()),
    claimed AS (
      SELECT o.id, o.topic, o.aggregate_id, o.event_type, o.event_id, o.envelope->>'correlationId',
             o.envelope->>'traceparent', o.envelope::text
        FROM outbox o
       WHERE o.published_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM relay_leases l WHERE o.id BETWEEN l.first_id AND l.last_id AND l.until > now())
       ORDER BY o.id LIMIT p_limit),
    lease AS (
      INSERT INTO relay_leases (owner, first_id, last_id, until)
      SELECT p_owner, min(c.id), max(c.id), now() + make_interval(secs => p_lease_ms / 1000.0)
        FROM claimed c HAVING count(*) > 0)
    SELECT * FROM claimed c ORDER BY c.id;
END $$;
