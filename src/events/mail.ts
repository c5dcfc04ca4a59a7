/** The event every mail a custom endpoint sends is recorded by, sent or not. */
export const MAIL_SENT = "MailSent";

/**
 * The stream of the mail sent for one account (`mail-<account id>`), or for callers no
 * account stands behind (a public route's anonymous caller: `mail-anonymous`).
 */
export const mailStream = (accountId: string | null) => `mail-${accountId ?? "anonymous"}`;

/**
 * What `MailSent` records of one send: who it went to, its subject, the template it was
 * rendered from and what happened. Never the body: it may hold a reset link or a secret.
 */
export interface MailSent {
  /** The `[messaging.transports]` entry it went through. */
  readonly transport: string;
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly subject: string;
  /** The template the body was rendered from (`@<partial>`), when the sender named one. */
  readonly template: string | null;
  readonly outcome: "sent" | "failed";
  /** The SMTP server's `Message-ID` for a sent message. */
  readonly messageId: string | null;
  /** Why it failed: nodemailer's code (`EAUTH`, `ECONNECTION`, ...) and message. */
  readonly error: { readonly code: string | null; readonly message: string } | null;
  /** The request of the endpoint that sent it. */
  readonly requestId: string;
  /** The account the endpoint ran for; null on a public route with no credentials. */
  readonly account: { readonly id: string; readonly name: string } | null;
}
