CREATE TABLE "revocation_deliveries" (
	"revocation_id" uuid NOT NULL,
	"cell_id" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	"last_error" text,
	CONSTRAINT "revocation_deliveries_revocation_id_cell_id_pk" PRIMARY KEY("revocation_id","cell_id")
);
--> statement-breakpoint
ALTER TABLE "revocation_deliveries" ADD CONSTRAINT "revocation_deliveries_revocation_id_revocations_id_fk" FOREIGN KEY ("revocation_id") REFERENCES "public"."revocations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "revocation_deliveries" ADD CONSTRAINT "revocation_deliveries_cell_id_cells_id_fk" FOREIGN KEY ("cell_id") REFERENCES "public"."cells"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "revocation_deliveries_due_idx" ON "revocation_deliveries" USING btree ("next_attempt_at") WHERE delivered_at IS NULL;