CREATE TABLE "ga_areas" (
	"id" uuid PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"name" text NOT NULL,
	"capacity" integer NOT NULL,
	"tier_code" text NOT NULL,
	CONSTRAINT "ga_areas_capacity_check" CHECK ("ga_areas"."capacity" > 0)
);
--> statement-breakpoint
ALTER TABLE "price_tiers" ADD COLUMN "fee" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "price_tiers" ADD COLUMN "fees_included" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "ga_areas" ADD CONSTRAINT "ga_areas_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ga_areas_event_name_uq" ON "ga_areas" USING btree ("event_id","name");--> statement-breakpoint
ALTER TABLE "price_tiers" ADD CONSTRAINT "price_tiers_fee_check" CHECK ("price_tiers"."fee" >= 0);