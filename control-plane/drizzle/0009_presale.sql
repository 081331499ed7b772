CREATE TABLE "presale_invitations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"event_id" uuid NOT NULL,
	"buyer_sub" text NOT NULL,
	"access_code" text NOT NULL,
	"status" text DEFAULT 'offered' NOT NULL,
	"from_waitlist_rank" integer,
	"offered_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "presale_registrations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"event_id" uuid NOT NULL,
	"buyer_sub" text NOT NULL,
	"ip" text NOT NULL,
	"device_id" text NOT NULL,
	"registered_at" timestamp with time zone NOT NULL,
	"draw_rank" integer,
	"outcome" text DEFAULT 'pending' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "presale_sources" (
	"event_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"value" text NOT NULL,
	"accounts" integer DEFAULT 0 NOT NULL,
	"refused" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "presale_sources_event_id_kind_value_pk" PRIMARY KEY("event_id","kind","value")
);
--> statement-breakpoint
CREATE TABLE "presales" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"registration_opens_at" timestamp with time zone NOT NULL,
	"registration_closes_at" timestamp with time zone NOT NULL,
	"presale_starts_at" timestamp with time zone NOT NULL,
	"presale_ends_at" timestamp with time zone NOT NULL,
	"invitations" integer NOT NULL,
	"waitlist_size" integer DEFAULT 0 NOT NULL,
	"invitation_ttl_seconds" integer NOT NULL,
	"lottery_seed" text NOT NULL,
	"drawn_at" timestamp with time zone,
	"opened_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "presales_windows_check" CHECK ("presales"."registration_opens_at" < "presales"."registration_closes_at"
      and "presales"."registration_closes_at" <= "presales"."presale_starts_at" and "presales"."presale_starts_at" < "presales"."presale_ends_at"),
	CONSTRAINT "presales_sizes_check" CHECK ("presales"."invitations" > 0 and "presales"."waitlist_size" >= 0)
);
--> statement-breakpoint
ALTER TABLE "revocations" ADD COLUMN "event_id" uuid;--> statement-breakpoint
ALTER TABLE "presale_invitations" ADD CONSTRAINT "presale_invitations_event_id_presales_event_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."presales"("event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presale_registrations" ADD CONSTRAINT "presale_registrations_event_id_presales_event_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."presales"("event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presale_sources" ADD CONSTRAINT "presale_sources_event_id_presales_event_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."presales"("event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "presales" ADD CONSTRAINT "presales_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "presale_invitations_buyer_idx" ON "presale_invitations" USING btree ("event_id","buyer_sub");--> statement-breakpoint
CREATE UNIQUE INDEX "presale_invitations_code_idx" ON "presale_invitations" USING btree ("access_code");--> statement-breakpoint
CREATE INDEX "presale_invitations_due_idx" ON "presale_invitations" USING btree ("expires_at") WHERE status = 'offered';--> statement-breakpoint
CREATE UNIQUE INDEX "presale_registrations_buyer_idx" ON "presale_registrations" USING btree ("event_id","buyer_sub");--> statement-breakpoint
CREATE INDEX "presale_registrations_waitlist_idx" ON "presale_registrations" USING btree ("event_id","draw_rank") WHERE outcome = 'waitlisted';--> statement-breakpoint
CREATE INDEX "revocations_event_idx" ON "revocations" USING btree ("event_id");