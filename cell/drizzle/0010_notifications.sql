CREATE TABLE "notifications" (
	"order_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"message_id" text,
	"skipped_reason" text,
	CONSTRAINT "notifications_order_kind_pk" PRIMARY KEY("order_id","kind"),
	CONSTRAINT "notifications_kind_ck" CHECK ("notifications"."kind" IN ('order_confirmation', 'refund', 'cancellation')),
	CONSTRAINT "notifications_status_ck" CHECK ("notifications"."status" IN ('sending', 'sent', 'skipped'))
);
--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "buyer_email" text;