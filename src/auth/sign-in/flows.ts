import { createHash } from "node:crypto";
import type { Pool } from "../../db/index.ts";
import { AnnalError } from "../../errors/index.ts";

/** How long a browser may take at the provider before its sign-in is forgotten. */
const FLOW_LIFETIME = "10 minutes";

const digestOf = (state: string) => createHash("sha256").update(state).digest();

/**
 * Keeps what an OpenID sign-in needs until the provider sends the browser back: the PKCE
 * verifier, the nonce and where to go afterwards, under the state's digest. Old flows are
 * swept on the way.
 */
export async function saveFlow(
  pool: Pool,
  flow: { state: string; codeVerifier: string; nonce: string; returnTo: string },
): Promise<void> {
  await pool.query(
    `WITH swept AS (DELETE FROM sign_in_flows WHERE created_at < now() - $5::interval)
     INSERT INTO sign_in_flows (state_digest, code_verifier, nonce, return_to) VALUES ($1, $2, $3, $4)`,
    [digestOf(flow.state), flow.codeVerifier, flow.nonce, flow.returnTo, FLOW_LIFETIME],
  );
}

/**
 * Takes the flow of `state`, once: a second callback with the same state (a replay), an
 * unknown state (a forgery) or an expired one is `ANNAL_SIGN_IN_STATE_INVALID`.
 */
export async function takeFlow(
  pool: Pool,
  state: string | undefined,
): Promise<{ state: string; codeVerifier: string; nonce: string; returnTo: string }> {
  const invalid = () =>
    new AnnalError(
      "ANNAL_SIGN_IN_STATE_INVALID",
      "this sign-in is unknown, already finished or expired",
    );
  if (state === undefined || state.length === 0 || state.length > 512) throw invalid();
  const row = (
    await pool.query<{ code_verifier: string; nonce: string; return_to: string }>(
      `DELETE FROM sign_in_flows WHERE state_digest = $1 AND created_at >= now() - $2::interval
       RETURNING code_verifier, nonce, return_to`,
      [digestOf(state), FLOW_LIFETIME],
    )
  ).rows[0];
  if (row === undefined) throw invalid();
  return { state, codeVerifier: row.code_verifier, nonce: row.nonce, returnTo: row.return_to };
}
