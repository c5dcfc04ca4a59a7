/**
 * Delegation: a person's dialogs answered by another account for a period. Grants and early
 * ends are events on the delegator's stream; answering and the inbox read them (`read.ts`).
 */
export { endDelegation, grantDelegation } from "./commands.ts";
export {
  assigneeKeysAt,
  delegationState,
  delegationsInForce,
  delegationsInForceNow,
  delegatorAmong,
  inForce,
  readDelegations,
  type Delegation,
  type DelegationState,
} from "./read.ts";
