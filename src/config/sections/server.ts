import { z } from "zod";
import { port, text } from "../fields.ts";

/** `[server]`: where the HTTP server (GraphQL, REST, webhooks, sign-in) listens. */
export function serverSection() {
  return z
    .strictObject(
      {
        /** Address to listen on. Default `"127.0.0.1"` (this machine only); `"0.0.0.0"` for all. */
        host: text().default("127.0.0.1"),
        /** TCP port. Default `4173`. The environment variable `PORT` overrides it. */
        port: port().default(4173),
      },
      { error: "expected a table: [server]" },
    )
    .prefault({});
}
