import { DEMO_PERSON_PASSWORD, sampleEntries } from "../../demo/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { signInThroughPage } from "../../starter/index.ts";

/**
 * The headers that make a request as demo person `login`, signed in through annal's sign-in
 * page (its OpenID provider's form) with the demo's password.
 *
 * @throws AnnalError `ANNAL_UNKNOWN_FIXTURE_ACCOUNT` when the demo directory has no such
 *   person; `ANNAL_LOGIN_FAILED` when the sign-in does not end with a session.
 */
export async function signInAs(url: string, login: string): Promise<Record<string, string>> {
  const people = sampleEntries()
    .map((entry) => entry.attributes.uid?.[0])
    .filter((uid): uid is string => typeof uid === "string");
  if (!people.includes(login)) {
    throw new AnnalError(
      "ANNAL_UNKNOWN_FIXTURE_ACCOUNT",
      `the demo directory has no person with login ${login}`,
      { hint: `name a demo person by login (uid), such as ${people.slice(0, 3).join(", ")}` },
    );
  }
  const { cookie } = await signInThroughPage(url, login, DEMO_PERSON_PASSWORD);
  // annal's own client, as its web application is: a change made with the session cookie
  // names annal's origin.
  return { cookie, origin: new URL(url).origin };
}
