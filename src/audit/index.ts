export { startChainer } from "./chain/chainer.ts";
export type { Chainer, ChainerOptions } from "./chain/chainer.ts";
export { chainBatch } from "./chain/chain-batch.ts";
export { verifyChain } from "./chain/verify.ts";
export type { VerifiedChain, VerifyChainOptions } from "./chain/verify.ts";
export { readChainHead, readLinkAtOrBefore } from "./chain/rows.ts";
export type { ChainLink } from "./chain/rows.ts";
export { LogPositionUnknownError, LogTamperedError } from "./errors.ts";
