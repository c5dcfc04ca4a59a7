/**
 * The demo's mail catcher (`[messaging.demo]`): an SMTP server on loopback that takes every
 * message the demo's endpoints send and keeps it in `demo_mail`, so a send succeeds without a
 * mail server of one's own and `annal mail` shows what was sent. Not for production: it
 * accepts anything from anyone who can reach the port.
 */
import { simpleParser, type AddressObject } from "mailparser";
import { SMTPServer } from "smtp-server";
import type { MessagingConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import { freePort } from "../ports.ts";

export interface DemoMailCatcher {
  /** `smtp://127.0.0.1:<port>` */
  readonly url: string;
  /** The port it listens on: the one asked for, or, when that was taken, another. */
  readonly port: number;
  /** Why it does not listen on the port asked for (taken), when it does not. */
  readonly moved?: { readonly from: number; readonly reason: string };
  stop(): Promise<void>;
}

/** The largest message the catcher takes; a bigger one is refused at `DATA` (552). */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * Starts the catcher on `127.0.0.1:<port>`. A port already taken (another annal's demo, a
 * program of one's own) does not stop the demo, and mail never goes to whatever listens
 * there: the catcher listens on a free port instead (`moved`), and the transports that sent
 * to the port asked for send to it (`sendingToCatcher`).
 */
export async function startDemoMailCatcher(options: {
  readonly port: number;
  readonly pool: Pool;
  readonly log: Logger;
}): Promise<DemoMailCatcher> {
  const { pool, log } = options;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    size: MAX_MESSAGE_BYTES,
    logger: false,
    onData(stream, session, done) {
      simpleParser(stream)
        .then(async (mail) => {
          await pool.query(
            `INSERT INTO demo_mail
               (envelope_from, envelope_to, subject, text_body, html_body, message_id)
             VALUES ($1, $2, $3, $4, $5, $6)`,
            [
              session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
              session.envelope.rcptTo.map((recipient) => recipient.address),
              mail.subject ?? null,
              mail.text ?? null,
              typeof mail.html === "string" ? mail.html : null,
              mail.messageId ?? null,
            ],
          );
          log.info(
            { to: addresses(mail.to), subject: mail.subject },
            "the demo mail catcher took a message (annal mail shows it)",
          );
          done();
        })
        .catch((error: unknown) => {
          log.warn({ err: error }, "the demo mail catcher could not keep a message");
          done(error instanceof Error ? error : new Error(String(error)));
        });
    },
  });
  server.on("error", (error) => log.warn({ err: error }, "demo mail catcher"));
  const listen = (port: number) =>
    new Promise<Error | undefined>((resolve) => {
      const onError = (error: Error) => resolve(error);
      server.server.once("error", onError);
      server.listen(port, "127.0.0.1", () => {
        server.server.off("error", onError);
        resolve(undefined);
      });
    });
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const refused = await listen(options.port);
  if (!refused) return { url: `smtp://127.0.0.1:${options.port}`, port: options.port, stop };
  const port = await freePort();
  const again = await listen(port);
  if (again) {
    throw new AnnalError(
      "ANNAL_DEMO_MAIL_CATCHER_FAILED",
      `the demo's mail catcher could listen neither on 127.0.0.1:${options.port} (${refused.message}) nor on 127.0.0.1:${port} (${again.message})`,
    );
  }
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    moved: { from: options.port, reason: refused.message },
    stop,
  };
}

/** The names of the loopback host, as a transport may write them. */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/**
 * `messaging` with every transport that sent to the catcher's asked-for port on loopback
 * (`from`) sending to the port it listens on (`to`), and the transports it changed: so a
 * catcher that moved takes the demo's mail, and what holds its port gets none.
 */
export function sendingToCatcher(
  messaging: MessagingConfig,
  from: number,
  to: number,
): { messaging: MessagingConfig; redirected: string[] } {
  const redirected: string[] = [];
  const transports = Object.fromEntries(
    Object.entries(messaging.transports).map(([name, transport]) => {
      if (transport.port !== from || !LOOPBACK.has(transport.host.toLowerCase())) {
        return [name, transport];
      }
      redirected.push(name);
      return [name, { ...transport, port: to }];
    }),
  );
  return {
    messaging: { ...messaging, transports, ...(messaging.demo ? { demo: { port: to } } : {}) },
    redirected,
  };
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const objects = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return objects.flatMap((object) => object.value.map((address) => address.address ?? ""));
}

/** One kept message, newest first from `recentDemoMail`. */
export interface DemoMail {
  readonly id: string;
  readonly receivedAt: Date;
  readonly from: string | null;
  readonly to: readonly string[];
  readonly subject: string | null;
  readonly text: string | null;
}

/** The newest `limit` messages the catcher kept. */
export async function recentDemoMail(pool: Pool, limit: number): Promise<DemoMail[]> {
  const { rows } = await pool.query<{
    id: string;
    received_at: Date;
    envelope_from: string | null;
    envelope_to: string[];
    subject: string | null;
    text_body: string | null;
  }>(
    `SELECT id::text, received_at, envelope_from, envelope_to, subject, text_body
       FROM demo_mail ORDER BY id DESC LIMIT $1`,
    [limit],
  );
  return rows.map((row) => ({
    id: row.id,
    receivedAt: row.received_at,
    from: row.envelope_from,
    to: row.envelope_to,
    subject: row.subject,
    text: row.text_body,
  }));
}
