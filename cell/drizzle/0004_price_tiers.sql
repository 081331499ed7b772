CREATE TABLE "price_tiers" (
	"event_id" uuid NOT NULL,
	"code" text NOT NULL,
	"name" text NOT NULL,
	"price" integer NOT NULL,
	"currency" char(3) NOT NULL,
	"fee" integer DEFAULT 0 NOT NULL,
	"fees_included" boolean DEFAULT true NOT NULL,
	CONSTRAINT "price_tiers_event_id_code_pk" PRIMARY KEY("event_id","code")
);
--> statement-breakpoint
ALTER TABLE "price_tiers" ADD CONSTRAINT "price_tiers_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;