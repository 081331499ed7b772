-- Refunds and cancellations per minute; projections built before them gain the columns at zero. IF NOT EXISTS:
-- a database migrated before this schema had migrations may have them already.
ALTER TABLE reporting.minutes ADD COLUMN IF NOT EXISTS refunds int NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS seats_refunded int NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS cancels int NOT NULL DEFAULT 0;
