/** `annal status`: every annal process attached to the database and where the work stands. */
import {
  allProjections,
  openDatabase,
  prepareEventStore,
  type OpenDatabase,
} from "../../app/index.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../logger.ts";
import { readStatus, type AnnalStatus } from "../../operations/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { STATUS } from "../registry.ts";
import { columns } from "../table.ts";
import { parseCommandLine } from "../usage.ts";

export const command: CommandModule = {
  run(args, output) {
    const { values } = parseCommandLine(args, STATUS);
    return annalStatus(values, output);
  },
};

/** `annal status [--json] [--config F]`: read, not guessed (the process registry and the rest). */
export async function annalStatus(
  options: { config?: string; json?: boolean },
  output: Output,
): Promise<number> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    const status = await readStatus(database.pool, {
      projections: allProjections(config),
      ...(config.directory ? { captureSource: config.directory.capture.source } : {}),
    });
    // How this command reached the database, as annal does with the same configuration.
    const reached = {
      description: database.description,
      transport: database.address.transport,
      address: database.address.address,
    };
    if (options.json) output.out(JSON.stringify({ database: reached, ...status }));
    else for (const line of statusLines(status, database)) output.out(line);
    return 0;
  } finally {
    await database.close();
  }
}

function statusLines(status: AnnalStatus, database: OpenDatabase): string[] {
  const lines: string[] = [`database: ${database.description}`, ""];
  const processes = status.processes.map((p) => [
    p.parts.join(","),
    p.host,
    String(p.pid),
    p.version,
    p.startedAt.toISOString(),
    p.lastSeenAt.toISOString(),
    p.gone ? "gone" : (p.url ?? "running"),
  ]);
  lines.push(`processes: ${status.processes.filter((p) => !p.gone).length} running`);
  if (processes.length > 0) {
    lines.push(
      ...columns(
        ["parts", "host", "pid", "version", "started", "last seen", "state"],
        processes,
      ).map(indent),
    );
  }
  lines.push("", "projections:");
  lines.push(
    ...columns(
      ["name", "version", "position", "lag"],
      status.projections.map((p) => [
        p.name,
        p.builtVersion === undefined || p.builtVersion === p.version
          ? String(p.version)
          : `${p.version} (built by ${p.builtVersion})`,
        `${p.position.transactionId}/${p.position.position}`,
        String(p.lag),
      ]),
    ).map(indent),
  );
  const { holder, status: capture } = status.capture;
  lines.push(
    "",
    `capture: ${
      holder === null ? "held by no process" : `held by pid ${holder.pid} on ${holder.host}`
    }${capture ? `, source ${capture.source}, last success ${capture.lastSuccessAt?.toISOString() ?? "never"}` : ""}`,
  );
  lines.push("", "queues:");
  lines.push(
    ...(status.queues.length === 0
      ? ["no work waiting"]
      : columns(
          ["queue", "queued", "active", "retrying"],
          status.queues.map((q) => [
            q.name,
            String(q.queued),
            String(q.active),
            String(q.retrying),
          ]),
        )
    ).map(indent),
  );
  lines.push(
    "",
    `failed work: ${status.failedWork}${status.failedWork > 0 ? " (annal failed-work list)" : ""}`,
  );
  const access = status.access;
  lines.push(
    `access: ${
      access === null
        ? "no Access Configuration is active (ANNAL_ACCESS_NOT_ACTIVE)"
        : `version ${access.version}, activated by ${access.activatedBy} at ${access.activatedAt.toISOString()}`
    }`,
  );
  return lines;
}

const indent = (line: string) => `  ${line}`;
