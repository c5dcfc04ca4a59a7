import type { Transporter } from "nodemailer";
import type { MessagingConfig } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";
import { annalEvent, mailStream, MAIL_SENT, type MailSent } from "../events/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import type { Templating } from "./templating.ts";

type Addresses = string | readonly string[];

/** One message for `messaging.send`. */
export interface MailMessage {
  /** A `[messaging.transports]` name; default `[messaging] defaultTransport`. */
  readonly transport?: string;
  readonly to: Addresses;
  readonly cc?: Addresses;
  readonly bcc?: Addresses;
  /** Default `[messaging] from`. */
  readonly from?: string;
  readonly replyTo?: string;
  readonly subject: string;
  readonly html?: string;
  readonly text?: string;
  /**
   * A template to render the HTML body from (`@<partial>` or inline), with `data`; named in
   * the `MailSent` event. With `html` too, it only names the template `html` came from.
   */
  readonly template?: string;
  readonly data?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly attachments?: readonly {
    readonly filename: string;
    readonly content: string | Uint8Array;
    readonly contentType?: string;
  }[];
}

/** What a send answers: never throws for a refusal of the server or the network. */
export interface SendResult {
  readonly success: boolean;
  readonly messageId?: string;
  readonly error?: { readonly code: string | null; readonly message: string };
}

/** `c.env.messaging`. */
export interface Messaging {
  /**
   * Sends one message and records it (`MailSent`: recipients, subject, template, outcome;
   * never the body).
   *
   * @throws AnnalError `ANNAL_MESSAGING_NOT_CONFIGURED` without `[messaging]`,
   *   `ANNAL_MESSAGING_TRANSPORT_UNKNOWN`, `ANNAL_MESSAGING_INVALID` for a message without a
   *   recipient, a subject or a body.
   */
  send(message: MailMessage): Promise<SendResult>;
}

/** Who a send is made for: the request and the account it runs as. */
export interface MailOrigin {
  readonly requestId: string;
  readonly account: { readonly id: string; readonly name: string } | null;
}

/** The process's mail: one nodemailer transport per configured SMTP server. */
export interface Mailer {
  forRequest(origin: MailOrigin | undefined): Messaging;
  close(): void;
}

export function createMailer(options: {
  readonly config: MessagingConfig | undefined;
  /** Where a sent message is recorded (only when one is sent). */
  readonly store: Pick<EventStore, "appendToStream">;
  readonly templating: Templating;
  readonly log: Logger;
}): Mailer {
  const { config, store, templating, log } = options;
  const transports = new Map<string, Transporter>();
  const transportOf = async (name: string): Promise<Transporter> => {
    let transport = transports.get(name);
    if (!transport) {
      const smtp = config!.transports[name]!;
      // Loaded with the first message: most annal servers send none, and nodemailer costs
      // 5 MiB of heap for the life of the process.
      const { createTransport } = await import("nodemailer");
      transport =
        transports.get(name) ??
        createTransport({
          host: smtp.host,
          port: smtp.port,
          secure: smtp.secure,
          requireTLS: smtp.requireTLS,
          connectionTimeout: smtp.timeout,
          greetingTimeout: smtp.timeout,
          socketTimeout: smtp.timeout,
          ...(smtp.user === undefined
            ? {}
            : { auth: { user: smtp.user, pass: smtp.password ?? "" } }),
        });
      transports.set(name, transport);
    }
    return transport;
  };

  const send = async (
    origin: MailOrigin | undefined,
    message: MailMessage,
  ): Promise<SendResult> => {
    if (!config) {
      throw new AnnalError(
        "ANNAL_MESSAGING_NOT_CONFIGURED",
        "an endpoint sent mail, but annal.toml has no [messaging] table",
      );
    }
    const name = message.transport ?? defaultTransport(config);
    if (!Object.hasOwn(config.transports, name)) {
      throw new AnnalError(
        "ANNAL_MESSAGING_TRANSPORT_UNKNOWN",
        `no transport is named "${name}" in [messaging.transports]`,
        { hint: `the transports are: ${Object.keys(config.transports).join(", ")}` },
      );
    }
    const to = list(message.to);
    if (to.length === 0 || !message.subject) {
      throw new AnnalError(
        "ANNAL_MESSAGING_INVALID",
        to.length === 0
          ? "a message needs at least one recipient (to)"
          : "a message needs a subject",
      );
    }
    const html =
      message.html ??
      (message.template === undefined
        ? undefined
        : await templating.render(message.template, { data: message.data }));
    if (html === undefined && message.text === undefined) {
      throw new AnnalError(
        "ANNAL_MESSAGING_INVALID",
        "a message needs a body: html, text or template",
      );
    }
    const from = message.from ?? config.from;
    let result: SendResult;
    try {
      const info = (await (
        await transportOf(name)
      ).sendMail({
        from,
        to: [...to],
        cc: list(message.cc),
        bcc: list(message.bcc),
        ...(message.replyTo === undefined ? {} : { replyTo: message.replyTo }),
        subject: message.subject,
        ...(html === undefined ? {} : { html }),
        ...(message.text === undefined ? {} : { text: message.text }),
        ...(message.headers ? { headers: { ...message.headers } } : {}),
        ...(message.attachments
          ? {
              attachments: message.attachments.map((a) => ({
                filename: a.filename,
                content: typeof a.content === "string" ? a.content : Buffer.from(a.content),
                ...(a.contentType === undefined ? {} : { contentType: a.contentType }),
              })),
            }
          : {}),
      })) as { messageId?: string };
      result = { success: true, ...(info.messageId ? { messageId: info.messageId } : {}) };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      result = {
        success: false,
        error: {
          code: typeof code === "string" ? code : null,
          message: error instanceof Error ? error.message : String(error),
        },
      };
      log.warn(
        { transport: name, code: result.error!.code, requestId: origin?.requestId },
        "mail not sent",
      );
    }
    const event: MailSent = {
      transport: name,
      from,
      to,
      cc: list(message.cc),
      bcc: list(message.bcc),
      subject: message.subject,
      template: message.template ?? null,
      outcome: result.success ? "sent" : "failed",
      messageId: result.messageId ?? null,
      error: result.error ?? null,
      requestId: origin?.requestId ?? "",
      account: origin?.account ?? null,
    };
    await store.appendToStream(mailStream(event.account?.id ?? null), [
      annalEvent(MAIL_SENT, event, {
        metadata: {
          actor: event.account?.name ?? null,
          source: "endpoints",
          correlationId: origin?.requestId ?? null,
        },
      }),
    ]);
    return result;
  };

  return {
    forRequest: (origin) => ({ send: (message) => send(origin, message) }),
    close() {
      for (const transport of transports.values()) transport.close();
      transports.clear();
    },
  };
}

function defaultTransport(config: MessagingConfig): string {
  if (config.defaultTransport !== undefined) return config.defaultTransport;
  const names = Object.keys(config.transports);
  return names.length === 1 ? names[0]! : "smtp";
}

function list(addresses: Addresses | undefined): string[] {
  if (addresses === undefined) return [];
  return (typeof addresses === "string" ? [addresses] : [...addresses]).filter((a) => a !== "");
}
