/** `annal mail`: what the demo's mail catcher kept. */
import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { recentDemoMail } from "../../demo/index.ts";
import { createLogger } from "../../logger.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { MAIL } from "../registry.ts";
import { columns, parseLimit } from "../table.ts";
import { parseCommandLine } from "../usage.ts";

export const command: CommandModule = {
  run(args, output) {
    const { values } = parseCommandLine(args, MAIL);
    return mailList(values, output);
  },
};

/**
 * `annal mail [--limit N] [--json] [--config F]`: the messages the demo's mail catcher took,
 * newest first (default 20), as a table or as JSON lines with their text.
 */
export async function mailList(
  options: { config?: string; limit?: string; json?: boolean },
  output: Output,
): Promise<number> {
  const limit = options.limit === undefined ? 20 : parseLimit(options.limit);
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    const messages = await recentDemoMail(database.pool, limit);
    if (options.json) {
      for (const message of messages) output.out(JSON.stringify(message));
    } else if (messages.length === 0) {
      output.out(
        config.messaging?.demo
          ? "no mail yet: the demo's mail catcher keeps what the endpoints send"
          : "no mail: the demo's mail catcher is off ([messaging.demo])",
      );
    } else {
      const rows = messages.map((m) => [
        m.receivedAt.toISOString(),
        m.to.join(", "),
        m.subject ?? "",
      ]);
      for (const line of columns(["received", "to", "subject"], rows)) output.out(line);
    }
  } finally {
    await database.close();
  }
  return 0;
}
