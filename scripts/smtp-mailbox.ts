/**
 * The local platform's mail server (started by `scripts/services up` as the `smtp` service): a real SMTP server
 * (npm smtp-server) that accepts every message for any recipient and keeps it as a file, `<dir>/<id>.eml`, exactly
 * as it arrived; and a small read API over the files for tests and people:
 *
 *   GET /messages[?to=ADDRESS]          every message (oldest first): id, to, from, subject, messageId, date, attachments
 *   GET /messages/{id}.eml              the message as received
 *   GET /messages/{id}/attachments/{n}  one attachment's bytes
 *   GET /healthz                        200 while it runs
 *
 * The messages are the buyers' mail of the local platform: the API listens on 127.0.0.1 only.
 *
 *   tsx scripts/smtp-mailbox.ts --dir .data/smtp/messages --smtp-port 14525 --http-port 14580
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type AddressObject, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: '.data/smtp/messages' },
    'smtp-port': { type: 'string', default: '14525' },
    'http-port': { type: 'string', default: '14580' },
  },
});
const dir = values.dir as string;
mkdirSync(dir, { recursive: true });
const HOST = '127.0.0.1';
/** Larger than any order's tickets PDF; a message past it is refused with 552 as a real server would. */
const MAX_MESSAGE_BYTES = 25 * 1024 * 1024;

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  size: MAX_MESSAGE_BYTES,
  logger: false,
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      if (stream.sizeExceeded) return callback(Object.assign(new Error('message too large'), { responseCode: 552 }));
      // Ids sort by arrival; written under a temporary name and renamed, so a reader never sees half a message.
      const id = `${Date.now().toString().padStart(14, '0')}-${randomUUID().slice(0, 8)}`;
      const tmp = join(dir, `.${id}.tmp`);
      writeFile(tmp, Buffer.concat(chunks))
        .then(() => rename(tmp, join(dir, `${id}.eml`)))
        .then(() => callback(null, `queued as ${id}`), callback);
    });
  },
});

const addresses = (a: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value.map((v) => v.address ?? '').filter(Boolean));

async function summary(id: string) {
  const parsed = await simpleParser(await readFile(join(dir, `${id}.eml`)));
  return {
    id,
    to: addresses(parsed.to),
    from: addresses(parsed.from),
    subject: parsed.subject ?? '',
    messageId: parsed.messageId ?? null,
    date: parsed.date?.toISOString() ?? null,
    text: parsed.text ?? '',
    attachments: parsed.attachments.map((a, n) => ({
      n,
      filename: a.filename ?? null,
      contentType: a.contentType,
      size: a.size,
    })),
  };
}

const ids = async () =>
  (await readdir(dir))
    .filter((f) => f.endsWith('.eml'))
    .map((f) => f.slice(0, -4))
    .sort();

const http = createHttpServer(async (req, res) => {
  // One request per connection: a poller reusing a kept-alive socket the server is closing sees "other side closed".
  res.setHeader('connection', 'close');
  const url = new URL(req.url ?? '/', `http://${HOST}`);
  const json = (status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  try {
    if (req.method !== 'GET') return json(405, { error: { code: 'method_not_allowed' } });
    if (url.pathname === '/healthz') return json(200, { ok: true });
    if (url.pathname === '/messages') {
      const to = url.searchParams.get('to')?.toLowerCase();
      const all = await Promise.all((await ids()).map(summary));
      return json(200, { messages: to ? all.filter((m) => m.to.some((a) => a.toLowerCase() === to)) : all });
    }
    const raw = /^\/messages\/([0-9a-f-]+)\.eml$/.exec(url.pathname);
    if (raw) {
      const body = await readFile(join(dir, `${raw[1]}.eml`)).catch(() => null);
      if (!body) return json(404, { error: { code: 'not_found' } });
      return res.writeHead(200, { 'content-type': 'message/rfc822' }).end(body);
    }
    const part = /^\/messages\/([0-9a-f-]+)\/attachments\/(\d+)$/.exec(url.pathname);
    if (part) {
      const body = await readFile(join(dir, `${part[1]}.eml`)).catch(() => null);
      const attachment = body && (await simpleParser(body)).attachments[Number(part[2])];
      if (!attachment) return json(404, { error: { code: 'not_found' } });
      return res.writeHead(200, { 'content-type': attachment.contentType }).end(attachment.content);
    }
    return json(404, { error: { code: 'not_found' } });
  } catch (err) {
    json(500, { error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } });
  }
});

smtp.listen(Number(values['smtp-port']), HOST);
http.listen(Number(values['http-port']), HOST);
const stop = () => {
  http.close();
  smtp.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
