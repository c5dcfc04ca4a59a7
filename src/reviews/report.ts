import { createHash } from "node:crypto";
import { readLinkAtOrBefore, signStatement, type SigningKey } from "../audit/index.ts";
import type { Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { readCheckpoint, schemaNames } from "../projector/index.ts";
import { START } from "../store/index.ts";
import { REVIEWS_PROJECTION } from "../../projections/reviews/index.ts";
import { readCampaign, readItems, readProgress } from "./read.ts";

export interface SignedReport {
  /** The report: JSON, UTF-8; write these bytes as they are to keep the signature valid. */
  readonly body: string;
  /** Its `Annal-Signature` value (docs/signed-exports.md): `annal verify-export` checks it. */
  readonly signature: string;
}

/**
 * A campaign's report as a signed export: the campaign, its progress, and every item with its
 * history, its decision, who decided (and for whom, through a delegation), when, the log
 * position of the decision and of the directory change its revocation caused. Read in one
 * REPEATABLE READ snapshot at the reviews projection's checkpoint, which the statement names
 * with the hash chain's link there, so `annal log verify` vouches for the events it is made of.
 *
 * @throws AnnalError `ANNAL_REVIEW_NOT_FOUND` for an unknown campaign.
 */
export async function campaignReport(
  pool: Pool,
  campaignId: string,
  key: SigningKey,
): Promise<SignedReport> {
  const connection = await pool.connect();
  try {
    await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const checkpoint = await readCheckpoint(connection, schemaNames(REVIEWS_PROJECTION).live);
    const at = checkpoint ?? START;
    const link = await readLinkAtOrBefore(connection, at);
    const campaign = await readCampaign(connection, campaignId);
    if (!campaign) {
      throw new AnnalError("ANNAL_REVIEW_NOT_FOUND", `no review campaign ${campaignId}`);
    }
    const now = (await connection.query<{ now: Date }>("SELECT annal_now() AS now")).rows[0]!.now;
    const progress = await readProgress(connection, campaignId, now);
    const items = await readItems(connection, campaignId, now);
    await connection.query("COMMIT");
    const body = `${JSON.stringify(
      {
        campaign: {
          id: campaign.campaign_id,
          review: campaign.review,
          title: campaign.title,
          startedAt: campaign.started_at.toISOString(),
          startedBy: campaign.started_by,
          deadline: campaign.deadline.toISOString(),
          definition: campaign.definition,
          unreviewable: campaign.unreviewable,
          position: Number(campaign.position),
        },
        reportedAt: now.toISOString(),
        logPosition: at.position,
        progress,
        items: items.map((item) => ({
          id: item.item_id,
          kind: item.kind,
          group: item.group_dn,
          member: item.member_dn,
          accessFunction: item.access_function,
          since: item.since.toISOString(),
          began: item.began,
          lastReview: item.last_review,
          reviewers: item.reviewers,
          state: item.state,
          overdue: item.overdue,
          escalated: item.escalation_level !== null,
          decision: item.decision,
          reason: item.reason,
          decidedBy: item.decided_by,
          decidedFor: item.decided_for,
          decidedAt: item.decided_at?.toISOString() ?? null,
          decisionPosition: item.decision_position === null ? null : Number(item.decision_position),
          revocation: item.revocation,
          directoryChange:
            item.change_position === null
              ? null
              : {
                  position: Number(item.change_position),
                  at: item.change_at?.toISOString() ?? null,
                },
        })),
      },
      null,
      2,
    )}\n`;
    const bytes = Buffer.from(body, "utf8");
    const signature = signStatement(
      {
        alg: "Ed25519",
        kid: key.kid,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        bytes: bytes.length,
        logPosition: { position: at.position, transaction: at.transactionId },
        chainHead: link ? { position: link.at.position, hash: link.hash.toString("hex") } : null,
        signedAt: now.toISOString(),
      },
      key,
    );
    return { body, signature };
  } catch (error) {
    await connection.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    connection.release();
  }
}
