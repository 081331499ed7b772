CREATE TABLE "door_defences" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"pow_difficulty" integer DEFAULT 0 NOT NULL,
	"pow_adaptive_above_per_second" integer,
	"pow_max_difficulty" integer DEFAULT 24 NOT NULL,
	"require_device_binding" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "door_defences_pow_check" CHECK ("door_defences"."pow_difficulty" between 0 and 32 and "door_defences"."pow_max_difficulty" between "door_defences"."pow_difficulty" and 32),
	CONSTRAINT "door_defences_adaptive_check" CHECK ("door_defences"."pow_adaptive_above_per_second" is null or "door_defences"."pow_adaptive_above_per_second" > 0)
);
--> statement-breakpoint
ALTER TABLE "door_defences" ADD CONSTRAINT "door_defences_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;