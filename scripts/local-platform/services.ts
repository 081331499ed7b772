/** What the platform runs on besides its own processes: Redis, Kafka and an S3-compatible store. */
export interface PlatformServices {
  redisUrl: string;
  kafkaBrokers: string;
  s3: S3Service;
  smtp: SmtpService;
}

/** The local mail server (scripts/smtp-mailbox.ts): where the cells' notifiers send, and where its mail is read. */
export interface SmtpService {
  url: string;
  mailboxUrl: string;
}

/** The S3-compatible store the reporting consumer writes its facts to (scripts/services' `S3_*`). */
export interface S3Service {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * The services `scripts/services up` started, as its environment names them (.data/services.env);
 * `need` reads one variable or fails naming it.
 */
export function servicesFrom(need: (name: string) => string): PlatformServices {
  return {
    redisUrl: need('REDIS_URL'),
    kafkaBrokers: need('KAFKA_BROKERS'),
    s3: {
      endpoint: need('S3_ENDPOINT'),
      bucket: need('S3_BUCKET'),
      region: need('S3_REGION'),
      accessKeyId: need('S3_ACCESS_KEY_ID'),
      secretAccessKey: need('S3_SECRET_ACCESS_KEY'),
    },
    smtp: { url: need('SMTP_URL'), mailboxUrl: need('SMTP_MAILBOX_URL') },
  };
}
