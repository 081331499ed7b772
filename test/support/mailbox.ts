import { serviceEnv } from './services';

/** A message as the local mail server (scripts/smtp-mailbox.ts) received it. */
export interface ReceivedMail {
  id: string;
  to: string[];
  from: string[];
  subject: string;
  messageId: string | null;
  text: string;
  attachments: { n: number; filename: string | null; contentType: string; size: number }[];
}

/** Where `scripts/services up` started the mail server: SMTP in, and the read API over what it received. */
export function mailServer(): { smtpUrl: string; mailboxUrl: string } {
  const env = serviceEnv();
  const smtpUrl = process.env.SMTP_URL ?? env.SMTP_URL;
  const mailboxUrl = process.env.SMTP_MAILBOX_URL ?? env.SMTP_MAILBOX_URL;
  if (!smtpUrl || !mailboxUrl)
    throw new Error('SMTP_URL and SMTP_MAILBOX_URL are not in .data/services.env: run `bash scripts/services up`');
  return { smtpUrl, mailboxUrl };
}

/** The real mail server's messages to one address (tests give each buyer an address of their own). */
export function mailbox(address: string) {
  const { mailboxUrl } = mailServer();
  return {
    async messages(): Promise<ReceivedMail[]> {
      const res = await fetch(`${mailboxUrl}/messages?to=${encodeURIComponent(address)}`);
      if (!res.ok) throw new Error(`mailbox answered ${res.status}`);
      return ((await res.json()) as { messages: ReceivedMail[] }).messages;
    },
    async attachment(mail: ReceivedMail, n: number): Promise<Uint8Array> {
      const res = await fetch(`${mailboxUrl}/messages/${mail.id}/attachments/${n}`);
      if (!res.ok) throw new Error(`mailbox answered ${res.status} for attachment ${n} of ${mail.id}`);
      return new Uint8Array(await res.arrayBuffer());
    },
  };
}
