import { loadSigningKey, publishSigningKey, type SigningKey } from "../audit/index.ts";
import type { ReviewsContext } from "./context.ts";
import type { GraphqlPluginOptions } from "./options.ts";

const contexts = new WeakMap<GraphqlPluginOptions, ReviewsContext>();

/**
 * The access review operations' context, one per plugin: the configured `[[reviews]]` and the
 * export signing key, loaded (and published at `/api/keys`) on the first report asked for.
 */
export function reviewsContext(options: GraphqlPluginOptions): ReviewsContext {
  let made = contexts.get(options);
  if (made) return made;
  const { config, pool } = options;
  let key: Promise<SigningKey> | undefined;
  made = {
    definitions: config.reviews,
    signingKey: () =>
      (key ??= loadSigningKey({ pem: config.audit.signingKey, dataDir: config.database.dataDir })
        .then(async (loaded) => {
          await publishSigningKey(pool, loaded);
          return loaded;
        })
        .catch((error: unknown) => {
          key = undefined;
          throw error;
        })),
  };
  contexts.set(options, made);
  return made;
}
