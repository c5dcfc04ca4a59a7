import { createHash } from "node:crypto";
import {
  type LdifEntry,
  SLAPD_BASE,
  SLAPD_SERVICE_DN,
  sshaPassword,
  toLdif,
} from "../slapd/index.ts";
import { flatColourJpeg } from "./jpeg.ts";

/**
 * The demo organisation: people in four departments under `ou=people`, groups under
 * `ou=groups`, annal's service account under `ou=services`. Deterministic: the same options
 * give the same LDIF byte for byte (a seeded PRNG, fixed salts, no clock).
 *
 * What the demo's workflows (ops/demo/workflows) read from it:
 * - a group's `owner`: who decides an access request to it (department groups belong to the
 *   department's head, e.g. Priya Rossi, prossi, owns engineering); the roles under `ou=roles`
 *   have none, so requests for them go to the operators;
 * - a department's `seeAlso`: its default groups, which a joiner of the department is added to;
 * - a person's `manager`: their department's head, and the heads' the managing director
 *   (Helena Brandt, hbrandt, directly under `ou=people`), whom an access request escalates to.
 */
export interface SampleDataOptions {
  /** PRNG seed; another seed gives another, equally plausible organisation. */
  readonly seed?: number;
  readonly people?: number;
  /** The service account's password (stored as `{SSHA}`). */
  readonly servicePassword?: string;
  /** Every person's password (stored as `{SSHA}`), so that anyone can sign in to the demo. */
  readonly personPassword?: string;
}

/** The password of every demo person: the README's sign-in uses it. */
export const DEMO_PERSON_PASSWORD = "demo";

const PEOPLE_BASE = `ou=people,${SLAPD_BASE}`;
const GROUPS_BASE = `ou=groups,${SLAPD_BASE}`;
/** The managing director: no department's, the department heads' manager. */
const DIRECTOR_UID = "hbrandt";
export const DIRECTOR_DN = `uid=${DIRECTOR_UID},${PEOPLE_BASE}`;
/** Groups of groups: roles held through membership of other groups (nested). */
const ROLES_BASE = `ou=roles,${SLAPD_BASE}`;

/** A fixed salt per person, so the LDIF stays the same byte for byte (and the PRNG untouched). */
const saltOf = (uid: string) =>
  createHash("sha256").update(`annal-demo:${uid}`).digest().subarray(0, 8);

/** Text in three languages, written `en~…|de~…|fr~…` in `description`. */
type Tri = readonly [en: string, de: string, fr: string];

interface Department {
  readonly ou: string;
  readonly name: string;
  readonly code: string;
  /** Share of the head count, out of 100. */
  readonly share: number;
  readonly titles: readonly Tri[];
  readonly teams: readonly Tri[];
  /** The groups (cn under ou=groups) everyone in it joins: the joiner's default groups. */
  readonly defaultGroups: readonly string[];
}

const DEPARTMENTS: readonly Department[] = [
  {
    ou: "engineering",
    name: "Engineering",
    code: "ENG",
    share: 40,
    titles: [
      ["Software Engineer", "Softwareentwicklerin", "Ingénieure logiciel"],
      ["Senior Software Engineer", "Senior-Softwareentwickler", "Ingénieur logiciel senior"],
      ["Site Reliability Engineer", "Site-Reliability-Engineer", "Ingénieur fiabilité"],
      ["QA Engineer", "Testingenieurin", "Ingénieure qualité"],
    ],
    teams: [
      ["payments platform", "Zahlungsplattform", "plateforme de paiement"],
      ["identity services", "Identitätsdienste", "services d'identité"],
      ["mobile apps", "Mobile Apps", "applications mobiles"],
      ["data pipeline", "Datenpipeline", "chaîne de données"],
    ],
    defaultGroups: ["engineering", "vpn-users"],
  },
  {
    ou: "sales",
    name: "Sales",
    code: "SAL",
    share: 25,
    titles: [
      ["Account Executive", "Kundenberater", "Chargé de clientèle"],
      ["Sales Development Representative", "Vertriebsmitarbeiterin", "Commerciale sédentaire"],
      ["Solutions Consultant", "Lösungsberater", "Consultant avant-vente"],
    ],
    teams: [
      ["DACH region", "Region DACH", "région DACH"],
      ["France and Benelux", "Frankreich und Benelux", "France et Benelux"],
      ["North America", "Nordamerika", "Amérique du Nord"],
    ],
    defaultGroups: ["sales"],
  },
  {
    ou: "finance",
    name: "Finance",
    code: "FIN",
    share: 15,
    titles: [
      ["Accountant", "Buchhalterin", "Comptable"],
      ["Financial Analyst", "Finanzanalyst", "Analyste financier"],
      ["Payroll Specialist", "Lohnbuchhalter", "Gestionnaire de paie"],
    ],
    teams: [
      ["accounts payable", "Kreditorenbuchhaltung", "comptabilité fournisseurs"],
      ["controlling", "Controlling", "contrôle de gestion"],
    ],
    defaultGroups: ["finance"],
  },
  {
    ou: "support",
    name: "Support",
    code: "SUP",
    share: 20,
    titles: [
      ["Support Engineer", "Supportingenieur", "Ingénieur support"],
      ["Customer Success Manager", "Kundenbetreuerin", "Responsable succès client"],
      ["Technical Writer", "Technische Redakteurin", "Rédactrice technique"],
    ],
    teams: [
      ["first level", "First Level", "niveau 1"],
      ["escalations", "Eskalationen", "escalades"],
    ],
    defaultGroups: ["support", "vpn-users"],
  },
];

const LEAD_TITLE: Tri = ["Head of department", "Abteilungsleitung", "Direction du département"];

const GIVEN_NAMES = [
  "Alice",
  "Bruno",
  "Chloé",
  "Dmitri",
  "Elif",
  "François",
  "Greta",
  "Hamza",
  "Inês",
  "Jürgen",
  "Kateřina",
  "Lars",
  "Mei",
  "Nikolai",
  "Olga",
  "Pedro",
  "Quentin",
  "Rania",
  "Søren",
  "Tomás",
  "Ulrike",
  "Valentina",
  "Wojciech",
  "Xavier",
  "Yuki",
  "Zoë",
  "Amara",
  "Björn",
  "Camille",
  "Diego",
  "Emma",
  "Farid",
  "Giulia",
  "Hannah",
  "Ivan",
  "Jasmin",
  "Kenji",
  "Léa",
  "Mateo",
  "Noor",
  "Oskar",
  "Priya",
  "Rafael",
  "Sophie",
  "Thabo",
  "Ümit",
  "Vera",
  "William",
  "Yasmin",
  "Łukasz",
];

const SURNAMES = [
  "Müller",
  "Martin",
  "Nowak",
  "García",
  "Rossi",
  "Schmidt",
  "Dubois",
  "Kowalski",
  "Jensen",
  "Novák",
  "Fischer",
  "Lefèvre",
  "Silva",
  "Yılmaz",
  "Johansson",
  "O'Brien",
  "Weber",
  "Moreau",
  "Tanaka",
  "Ivanova",
  "Becker",
  "Bernard",
  "Kim",
  "Andersen",
  "Costa",
  "Hoffmann",
  "Laurent",
  "Nguyen",
  "Schäfer",
  "Okafor",
  "Wagner",
  "Petit",
  "Santos",
  "Meyer",
  "Roux",
  "Chen",
  "Koch",
  "Fontaine",
  "Haddad",
  "Wójcik",
];

const SITES = [
  { city: "Berlin", phone: "+49 30 5550" },
  { city: "Paris", phone: "+33 1 5550" },
  { city: "London", phone: "+44 20 5550" },
  { city: "New York", phone: "+1 212 555" },
] as const;

/** mulberry32: tiny, fast, and good enough to make a plausible organisation. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lowercase ASCII for uids and mail: `Łukasz Wójcik` → `lwojcik`. */
function asciiFold(text: string): string {
  const special: Record<string, string> = { ł: "l", ø: "o", ß: "ss", æ: "ae", ı: "i" };
  return text
    .toLowerCase()
    .replace(/[łøßæı]/g, (c) => special[c] ?? c)
    .normalize("NFD")
    .replace(/[^a-z]/g, "");
}

function tri(text: Tri): string {
  return `en~${text[0]}|de~${text[1]}|fr~${text[2]}`;
}

export function sampleEntries(options: SampleDataOptions = {}): LdifEntry[] {
  const random = prng(options.seed ?? 20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const headCount = options.people ?? 300;
  const entries: LdifEntry[] = [];
  /** How many people have each uid's name part so far. */
  const namesTaken = new Map<string, number>();
  const membersOf = new Map<string, string[]>();
  const join = (group: string, dn: string): void => {
    const members = membersOf.get(group);
    if (members) members.push(dn);
    else membersOf.set(group, [dn]);
  };

  for (const department of DEPARTMENTS) {
    entries.push({
      dn: `ou=${department.ou},${PEOPLE_BASE}`,
      attributes: {
        objectClass: ["organizationalUnit"],
        ou: [department.ou],
        description: [
          tri([
            `The ${department.name} department`,
            `Abteilung ${department.name}`,
            `Département ${department.name}`,
          ]),
        ],
        seeAlso: department.defaultGroups.map((cn) => `cn=${cn},${GROUPS_BASE}`),
      },
    });
  }

  let employee = 0;
  /** Each department's head, by its ou: the first person made in it. */
  const heads = new Map<string, string>();
  for (const department of DEPARTMENTS) {
    const count = Math.round((headCount * department.share) / 100);
    let leadDN: string | undefined;
    for (let i = 0; i < count; i++, employee++) {
      const givenName = pick(GIVEN_NAMES);
      const sn = pick(SURNAMES);
      // The first of a name is `lwojcik`, the n-th `lwojcikn` (a name has no digits, so these
      // never meet another name's): counted, where searching for a free one grew with the
      // square of the head count (minutes at a million).
      const name = asciiFold(givenName).slice(0, 1) + asciiFold(sn);
      const before = namesTaken.get(name) ?? 0;
      namesTaken.set(name, before + 1);
      const uid = before === 0 ? name : `${name}${before + 1}`;
      const dn = `uid=${uid},ou=${department.ou},${PEOPLE_BASE}`;
      const site = pick(SITES);
      const teamIndex = Math.floor(random() * department.teams.length);
      const team = department.teams[teamIndex] as Tri;
      const title = leadDN === undefined ? LEAD_TITLE : pick(department.titles);
      const since = 2012 + Math.floor(random() * 14);
      const description: Tri = [
        `${title[0]}, ${team[0]} team, since ${since}`,
        `${title[1]}, Team ${team[1]}, seit ${since}`,
        `${title[2]}, équipe ${team[2]}, depuis ${since}`,
      ];
      const attributes: Record<string, (string | Buffer)[]> = {
        objectClass: ["inetOrgPerson"],
        uid: [uid],
        cn: [`${givenName} ${sn}`],
        sn: [sn],
        givenName: [givenName],
        displayName: [`${givenName} ${sn}`],
        mail: [`${uid}@example.org`],
        title: [title[0]],
        ou: [department.name],
        departmentNumber: [`${department.code}-${teamIndex + 1}`],
        employeeNumber: [String(10001 + employee)],
        employeeType: [random() < 0.9 ? "employee" : "contractor"],
        l: [site.city],
        telephoneNumber: [`${site.phone} ${String(1000 + Math.floor(random() * 9000))}`],
        description: [tri(description)],
        preferredLanguage: [pick(["en", "de", "fr"])],
        userPassword: [sshaPassword(options.personPassword ?? DEMO_PERSON_PASSWORD, saltOf(uid))],
      };
      if (random() < 0.2)
        attributes.mobile = [`${site.phone} ${String(7000 + Math.floor(random() * 2999))}`];
      // A department's head reports to the managing director, everyone else to the head.
      attributes.manager = [leadDN ?? DIRECTOR_DN];
      if (random() < 0.15) {
        attributes.jpegPhoto = [
          flatColourJpeg([
            Math.floor(random() * 256),
            Math.floor(random() * 256),
            Math.floor(random() * 256),
          ]),
        ];
      }
      entries.push({ dn, attributes });
      leadDN ??= dn;
      if (!heads.has(department.ou)) heads.set(department.ou, dn);

      join(department.ou, dn);
      if (random() < 0.3) join("vpn-users", dn);
      if (department.ou === "engineering" && random() < 0.25) join("on-call", dn);
      if (department.ou === "engineering" && teamIndex === 1) join("identity-team", dn);
      if (i === 0) join("managers", dn);
    }
  }

  // The managing director, to whom the heads report (an access request's manager level finds
  // her for a group a head owns). Made without the PRNG, so everyone else stays as they were.
  entries.push({
    dn: DIRECTOR_DN,
    attributes: {
      objectClass: ["inetOrgPerson"],
      uid: [DIRECTOR_UID],
      cn: ["Helena Brandt"],
      sn: ["Brandt"],
      givenName: ["Helena"],
      displayName: ["Helena Brandt"],
      mail: [`${DIRECTOR_UID}@example.org`],
      title: ["Managing Director"],
      employeeNumber: ["10000"],
      employeeType: ["employee"],
      description: [
        tri([
          "Managing Director, since 2012",
          "Geschäftsführerin, seit 2012",
          "Directrice générale, depuis 2012",
        ]),
      ],
      preferredLanguage: ["de"],
      userPassword: [
        sshaPassword(options.personPassword ?? DEMO_PERSON_PASSWORD, saltOf(DIRECTOR_UID)),
      ],
    },
  });

  const groups: Array<[cn: string, text: Tri]> = [
    ...DEPARTMENTS.map((d): [string, Tri] => [
      d.ou,
      [`Everyone in ${d.name}`, `Alle in ${d.name}`, `Tout le monde en ${d.name}`],
    ]),
    ["managers", ["Department leads", "Abteilungsleitungen", "Responsables de département"]],
    ["vpn-users", ["May use the VPN", "Dürfen das VPN nutzen", "Peuvent utiliser le VPN"]],
    ["on-call", ["Engineers on the on-call rota", "Rufbereitschaft", "Astreinte"]],
    [
      "identity-team",
      ["Owners of the identity services", "Team Identitätsdienste", "Équipe identité"],
    ],
    [
      "annal-admins",
      ["May administer annal", "Dürfen annal verwalten", "Peuvent administrer annal"],
    ],
  ];
  join("annal-admins", membersOf.get("managers")?.[0] ?? SLAPD_SERVICE_DN);
  // Who decides who may join (an access request's approver): a department's group is its
  // head's; the others belong to the person who runs what the group is for.
  const owners: Readonly<Record<string, string | undefined>> = {
    ...Object.fromEntries(DEPARTMENTS.map((d) => [d.ou, heads.get(d.ou)])),
    managers: heads.get("engineering"),
    "vpn-users": heads.get("support"),
    "on-call": heads.get("engineering"),
    "identity-team": membersOf.get("identity-team")?.[0],
    "annal-admins": heads.get("engineering"),
  };
  for (const [cn, text] of groups) {
    const owner = owners[cn];
    entries.push({
      dn: `cn=${cn},${GROUPS_BASE}`,
      attributes: {
        objectClass: ["groupOfNames"],
        cn: [cn],
        description: [tri(text)],
        member: membersOf.get(cn) ?? [SLAPD_SERVICE_DN],
        ...(owner ? { owner: [owner] } : {}),
      },
    });
  }

  // Roles: groups whose members are groups, so a person holds them through nesting
  // (annal-operators ← managers ← the department leads).
  entries.push({
    dn: ROLES_BASE,
    attributes: {
      objectClass: ["organizationalUnit"],
      ou: ["roles"],
      description: [tri(["Roles held through groups", "Rollen über Gruppen", "Rôles par groupe"])],
    },
  });
  const roles: Array<[cn: string, members: string[], text: Tri]> = [
    [
      "annal-operators",
      [`cn=managers,${GROUPS_BASE}`, `cn=annal-admins,${GROUPS_BASE}`],
      ["Operate annal", "Betreiben annal", "Exploitent annal"],
    ],
    [
      "annal-auditors",
      [`cn=identity-team,${GROUPS_BASE}`, `cn=annal-operators,${ROLES_BASE}`],
      ["Audit who could do what", "Prüfen Berechtigungen", "Auditent les droits"],
    ],
  ];
  for (const [cn, members, text] of roles) {
    entries.push({
      dn: `cn=${cn},${ROLES_BASE}`,
      attributes: {
        objectClass: ["groupOfNames"],
        cn: [cn],
        description: [tri(text)],
        member: members,
      },
    });
  }

  const salt = Buffer.from(Array.from({ length: 8 }, () => Math.floor(random() * 256)));
  entries.push({
    dn: SLAPD_SERVICE_DN,
    attributes: {
      objectClass: ["account", "simpleSecurityObject"],
      uid: ["svc-annal"],
      description: [
        "annal's own account: reads the accesslog, writes as people (proxied authorization)",
      ],
      userPassword: [sshaPassword(options.servicePassword ?? "svc-annal", salt)],
      // RFC 4370: with `authz-policy to`, this lets the account act as anyone under ou=people
      authzTo: [`dn.subtree:${PEOPLE_BASE}`],
    },
  });
  return entries;
}

/** The demo LDIF (without the base entries, which every private directory has). */
export function sampleLdif(options: SampleDataOptions = {}): string {
  return toLdif(sampleEntries(options));
}
