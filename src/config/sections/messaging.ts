import { z } from "zod";
import { duration, integer, port, text } from "../fields.ts";

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

function smtpTransport() {
  return z.strictObject(
    {
      host: text().meta({
        description: "The SMTP server's host name or address.",
        example: "smtp.example.org",
      }),
      port: integer(1, 65_535).default(587).meta({
        description:
          "The SMTP server's port: 587 for submission with STARTTLS, 465 with `secure`, 25 between servers.",
        example: 465,
      }),
      secure: z.boolean({ error: "expected true or false" }).default(false).meta({
        description:
          "TLS from the first byte (port 465). When false, annal upgrades with STARTTLS whenever the server offers it.",
      }),
      requireTLS: z.boolean({ error: "expected true or false" }).default(false).meta({
        description: "Refuse to send unless the connection is upgraded with STARTTLS.",
      }),
      user: text().optional().meta({
        description:
          "The user to authenticate as (SMTP AUTH); without it annal sends unauthenticated.",
        example: "annal",
      }),
      password: text().optional().meta({
        description: "The user's password: always an environment reference.",
        example: "${SMTP_PASSWORD}",
      }),
      timeout: duration().prefault("30s").meta({
        description:
          "How long connecting, greeting and each command may take before the send fails.",
        example: "10s",
      }),
    },
    { error: "expected a table: [messaging.transports.<name>] with host and port" },
  );
}

export function messagingSection() {
  return z
    .strictObject(
      {
        from: text().meta({
          description: "The sender of every message that does not name its own `from`.",
          example: "Example IAM <iam@example.org>",
        }),
        defaultTransport: text().regex(NAME, "expected a transport's name").optional().meta({
          description:
            "The transport a send without `transport` goes through; default: the only one, or the one named `smtp`.",
          example: "smtp",
        }),
        transports: z
          .record(
            z.string().regex(NAME, "a transport's name is a letter, then letters, digits, _ or -"),
            smtpTransport(),
            {
              error: "expected tables: [messaging.transports.<name>]",
            },
          )
          .refine((transports) => Object.keys(transports).length > 0, {
            message: "define at least one transport, e.g. [messaging.transports.smtp]",
          })
          .meta({
            description:
              'The SMTP servers mail can go through, by name (`messaging.send({ transport: "smtp", ... })`).',
          }),
        demo: z
          .strictObject(
            {
              port: port().meta({
                description: "Port the demo's mail catcher listens on, on 127.0.0.1.",
                example: 2525,
              }),
            },
            { error: "expected a table: [messaging.demo] with port" },
          )
          .optional()
          .meta({
            description:
              "Only in the demo configuration: annal runs a mail catcher (an SMTP server on `127.0.0.1:<port>`) that takes every message and keeps it, for `annal mail` to show; point a transport at it.",
          }),
      },
      { error: "expected a table: [messaging]" },
    )
    .superRefine((messaging, ctx) => {
      const chosen = messaging.defaultTransport;
      if (chosen !== undefined && !Object.hasOwn(messaging.transports, chosen)) {
        ctx.addIssue({
          code: "custom",
          path: ["defaultTransport"],
          message: `no transport is named "${chosen}" in [messaging.transports]`,
        });
      }
    })
    .optional()
    .meta({
      description:
        "Mail that custom endpoints send (`c.env.messaging.send`), through SMTP. Every send is recorded as a `MailSent` event (recipients, subject, template, outcome; never the body). Without this table a send fails with `ANNAL_MESSAGING_NOT_CONFIGURED`.",
    });
}

/** The resolved `[messaging]` section. */
export type MessagingConfig = NonNullable<z.output<ReturnType<typeof messagingSection>>>;
