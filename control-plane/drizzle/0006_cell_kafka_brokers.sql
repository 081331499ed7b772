ALTER TABLE "cells" ADD COLUMN "kafka_brokers" text;--> statement-breakpoint
ALTER TABLE "cells" ADD COLUMN "kafka_auth" text DEFAULT 'plaintext' NOT NULL;--> statement-breakpoint
ALTER TABLE "cells" ADD CONSTRAINT "cells_kafka_auth_check" CHECK ("cells"."kafka_auth" in ('plaintext','aws-msk-iam'));