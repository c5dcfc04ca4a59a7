/**
 * The demo organisation (about 300 people in four departments, groups, photos, a service
 * account) and the directory `npm start` serves it from. The demo's configuration, gateway
 * schema and hooks stay in `ops/demo/`: they are what a deployment would write itself.
 */
export { startDemoDirectory, type DemoDirectory } from "./directory.ts";
export {
  DEMO_PERSON_PASSWORD,
  sampleEntries,
  DIRECTOR_DN,
  sampleLdif,
  type SampleDataOptions,
} from "./sample-data.ts";
export {
  startDemoIdentityProvider,
  type DemoIdentityProvider,
  type DemoIdentityProviderOptions,
} from "./identity-provider.ts";
export {
  recentDemoMail,
  sendingToCatcher,
  startDemoMailCatcher,
  type DemoMail,
  type DemoMailCatcher,
} from "./mail-catcher.ts";
export { seedDemoHistory } from "./history.ts";
export {
  DEMO_REVIEW,
  type CampaignPlan,
  type EnactedRevocation,
  type EnactReviews,
  type PastHistoryFeed,
  type PlannedDecision,
} from "./reviews.ts";
export {
  ACCESS_REQUEST,
  type EnactPast,
  type EnactedWrite,
  type PlannedAnswer,
  type RequestPlan,
} from "./requests.ts";
