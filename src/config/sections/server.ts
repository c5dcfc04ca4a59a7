import { z } from "zod";
import { port, text, urlWithScheme } from "../fields.ts";

export function serverSection() {
  return z
    .strictObject(
      {
        host: text().default("127.0.0.1").meta({
          description:
            'Address to listen on: `"127.0.0.1"` is this machine only, `"0.0.0.0"` every interface.',
          example: "0.0.0.0",
        }),
        port: port().default(4173).meta({ description: "TCP port.", example: 8080 }),
        publicUrl: urlWithScheme(["http:", "https:"], "https://annal.example.org")
          .transform((url) => url.replace(/\/+$/, ""))
          .optional()
          .meta({
            description:
              "The URL people reach annal at, behind any proxy: sign-in sends the identity provider back to `<publicUrl>/auth/callback`, the session cookie is `Secure` when it is https, and a cookie-authenticated change must come from its origin. Default `http://<host>:<port>`.",
            example: "https://annal.example.org",
          }),
      },
      { error: "expected a table: [server]" },
    )
    .prefault({})
    .meta({ description: "Where the HTTP server (GraphQL, REST, webhooks, sign-in) listens." });
}
