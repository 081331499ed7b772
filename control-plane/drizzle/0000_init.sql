CREATE TABLE "revocations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"jti" text,
	"subject" text,
	"reason" text NOT NULL,
	"revoked_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_key_enc" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"activates_at" timestamp with time zone NOT NULL,
	"retired_at" timestamp with time zone,
	"published_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "cells" (
	"id" text PRIMARY KEY NOT NULL,
	"base_url" text NOT NULL,
	"region" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"capacity" integer DEFAULT 10 NOT NULL,
	"dedicated_event_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cells_status_check" CHECK ("cells"."status" in ('active','draining','down','evacuated')),
	CONSTRAINT "cells_capacity_check" CHECK ("cells"."capacity" > 0)
);
--> statement-breakpoint
CREATE TABLE "directory_meta" (
	"id" integer PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"venue" text NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"onsale_at" timestamp with time zone,
	"status" text DEFAULT 'draft' NOT NULL,
	"cell_id" text,
	"cell_pinned" boolean DEFAULT false NOT NULL,
	"directory_epoch" integer DEFAULT 0 NOT NULL,
	"seat_count" integer DEFAULT 0 NOT NULL,
	"seat_map_version" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_status_check" CHECK ("events"."status" in ('draft','scheduled','on_sale','paused','sold_out','ended'))
);
--> statement-breakpoint
CREATE TABLE "price_tiers" (
	"event_id" uuid NOT NULL,
	"code" text NOT NULL,
	"name" text NOT NULL,
	"price" integer NOT NULL,
	"currency" text NOT NULL,
	CONSTRAINT "price_tiers_event_id_code_pk" PRIMARY KEY("event_id","code"),
	CONSTRAINT "price_tiers_price_check" CHECK ("price_tiers"."price" > 0)
);
--> statement-breakpoint
CREATE TABLE "seats" (
	"id" uuid PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"label" text NOT NULL,
	"section" text NOT NULL,
	"row" text NOT NULL,
	"tier_code" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "onsales" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"room_opens_at" timestamp with time zone NOT NULL,
	"onsale_at" timestamp with time zone NOT NULL,
	"per_buyer_limit" integer NOT NULL,
	"max_release_rate" integer NOT NULL,
	"min_release_rate" integer NOT NULL,
	"max_active_shoppers" integer,
	"hold_ttl_seconds" integer NOT NULL,
	"load_status" text DEFAULT 'pending' NOT NULL,
	"load_attempts" integer DEFAULT 0 NOT NULL,
	"last_load_error" text,
	"last_load_at" timestamp with time zone,
	"next_load_at" timestamp with time zone DEFAULT now() NOT NULL,
	"load_lease_until" timestamp with time zone,
	"loaded_at" timestamp with time zone,
	"loaded_cell_id" text,
	"loaded_epoch" integer,
	"loaded_seat_map_version" integer,
	"room_opened_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "onsales_rates_check" CHECK ("onsales"."min_release_rate" >= 0 and "onsales"."max_release_rate" >= "onsales"."min_release_rate")
);
--> statement-breakpoint
CREATE TABLE "controller_decisions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"cell_id" text,
	"at" timestamp with time zone NOT NULL,
	"mode" text NOT NULL,
	"signals" jsonb,
	"old_rate" real NOT NULL,
	"new_rate" real NOT NULL,
	"reason" text NOT NULL,
	"actor" text DEFAULT 'controller' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "release_rates" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"mode" text DEFAULT 'auto' NOT NULL,
	"rate" real NOT NULL,
	"pinned_rate" real,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_cell_id_cells_id_fk" FOREIGN KEY ("cell_id") REFERENCES "public"."cells"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "price_tiers" ADD CONSTRAINT "price_tiers_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "seats" ADD CONSTRAINT "seats_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "onsales" ADD CONSTRAINT "onsales_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "controller_decisions" ADD CONSTRAINT "controller_decisions_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "release_rates" ADD CONSTRAINT "release_rates_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "revocations_jti_idx" ON "revocations" USING btree ("jti");--> statement-breakpoint
CREATE INDEX "revocations_subject_idx" ON "revocations" USING btree ("subject");--> statement-breakpoint
CREATE INDEX "events_tenant_idx" ON "events" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "events_cell_idx" ON "events" USING btree ("cell_id");--> statement-breakpoint
CREATE UNIQUE INDEX "seats_event_label_uq" ON "seats" USING btree ("event_id","label");--> statement-breakpoint
CREATE INDEX "onsales_load_idx" ON "onsales" USING btree ("load_status","next_load_at");--> statement-breakpoint
CREATE INDEX "controller_decisions_event_idx" ON "controller_decisions" USING btree ("event_id","at");