import { z } from "zod";
import { port, text } from "../fields.ts";

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
      },
      { error: "expected a table: [server]" },
    )
    .prefault({})
    .meta({ description: "Where the HTTP server (GraphQL, REST, webhooks, sign-in) listens." });
}
