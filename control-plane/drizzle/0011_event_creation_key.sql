ALTER TABLE "events" ADD COLUMN "creation_key" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "creation_hash" text;--> statement-breakpoint
CREATE UNIQUE INDEX "events_creation_key_idx" ON "events" USING btree ("tenant_id","creation_key");