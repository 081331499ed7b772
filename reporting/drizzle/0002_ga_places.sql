-- The general-admission places an order holds, per area (null: seats only, or projected before GA places were
-- counted; a rebuild fills it from the facts that carry them).
ALTER TABLE reporting.orders ADD COLUMN IF NOT EXISTS ga jsonb;
