import { AnnalError } from "../errors/index.ts";

/** How a simulation answers dialogs. */
export type DialogPolicy = "approve" | "deny" | "as-answered";
/** What `as-answered` does with a dialog the deployed version had no answer to. */
export type DialogFallback = "approve" | "deny" | "unanswered";

export const DIALOG_POLICIES: readonly DialogPolicy[] = ["approve", "deny", "as-answered"];
export const DIALOG_FALLBACKS: readonly DialogFallback[] = ["approve", "deny", "unanswered"];

/**
 * `--dialogs` and `--fallback`: defaults `as-answered` and `unanswered` (a dialog nobody
 * answered then is left to its deadline and escalation chain, as it would have been).
 *
 * @throws AnnalError `ANNAL_SIMULATE_POLICY_INVALID` for any other word.
 */
export function readPolicy(
  dialogs: string | undefined,
  fallback: string | undefined,
): { dialogs: DialogPolicy; fallback: DialogFallback } {
  const chosen = dialogs ?? "as-answered";
  const otherwise = fallback ?? "unanswered";
  if (!DIALOG_POLICIES.includes(chosen as DialogPolicy)) {
    throw new AnnalError(
      "ANNAL_SIMULATE_POLICY_INVALID",
      `--dialogs ${chosen}: dialogs are answered ${DIALOG_POLICIES.join(", ")}`,
    );
  }
  if (!DIALOG_FALLBACKS.includes(otherwise as DialogFallback)) {
    throw new AnnalError(
      "ANNAL_SIMULATE_POLICY_INVALID",
      `--fallback ${otherwise}: the fallback is ${DIALOG_FALLBACKS.join(", ")}`,
    );
  }
  return { dialogs: chosen as DialogPolicy, fallback: otherwise as DialogFallback };
}

/**
 * The answer `approve` or `deny` gives a dialog: every boolean of its form true (approve) or
 * false (deny), and nothing else; a form without one is answered `{ approved: <bool> }`.
 */
export function policyAnswer(form: unknown, approve: boolean): Record<string, unknown> {
  const properties = (form as { properties?: Record<string, { type?: unknown }> } | null)
    ?.properties;
  const booleans = Object.entries(properties ?? {}).filter(([, p]) => p?.type === "boolean");
  if (booleans.length === 0) return { approved: approve };
  return Object.fromEntries(booleans.map(([name]) => [name, approve]));
}
