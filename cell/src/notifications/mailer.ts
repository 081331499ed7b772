import nodemailer from 'nodemailer';
import { z } from 'zod';

/**
 * How the notification worker reaches its mail server: locally the platform's SMTP server
 * (scripts/smtp-mailbox.ts), in the stacks SES's SMTP interface (`smtps://email-smtp.<region>.amazonaws.com:465`)
 * with the SMTP credentials from Secrets Manager.
 */
export const MailerConfig = z.object({
  SMTP_URL: z.string().regex(/^smtps?:\/\/[^/\s]+(:\d+)?\/?$/, 'smtp://host:port or smtps://host:port'),
  /** The SMTP user, where the server requires one (SES: the SMTP credentials of its sending user); a local server takes anonymous mail. */
  SMTP_USERNAME: z.string().min(1).optional(),
  SMTP_PASSWORD: z.string().min(1).optional(),
  MAIL_FROM: z.string().min(3),
  SMTP_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(20_000),
});
export type MailerConfig = z.infer<typeof MailerConfig>;

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** Derived from the order and the notice, so a resend after a crash carries the one a mail client already has. */
  messageId: string;
  attachments: { filename: string; contentType: string; content: Uint8Array }[];
}

export interface Mailer {
  /** Resolves once the server accepted the message (its 250 to DATA); rejects when it did not. */
  send(mail: Mail): Promise<void>;
  close(): void;
}

export function createMailer(config: MailerConfig): Mailer {
  const url = new URL(config.SMTP_URL);
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 25)),
    secure: url.protocol === 'smtps:',
    // SES answers STARTTLS on 587 too; a plain smtp:// to anything but a local server is a mistake, not a fallback.
    requireTLS: url.protocol === 'smtp:' && !['127.0.0.1', 'localhost', '::1'].includes(url.hostname),
    auth: config.SMTP_USERNAME ? { user: config.SMTP_USERNAME, pass: config.SMTP_PASSWORD } : undefined,
    connectionTimeout: config.SMTP_TIMEOUT_MS,
    greetingTimeout: config.SMTP_TIMEOUT_MS,
    socketTimeout: config.SMTP_TIMEOUT_MS,
    // nodemailer logs nothing unless asked: message bodies and tickets never reach the worker's log.
    logger: false,
  });
  return {
    async send(mail) {
      await transport.sendMail({
        from: config.MAIL_FROM,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        messageId: mail.messageId,
        attachments: mail.attachments.map((a) => ({
          filename: a.filename,
          contentType: a.contentType,
          content: Buffer.from(a.content),
        })),
      });
    },
    close: () => transport.close(),
  };
}
