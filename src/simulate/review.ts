import { readFile } from "node:fs/promises";
import { parse as parseToml } from "smol-toml";
import type { ReviewItem } from "../events/index.ts";
import type { Queryable } from "../db/index.ts";
import { reviewsSection } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";
import { reviewItemsAt, type ReviewDefinition } from "../reviews/index.ts";

/** What a campaign would have had at a past moment. */
export interface ReviewSimulation {
  readonly review: string;
  readonly at: string;
  readonly items: readonly ReviewItem[];
  readonly unreviewable: readonly { readonly group: string; readonly member: string }[];
  /** Items by reviewer: how much each would have had to decide. */
  readonly byReviewer: Readonly<Record<string, number>>;
}

/**
 * The items a campaign of `definition` would have produced at `at`, and who would have reviewed
 * them, from the history as it was then (`reviewItemsAt`: the groups and people of
 * `entry_versions` at that moment, each membership's beginning and the last decision before it).
 * Reads only.
 */
export async function simulateReview(
  db: Queryable,
  definition: ReviewDefinition,
  at: Date,
): Promise<ReviewSimulation> {
  const { items, unreviewable } = await reviewItemsAt(db, definition, at);
  const byReviewer: Record<string, number> = {};
  for (const item of items) {
    for (const reviewer of item.reviewers) byReviewer[reviewer] = (byReviewer[reviewer] ?? 0) + 1;
  }
  return { review: definition.name, at: at.toISOString(), items, unreviewable, byReviewer };
}

/**
 * The first `[[reviews]]` table of a TOML file (a draft, not yet in annal.toml), checked as
 * annal.toml's are.
 *
 * @throws AnnalError `ANNAL_SIMULATE_FILE_INVALID` naming what is wrong.
 */
export async function loadReviewFile(file: string): Promise<ReviewDefinition> {
  const invalid = (message: string) =>
    new AnnalError("ANNAL_SIMULATE_FILE_INVALID", `${file}: ${message}`);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw invalid(`it cannot be read (${(error as Error).message})`);
  }
  let table: Record<string, unknown>;
  try {
    table = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw invalid(`it is not TOML: ${(error as Error).message}`);
  }
  const parsed = reviewsSection().safeParse(table.reviews);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`reviews.${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`);
  }
  const first = parsed.data[0];
  if (!first) throw invalid("it has no [[reviews]] table");
  return first;
}

/** The simulation as lines for a terminal. */
export function reviewSimulationLines(simulation: ReviewSimulation): string[] {
  const lines = [
    `review ${simulation.review} at ${simulation.at}: ${simulation.items.length} items`,
  ];
  for (const item of simulation.items) {
    const by = item.began.by ? ` by ${item.began.by}` : "";
    lines.push(
      `  ${item.memberDn} in ${item.groupDn} since ${item.since} (${item.began.kind}${by}); reviewed by ${item.reviewers.join(", ")}`,
    );
  }
  for (const [reviewer, count] of Object.entries(simulation.byReviewer)) {
    lines.push(`reviewer ${reviewer}: ${count} items`);
  }
  for (const missing of simulation.unreviewable) {
    lines.push(`no reviewer for ${missing.member} in ${missing.group}`);
  }
  return lines;
}
