CREATE TABLE "relay_leases" (
	"owner" text PRIMARY KEY NOT NULL,
	"first_id" bigint NOT NULL,
	"last_id" bigint NOT NULL,
	"until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "outbox" DROP COLUMN "lease_owner";--> statement-breakpoint
ALTER TABLE "outbox" DROP COLUMN "lease_until";