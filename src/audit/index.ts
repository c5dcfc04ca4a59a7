export { startChainer } from "./chain/chainer.ts";
export type { Chainer, ChainerOptions } from "./chain/chainer.ts";
export { chainBatch } from "./chain/chain-batch.ts";
export { verifyChain } from "./chain/verify.ts";
export type { VerifiedChain, VerifyChainOptions } from "./chain/verify.ts";
export { readChainHead, readLinkAtOrBefore } from "./chain/rows.ts";
export type { ChainLink } from "./chain/rows.ts";
export { LogPositionUnknownError, LogTamperedError } from "./errors.ts";
export { loadSigningKey, GENERATED_KEY_FILE } from "./signing/keys.ts";
export type { PublicJwk, SigningKey } from "./signing/keys.ts";
export { publishSigningKey, publishedSigningKeys } from "./signing/published.ts";
export { signStatement } from "./signing/statement.ts";
export type { ExportStatement } from "./signing/statement.ts";
export { verifyExport } from "./signing/verify-export.ts";
export { runRetention } from "./retention/run.ts";
export type { RetentionOptions, RetentionReport } from "./retention/run.ts";
export {
  readRetentionHorizon,
  readWorkflowHorizon,
  readInstancesHorizon,
  checkNotBeforeRetention,
} from "./retention/horizon.ts";
export { BeforeRetentionError, RetentionInProgressError } from "./errors.ts";
export { eraseEntry } from "./erasure/erase.ts";
export type { EraseOptions, Erasure } from "./erasure/erase.ts";
export {
  ErasureEntryPresentError,
  ErasureEntryUnknownError,
  ErasureReasonMissingError,
} from "./errors.ts";
