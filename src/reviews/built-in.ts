import { REVIEW_ITEM_WORKFLOW } from "../events/index.ts";
import { codeFile } from "../package-root.ts";
import {
  bundleDefinition,
  definitionOf,
  loadBundle,
  type PreparedDefinition,
} from "../workflow/index.ts";

/**
 * annal's own definition of a review item (`item-workflow.ts`), bundled and loaded as a
 * definition file is: deployed beside the `[workflows] dir` files wherever `[[reviews]]` are
 * configured, so a campaign's items run on the engine like any instance.
 */
export async function prepareReviewItemDefinition(): Promise<PreparedDefinition> {
  const file = codeFile("reviews/item-workflow.ts");
  const bundle = await bundleDefinition(file);
  const definition = definitionOf(await loadBundle(bundle.code), REVIEW_ITEM_WORKFLOW);
  return { file: `annal:${REVIEW_ITEM_WORKFLOW}`, bundle, definition };
}
