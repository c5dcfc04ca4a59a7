/**
 * The demo directory as the demo's workflows read and change it: people under ou=people (one
 * level per department), groups of names with an `owner`, departments whose `seeAlso` lists
 * their default groups. Each function takes the directory a step is given
 * (`bindings.directory`), so whatever it writes is made as the account the step acts for and
 * is captured with the step as its cause.
 *
 * Every write checks first and changes only what is not so already: a step runs at least once
 * (a crash between the write and its record runs it again), so running it twice must do no
 * harm.
 */
import { NonRetryableError, type WorkflowDirectory } from "annal";

type Entry = NonNullable<Awaited<ReturnType<WorkflowDirectory["get"]>>>;
type Filter = NonNullable<NonNullable<Parameters<WorkflowDirectory["search"]>[1]>["filter"]>;

/** The operators of the demo (`operator` in ops/demo/annal.toml): they take what no owner decides. */
export const OPERATORS = "cn=annal-operators,ou=roles,dc=example,dc=org";

/** An attribute filter, as annal's directory takes it: values are never spliced into text. */
const eq = (attribute: string, value: string): Filter => ({ op: "eq", attribute, value });
const and = (...filters: Filter[]): Filter => ({ op: "and", filters });

/** An attribute's values as text, whatever case the server named it in. */
export function values(entry: Entry, attribute: string): string[] {
  const name = Object.keys(entry.attributes).find(
    (key) => key.toLowerCase() === attribute.toLowerCase(),
  );
  return name === undefined ? [] : entry.attributes[name]!.map(String);
}

/** DNs compared as the directory compares them (the demo's DNs differ in case at most). */
export const sameDN = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

async function searchAll(
  directory: WorkflowDirectory,
  base: string,
  filter: Filter,
  attributes: string[],
  sizeLimit?: number,
): Promise<Entry[]> {
  const found: Entry[] = [];
  for await (const page of directory.search(base, {
    filter,
    attributes,
    ...(sizeLimit === undefined ? {} : { sizeLimit }),
  })) {
    found.push(...page);
  }
  return found;
}

/** The one entry `filter` finds below `base`; undefined for none, NonRetryableError for more. */
async function findOne(
  directory: WorkflowDirectory,
  base: string,
  filter: Filter,
  attributes: string[],
  what: string,
): Promise<Entry | undefined> {
  const found = await searchAll(directory, base, filter, attributes, 2);
  if (found.length > 1) throw new NonRetryableError(`more than one ${what}`);
  return found[0];
}

/** The person whose uid is `uid`, anywhere under ou=people. */
export function findPerson(
  directory: WorkflowDirectory,
  uid: string,
  attributes: string[] = ["uid", "cn", "mail", "employeeType"],
): Promise<Entry | undefined> {
  return findOne(
    directory,
    `ou=people,${directory.base}`,
    and(eq("objectClass", "inetOrgPerson"), eq("uid", uid)),
    attributes,
    `person with uid ${uid}`,
  );
}

/** A group of names by its DN or by its cn (searched in the whole directory). */
export async function findGroup(
  directory: WorkflowDirectory,
  group: string,
): Promise<Entry | undefined> {
  const attributes = ["cn", "owner", "member"];
  if (group.includes("=")) {
    const entry = await directory.get(group, { attributes: ["objectClass", ...attributes] });
    const isGroup = entry && values(entry, "objectClass").some((c) => /^groupOfNames$/i.test(c));
    return isGroup ? entry : undefined;
  }
  return findOne(
    directory,
    directory.base,
    and(eq("objectClass", "groupOfNames"), eq("cn", group)),
    attributes,
    `group named ${group}`,
  );
}

/** The groups `member` is a member of (DNs). */
export async function groupsOf(directory: WorkflowDirectory, member: string): Promise<string[]> {
  const groups = await searchAll(
    directory,
    directory.base,
    and(eq("objectClass", "groupOfNames"), eq("member", member)),
    ["cn"],
  );
  return groups.map((group) => group.dn);
}

/**
 * Takes `person` out of every group that names them, as a member or an owner: what deleting
 * their entry must not leave behind (a DN naming nothing).
 */
export async function forgetEverywhere(
  directory: WorkflowDirectory,
  person: string,
): Promise<void> {
  for (const group of await groupsOf(directory, person)) {
    await removeMember(directory, group, person);
  }
  const owned = await searchAll(
    directory,
    directory.base,
    and(eq("objectClass", "groupOfNames"), eq("owner", person)),
    ["owner"],
  );
  for (const group of owned) {
    const mine = values(group, "owner").filter((dn) => sameDN(dn, person));
    await directory.modify(group.dn, [{ operation: "delete", attribute: "owner", values: mine }]);
  }
}

/** Adds `member` to `group`; true when this call added it. */
export async function addMember(
  directory: WorkflowDirectory,
  group: string,
  member: string,
): Promise<boolean> {
  const entry = await directory.get(group, { attributes: ["member"] });
  if (!entry) throw new NonRetryableError(`the group ${group} is gone`);
  if (values(entry, "member").some((dn) => sameDN(dn, member))) return false;
  await directory.modify(group, [{ operation: "add", attribute: "member", values: member }]);
  return true;
}

/**
 * Takes `member` out of `group`; true when this call took it out. A group of names must keep
 * one member (its schema says so): the demo's groups then hold annal's own account, as the
 * demo data does for a group nobody is in.
 */
export async function removeMember(
  directory: WorkflowDirectory,
  group: string,
  member: string,
): Promise<boolean> {
  const entry = await directory.get(group, { attributes: ["member"] });
  const members = entry ? values(entry, "member") : [];
  const present = members.find((dn) => sameDN(dn, member));
  if (!present) return false;
  await directory.modify(
    group,
    members.length > 1
      ? [{ operation: "delete", attribute: "member", values: present }]
      : [
          {
            operation: "replace",
            attribute: "member",
            values: `uid=svc-annal,ou=services,${directory.base}`,
          },
        ],
  );
  return true;
}
