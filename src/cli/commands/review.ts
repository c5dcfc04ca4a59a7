/**
 * `annal review start <name>`, `annal review list [<name>]`, `annal review report <id> --out
 * <file>`: access review campaigns from the command line (docs/access-reviews.md).
 */
import { writeFile } from "node:fs/promises";
import { openDatabase, prepareEventStore } from "../../app/index.ts";
import { loadSigningKey, publishSigningKey } from "../../audit/index.ts";
import { loadConfig, type AnnalConfig } from "../../config/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { startJobs } from "../../jobs/index.ts";
import { createLogger } from "../../logger.ts";
import {
  campaignReport,
  prepareReviewItemDefinition,
  readCampaigns,
  readProgress,
  startCampaign,
  type ReviewDefinition,
} from "../../reviews/index.ts";
import { calendarsOf } from "../../time/index.ts";
import { databaseClock, deployDefinitions, type Actor } from "../../workflow/index.ts";
import type { CommandModule } from "../command.ts";
import type { Output } from "../output.ts";
import { REVIEW_LIST, REVIEW_REPORT, REVIEW_START } from "../registry.ts";
import { columns } from "../table.ts";
import { parseCommandLine, UsageError } from "../usage.ts";

/** The `[[reviews]]` table named `name`, or `ANNAL_REVIEW_NOT_CONFIGURED` naming those there are. */
export function reviewNamed(config: AnnalConfig, name: string): ReviewDefinition {
  const found = config.reviews.find((review) => review.name === name);
  if (found) return found;
  const names = config.reviews.map((review) => review.name);
  throw new AnnalError("ANNAL_REVIEW_NOT_CONFIGURED", `no [[reviews]] table is named ${name}`, {
    hint:
      names.length > 0
        ? `the reviews configured: ${names.join(", ")}`
        : "add a [[reviews]] table to annal.toml (docs/access-reviews.md)",
  });
}

/** Who starts a campaign from the command line: the operator at the terminal. */
function cliActor(): Actor {
  const user = process.env.USER ?? "unknown";
  return { accountId: `cli:${user}`, name: `cli:${user}`, dn: null, principals: [], access: [] };
}

async function reviewStart(
  configPath: string | undefined,
  name: string,
  json: boolean,
  output: Output,
) {
  const config = await loadConfig({ configPath, argv: [] });
  const definition = reviewNamed(config, name);
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    const store = await prepareEventStore(database.pool, log);
    // Only to queue the items' wake-ups: the running annal's engine advances them.
    const jobs = await startJobs({ pool: database.pool, log, supervise: false, schedule: false });
    try {
      const definitions = await deployDefinitions({
        pool: database.pool,
        store,
        prepared: [await prepareReviewItemDefinition()],
        log,
      });
      const started = await startCampaign(
        {
          pool: database.pool,
          store,
          jobs,
          definitions,
          bindings: { pool: database.pool, log },
          log,
          ...(config.calendars.length > 0 ? { calendars: calendarsOf(config.calendars) } : {}),
        },
        definition,
        { as: cliActor() },
      );
      if (json) {
        const { campaignId, deadline, items, unreviewable } = started;
        output.out(JSON.stringify({ campaignId, deadline, items, unreviewable }, null, 2));
      } else {
        output.out(`started campaign ${started.campaignId} of review ${name}`);
        output.out(`items: ${started.items}, deadline: ${started.deadline}`);
        for (const missing of started.unreviewable) {
          output.out(`no reviewer for ${missing.member} in ${missing.group}: not an item`);
        }
      }
    } finally {
      await jobs.stop();
    }
  } finally {
    await database.close();
  }
  return 0;
}

async function reviewList(
  configPath: string | undefined,
  name: string | undefined,
  json: boolean,
  output: Output,
) {
  const config = await loadConfig({ configPath, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    const now = await databaseClock(database.pool);
    const campaigns = await readCampaigns(
      database.pool,
      name === undefined ? {} : { review: name },
    );
    const rows = [];
    for (const campaign of campaigns) {
      rows.push({
        campaign,
        progress: await readProgress(database.pool, campaign.campaign_id, now),
      });
    }
    if (json) {
      output.out(JSON.stringify(rows, null, 2));
      return 0;
    }
    if (rows.length === 0) {
      output.out("no campaigns");
      return 0;
    }
    for (const line of columns(
      [
        "campaign",
        "review",
        "started",
        "deadline",
        "items",
        "open",
        "overdue",
        "decided",
        "undecided",
      ],
      rows.map(({ campaign, progress }) => [
        campaign.campaign_id,
        campaign.review,
        campaign.started_at.toISOString(),
        campaign.deadline.toISOString(),
        String(progress.total),
        String(progress.open),
        String(progress.overdue),
        String(progress.decided),
        String(progress.undecided),
      ]),
    ))
      output.out(line);
  } finally {
    await database.close();
  }
  return 0;
}

async function reviewReport(
  configPath: string | undefined,
  campaignId: string,
  out: string | undefined,
  output: Output,
) {
  if (out === undefined) throw new UsageError("--out <file> is needed: the report's file");
  const config = await loadConfig({ configPath, argv: [] });
  const log = createLogger("warn", { destination: process.stderr });
  const database = await openDatabase(config, log);
  try {
    await prepareEventStore(database.pool, log);
    const key = await loadSigningKey({
      pem: config.audit.signingKey,
      dataDir: config.database.dataDir,
    });
    await publishSigningKey(database.pool, key);
    const report = await campaignReport(database.pool, campaignId, key);
    await writeFile(out, report.body);
    await writeFile(`${out}.sig`, `${report.signature}\n`);
    output.out(`report written to ${out}, its signature to ${out}.sig`);
  } finally {
    await database.close();
  }
  return 0;
}

export const command: CommandModule = {
  async run(args, output) {
    const [sub, ...rest] = args;
    if (sub === "start") {
      const { values, positionals } = parseCommandLine(rest, REVIEW_START);
      return reviewStart(values.config, positionals[0]!, values.json === true, output);
    }
    if (sub === "list") {
      const { values, positionals } = parseCommandLine(rest, REVIEW_LIST);
      return reviewList(values.config, positionals[0], values.json === true, output);
    }
    if (sub === "report") {
      const { values, positionals } = parseCommandLine(rest, REVIEW_REPORT);
      return reviewReport(values.config, positionals[0]!, values.out, output);
    }
    throw new UsageError("annal review start <name> | list [<name>] | report <id> --out <file>");
  },
};
