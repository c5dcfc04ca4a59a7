import { GraphQLError } from "graphql";
import type { DirectoryClient } from "../directory/index.ts";
import { GRAPHQL_CODES } from "./errors.ts";

/**
 * The directory as one request sees it: every entry a search or a lookup returns counts
 * against `maxEntries`, and the read that would pass it fails with
 * `GRAPHQL_ENTRY_LIMIT_EXCEEDED` (on its field; the rest of the answer stands). The cost
 * limit refuses what it can foresee; this bounds what it cannot (a list's real size).
 */
export function entryBudget(
  directory: DirectoryClient,
  maxEntries: number,
  /** What the request has read so far, shared by the directories it reads (directory, projection). */
  spent: { read: number } = { read: 0 },
): DirectoryClient {
  const spend = (count: number) => {
    spent.read += count;
    if (spent.read > maxEntries) {
      throw new GraphQLError(
        `this request read more than ${maxEntries} directory entries, the limit of one request`,
        { extensions: { code: GRAPHQL_CODES.entryLimit, limit: maxEntries } },
      );
    }
  };
  return new Proxy(directory, {
    get(target, property, receiver) {
      if (property === "search") {
        return async function* (...args: Parameters<DirectoryClient["search"]>) {
          for await (const page of target.search(...args)) {
            spend(page.length);
            yield page;
          }
        };
      }
      if (property === "get") {
        return async (...args: Parameters<DirectoryClient["get"]>) => {
          const entry = await target.get(...args);
          if (entry !== undefined) spend(1);
          return entry;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as Function).bind(target) : value; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    },
  });
}
