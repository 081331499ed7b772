import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import nodemailer from 'nodemailer';
import { z } from 'zod';

const SmtpUrl = z.string().regex(/^smtps?:\/\/[^/\s]+(:\d+)?\/?$/, 'smtp://host:port or smtps://host:port');

/**
 * How the notification worker hands mail on: `smtp` to a server at SMTP_URL (locally the platform's own,
 * scripts/smtp-mailbox.ts), or `ses` through Amazon SES's API in AWS_REGION with the task role's credentials,
 * which only SES's identity for MAIL_FROM's domain lets it send as (no SMTP password to keep).
 */
export const MailerConfig = z.object({
  MAIL_TRANSPORT: z.enum(['smtp', 'ses']).default('smtp'),
  SMTP_URL: SmtpUrl.optional(),
  /** The SMTP user, where the server requires one; a local server takes anonymous mail. */
  SMTP_USERNAME: z.string().min(1).optional(),
  SMTP_PASSWORD: z.string().min(1).optional(),
  MAIL_FROM: z.string().min(3),
  /** Per SMTP step (connection, greeting, each command), or for the whole SES call. */
  MAIL_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(20_000),
  AWS_REGION: z.string().min(1).optional(),
});
export type MailerConfig = z.infer<typeof MailerConfig>;

/** The transport's own settings must be there: checked with the rest of the configuration at start. */
export function checkMailerConfig(config: MailerConfig, ctx: z.RefinementCtx): void {
  if (config.MAIL_TRANSPORT === 'smtp' && !config.SMTP_URL)
    ctx.addIssue({ code: 'custom', path: ['SMTP_URL'], message: 'is required when MAIL_TRANSPORT is smtp' });
  if (config.MAIL_TRANSPORT === 'ses' && !config.AWS_REGION)
    ctx.addIssue({ code: 'custom', path: ['AWS_REGION'], message: 'is required when MAIL_TRANSPORT is ses' });
  if (Boolean(config.SMTP_USERNAME) !== Boolean(config.SMTP_PASSWORD))
    ctx.addIssue({ code: 'custom', path: ['SMTP_PASSWORD'], message: 'SMTP_USERNAME and SMTP_PASSWORD go together' });
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** Derived from the order and the notice, so a resend after a crash carries the one a mail client already has. */
  messageId: string;
  attachments: { filename: string; contentType: string; content: Uint8Array }[];
}

export interface Mailer {
  /** Resolves once the server accepted the message (SMTP's 250 to DATA, SES's message id); rejects when it did not. */
  send(mail: Mail): Promise<void>;
  close(): void;
}

function transport(config: MailerConfig) {
  // nodemailer logs nothing unless asked: message bodies and tickets never reach the worker's log.
  if (config.MAIL_TRANSPORT === 'ses') {
    const sesClient = new SESv2Client({
      region: config.AWS_REGION,
      requestHandler: { requestTimeout: config.MAIL_TIMEOUT_MS },
    });
    return nodemailer.createTransport({ SES: { sesClient, SendEmailCommand }, logger: false });
  }
  const url = new URL(config.SMTP_URL as string);
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  return nodemailer.createTransport({
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 25)),
    secure: url.protocol === 'smtps:',
    // Buyers' addresses and tickets cross no network in clear: plain smtp:// only to a server on this host.
    requireTLS: url.protocol === 'smtp:' && !local,
    auth: config.SMTP_USERNAME ? { user: config.SMTP_USERNAME, pass: config.SMTP_PASSWORD } : undefined,
    connectionTimeout: config.MAIL_TIMEOUT_MS,
    greetingTimeout: config.MAIL_TIMEOUT_MS,
    socketTimeout: config.MAIL_TIMEOUT_MS,
    logger: false,
  });
}

export function createMailer(config: MailerConfig): Mailer {
  const mailer = transport(config);
  return {
    async send(mail) {
      await mailer.sendMail({
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
    close: () => mailer.close(),
  };
}
