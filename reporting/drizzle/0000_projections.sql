-- The live projections as the consumer first made them, before this schema had migrations: IF NOT EXISTS
-- throughout, so a database whose projections were made then adopts this migration without a change.
CREATE SCHEMA IF NOT EXISTS reporting;
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS reporting.applied (fact_id uuid PRIMARY KEY);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS reporting.orders (
  order_id uuid PRIMARY KEY, tenant_id text NOT NULL, event_id uuid NOT NULL, cell_id text NOT NULL,
  status text NOT NULL, amount bigint NOT NULL, currency text NOT NULL, seats jsonb NOT NULL,
  held_at timestamptz, paid_at timestamptz, refunded bigint NOT NULL DEFAULT 0, ticketed_at timestamptz);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS reporting_orders_event ON reporting.orders (tenant_id, event_id);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS reporting.minutes (
  tenant_id text NOT NULL, event_id uuid NOT NULL, minute timestamptz NOT NULL,
  holds int NOT NULL DEFAULT 0, paid_orders int NOT NULL DEFAULT 0, seats_sold int NOT NULL DEFAULT 0,
  gross bigint NOT NULL DEFAULT 0, refunded bigint NOT NULL DEFAULT 0, declines int NOT NULL DEFAULT 0,
  expiries int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id, minute));
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS reporting.sections (
  tenant_id text NOT NULL, event_id uuid NOT NULL, section text NOT NULL, tier text NOT NULL,
  sold int NOT NULL DEFAULT 0, held int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id, section, tier));
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS reporting.funnel (
  tenant_id text NOT NULL, event_id uuid NOT NULL, queued bigint NOT NULL DEFAULT 0,
  admitted bigint NOT NULL DEFAULT 0, held bigint NOT NULL DEFAULT 0, paid bigint NOT NULL DEFAULT 0,
  ticketed bigint NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id));
