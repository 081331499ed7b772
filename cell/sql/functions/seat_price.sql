-- What the buyer pays for a seat: its tier's price, plus the tier's fee when fees are added; a seat loaded
-- without a declared tier keeps its own price. Inlined by the planner wherever a seat is priced. The same rule
-- as tierSeatPrice (contracts/src/holds.ts), which the control plane shows promoters: cell/test/seat-price.test.ts
-- runs both over the same cases.
CREATE OR REPLACE FUNCTION seat_price(tier_price integer, tier_fee integer, fees_included boolean, own_price integer)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(tier_price + CASE WHEN fees_included THEN 0 ELSE tier_fee END, own_price)
$$;
