/**
 * The `annal failed-work list|retry` and `annal hooks send` commands, as functions of their
 * parsed arguments (the command line is parsed in `src/cli/`). Each returns the exit status
 * and throws an `AnnalError` for the CLI to print.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { openDatabase, prepareEventStore } from "../app/index.ts";
import { loadConfig } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";
import { startJobs } from "../jobs/index.ts";
import { createLogger } from "../logger.ts";
import {
  FAILED_WORK_STATES,
  listFailedWork,
  retryFailedWork,
  type FailedWork,
  type FailedWorkState,
} from "./failed-work.ts";
import { loadHooks } from "./load.ts";
import { signDelivery, STANDARD_HEADERS } from "./signature.ts";
import type { SignatureHeaders } from "./types.ts";

/** Where a command writes (the CLI's `Output`). */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * `annal failed-work list [--state failed,retrying|all] [--limit N] [--json] [--config F]`:
 * change events whose processing failed for good, newest first, as a table or JSON lines.
 */
export async function failedWorkList(
  options: { config?: string; state?: string; limit?: string; json?: boolean },
  output: CommandOutput,
): Promise<number> {
  const states = parseStates(options.state);
  const limit = options.limit === undefined ? undefined : parseLimit(options.limit);
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    const items = await listFailedWork(database.pool, { states, limit });
    if (options.json) {
      for (const item of items) output.out(JSON.stringify(item));
    } else if (items.length === 0) {
      output.out("no failed work");
    } else {
      for (const line of table(items)) output.out(line);
    }
  } finally {
    await database.close();
  }
  return 0;
}

/**
 * `annal failed-work retry <id> [--config F]`: records the retry and queues the change event
 * for processing again, with its provider's retry settings (hooks files are read for them;
 * their secrets are not needed).
 */
export async function failedWorkRetry(
  id: string,
  options: { config?: string },
  output: CommandOutput,
): Promise<number> {
  const config = await loadConfig({ configPath: options.config, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const registry = await loadHooks({ dir: config.hooks?.dir, secrets: false });
  const database = await openDatabase(config, log);
  try {
    const store = await prepareEventStore(database.pool, log);
    // Only to queue the job: no maintenance, no schedules in a command that ends at once.
    const jobs = await startJobs({ pool: database.pool, log, supervise: false, schedule: false });
    try {
      const result = await retryFailedWork({ store, jobs, registry }, id, {
        requestedBy: `cli:${process.env.USER ?? "unknown"}`,
      });
      output.out(
        result.queued
          ? `queued ${id} for processing again`
          : `a retry of ${id} was already queued; nothing new queued`,
      );
    } finally {
      await jobs.stop();
    }
  } finally {
    await database.close();
  }
  return 0;
}

export interface HooksSendOptions {
  /** annal's base URL. Default `http://127.0.0.1:4173`. */
  readonly url?: string;
  readonly hook: string;
  readonly webhook: string;
  /** The shared secret (read it from the environment, never from the command line). */
  readonly secret: string | undefined;
  /** The JSON body, sent byte for byte as given; or `bodyFile`. */
  readonly body?: string;
  readonly bodyFile?: string;
  /** The delivery id; default a new uuid. */
  readonly id?: string;
  /** Seconds since 1970; default now. */
  readonly timestamp?: number;
  /** The webhook's header names, when it does not use Standard Webhooks' defaults. */
  readonly headers?: SignatureHeaders;
}

/**
 * `annal hooks send <hook>/<webhook> (--body <json> | --body-file <f>) [--url U]
 * [--secret-env NAME]`: signs the body as the webhook expects and posts it, printing the
 * status and the answer.
 *
 * @throws AnnalError `ANNAL_WEBHOOK_SECRET_MISSING` without a secret,
 *   `ANNAL_WEBHOOK_REJECTED` when annal answers other than 2xx, `ANNAL_WEBHOOK_UNREACHABLE`.
 */
export async function hooksSend(options: HooksSendOptions, output: CommandOutput): Promise<number> {
  if (options.secret === undefined || options.secret === "") {
    throw new AnnalError("ANNAL_WEBHOOK_SECRET_MISSING", "no webhook secret to sign with", {
      hint: "put the secret in an environment variable (WEBHOOK_SECRET, or the one --secret-env names)",
    });
  }
  const body =
    options.body ??
    (options.bodyFile === undefined ? undefined : await readBodyFile(options.bodyFile));
  if (body === undefined) {
    throw new AnnalError("ANNAL_USAGE", "nothing to send", {
      hint: "give --body <json> or --body-file <path>",
    });
  }
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const names = { ...STANDARD_HEADERS, ...options.headers };
  const target = new URL(
    `/-hooks/${encodeURIComponent(options.hook)}/${encodeURIComponent(options.webhook)}`,
    options.url ?? "http://127.0.0.1:4173",
  );
  let response: Response;
  try {
    response = await fetch(target, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [names.id]: id,
        [names.timestamp]: String(timestamp),
        [names.signature]: signDelivery(options.secret, id, timestamp, body),
      },
      body,
    });
  } catch (error) {
    throw new AnnalError(
      "ANNAL_WEBHOOK_UNREACHABLE",
      `could not reach ${target.origin}: ${(error as Error).message}`,
      {
        hint: "is annal running? start it with npm start, or pass --url",
        cause: error,
      },
    );
  }
  const answer = await response.text();
  output.out(`${response.status} ${answer}`);
  if (!response.ok) {
    throw new AnnalError(
      "ANNAL_WEBHOOK_REJECTED",
      `the webhook answered ${response.status} ${answer}`,
      {
        hint: hintFor(response.status),
      },
    );
  }
  return 0;
}

function hintFor(status: number): string | undefined {
  switch (status) {
    case 401:
    case 403:
      return "check the secret, and that this machine's clock is right";
    case 404:
      return "check the hook and webhook names: /-hooks/<hook>/<webhook>";
    case 400:
      return "the body does not match the webhook's schema; annal's log says where";
    case 409:
      return "this source and eventId were accepted before with other content; use a new eventId";
    default:
      return undefined;
  }
}

function parseStates(value: string | undefined): readonly FailedWorkState[] | undefined {
  if (value === undefined) return undefined;
  if (value === "all") return FAILED_WORK_STATES;
  const states = value.split(",");
  if (!states.every((s) => (FAILED_WORK_STATES as readonly string[]).includes(s))) {
    throw new AnnalError(
      "ANNAL_USAGE",
      `--state ${value}: expected failed, retrying, resolved (comma-separated) or all`,
    );
  }
  return states as FailedWorkState[];
}

function parseLimit(value: string): number {
  const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= 1000)) {
    throw new AnnalError("ANNAL_USAGE", `--limit ${value}: expected a whole number from 1 to 1000`);
  }
  return limit;
}

function table(items: readonly FailedWork[]): string[] {
  const rows = items.map((item) => [
    item.id,
    item.state,
    `${item.hook}/${item.webhook}`,
    `${item.source}/${item.eventId}`,
    String(item.attempts),
    item.failedAt.toISOString(),
    `${item.lastError.code ? `${item.lastError.code}: ` : ""}${item.lastError.message}`.slice(
      0,
      120,
    ),
  ]);
  const header = ["id", "state", "webhook", "event", "attempts", "failed at", "last error"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return [line(header), ...rows.map(line)];
}

/** `--body-file`'s content; a file that cannot be read is said so, with its path. */
async function readBodyFile(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "there is no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : `it cannot be read (${code ?? "error"})`;
    throw new AnnalError("ANNAL_FILE_UNREADABLE", `cannot read --body-file ${file}: ${why}`, {
      hint: "give the path of a file holding the JSON body, or the body itself with --body",
    });
  }
}
