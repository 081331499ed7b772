CREATE TABLE "ga_areas" (
	"id" uuid PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"name" text NOT NULL,
	"capacity" integer NOT NULL,
	"tier" text NOT NULL,
	"units_numbered" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "ga_areas_capacity" CHECK (capacity > 0)
);
--> statement-breakpoint
CREATE TABLE "ga_stripes" (
	"area_id" uuid NOT NULL,
	"stripe" integer NOT NULL,
	"capacity" integer NOT NULL,
	"remaining" integer NOT NULL,
	CONSTRAINT "ga_stripes_area_id_stripe_pk" PRIMARY KEY("area_id","stripe"),
	CONSTRAINT "ga_stripes_remaining_bounds" CHECK (remaining >= 0 AND remaining <= capacity)
);
--> statement-breakpoint
CREATE TABLE "hold_ga_units" (
	"hold_id" uuid NOT NULL,
	"area_id" uuid NOT NULL,
	"stripe" integer NOT NULL,
	"quantity" integer NOT NULL,
	"released_at" timestamp with time zone,
	CONSTRAINT "hold_ga_units_hold_id_area_id_stripe_pk" PRIMARY KEY("hold_id","area_id","stripe"),
	CONSTRAINT "hold_ga_units_quantity" CHECK (quantity > 0)
);
--> statement-breakpoint
DROP INDEX "tickets_seat_uq";--> statement-breakpoint
ALTER TABLE "tickets" ALTER COLUMN "seat_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "tickets" ADD COLUMN "ga_area_id" uuid;--> statement-breakpoint
ALTER TABLE "tickets" ADD COLUMN "unit_no" integer;--> statement-breakpoint
ALTER TABLE "ga_areas" ADD CONSTRAINT "ga_areas_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ga_stripes" ADD CONSTRAINT "ga_stripes_area_id_ga_areas_id_fk" FOREIGN KEY ("area_id") REFERENCES "public"."ga_areas"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hold_ga_units" ADD CONSTRAINT "hold_ga_units_hold_id_holds_id_fk" FOREIGN KEY ("hold_id") REFERENCES "public"."holds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hold_ga_units" ADD CONSTRAINT "hold_ga_units_area_id_stripe_ga_stripes_area_id_stripe_fk" FOREIGN KEY ("area_id","stripe") REFERENCES "public"."ga_stripes"("area_id","stripe") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ga_areas_event_name_uq" ON "ga_areas" USING btree ("event_id","name");--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_ga_area_id_ga_areas_id_fk" FOREIGN KEY ("ga_area_id") REFERENCES "public"."ga_areas"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "tickets_ga_unit_uq" ON "tickets" USING btree ("ga_area_id","unit_no");--> statement-breakpoint
CREATE UNIQUE INDEX "tickets_seat_uq" ON "tickets" USING btree ("seat_id") WHERE voided_at IS NULL;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_seat_or_ga_unit" CHECK ((seat_id IS NOT NULL AND ga_area_id IS NULL AND unit_no IS NULL) OR (seat_id IS NULL AND ga_area_id IS NOT NULL AND unit_no IS NOT NULL));