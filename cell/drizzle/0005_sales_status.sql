ALTER TABLE "events" ADD COLUMN "sales_status" text DEFAULT 'on_sale' NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "sales_status_reason" text;--> statement-breakpoint
ALTER TABLE "tickets" ADD COLUMN "voided_at" timestamp with time zone;