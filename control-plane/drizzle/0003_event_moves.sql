CREATE TABLE "event_moves" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"event_id" uuid NOT NULL,
	"from_cell" text NOT NULL,
	"to_cell" text NOT NULL,
	"step" text DEFAULT 'planned' NOT NULL,
	"drain_seconds" integer NOT NULL,
	"fence_epoch" integer,
	"flip_epoch" integer,
	"fenced_at" timestamp with time zone,
	"drained_at" timestamp with time zone,
	"copied_at" timestamp with time zone,
	"flipped_at" timestamp with time zone,
	"resumed_at" timestamp with time zone,
	"done_at" timestamp with time zone,
	"report" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_moves_step_check" CHECK ("event_moves"."step" in ('planned','fencing','fenced','drained','copied','flipped','resumed','done','aborted'))
);
--> statement-breakpoint
ALTER TABLE "event_moves" ADD CONSTRAINT "event_moves_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_moves" ADD CONSTRAINT "event_moves_from_cell_cells_id_fk" FOREIGN KEY ("from_cell") REFERENCES "public"."cells"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_moves" ADD CONSTRAINT "event_moves_to_cell_cells_id_fk" FOREIGN KEY ("to_cell") REFERENCES "public"."cells"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "event_moves_one_open_uq" ON "event_moves" USING btree ("event_id") WHERE step not in ('done', 'aborted');--> statement-breakpoint
CREATE INDEX "event_moves_event_idx" ON "event_moves" USING btree ("event_id","created_at");