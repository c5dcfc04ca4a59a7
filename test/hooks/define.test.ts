import path from "node:path";
import t from "tap";
import { z } from "zod";
import { defineHooks, http, loadHooks, resolveHooks } from "../../src/hooks/index.ts";

const body = z.object({ id: z.string() });
const map = (b: { id: string }) => ({
  source: "s",
  eventId: b.id,
  type: "t",
  subject: "x",
  occurredAt: new Date(),
});
const provider = { process: () => undefined };
const src = path.resolve(import.meta.dirname, "../../src/index.ts");

t.test("defineHooks names each wrong option", async (t) => {
  t.throws(
    () =>
      defineHooks({
        name: "h r",
        webhooks: {
          employees: http.webhook({
            body,
            signature: { secrets: ["literal-secret"] },
            maxClockSkew: "five minutes",
            map,
          }),
        },
        provider,
      }),
    {
      code: "ANNAL_HOOKS_INVALID",
      message:
        /name: expected 1–63 letters.*webhooks\.employees\.signature\.secrets\[0\]: must be an environment reference.*webhooks\.employees\.maxClockSkew: expected a duration/,
    },
  );
  t.throws(
    () =>
      defineHooks({
        name: "hr",
        webhooks: { e: { body, map } as never },
        provider: {} as never,
      }),
    {
      code: "ANNAL_HOOKS_INVALID",
      message: /webhooks\.e: expected http\.webhook.*provider\.process/,
    },
  );
  t.throws(
    () =>
      defineHooks({
        name: "hr",
        webhooks: {
          e: http.webhook({
            body,
            signature: {
              secrets: ["${S}"],
              headers: { id: "x-sig", signature: "X-Sig" },
            },
            map,
          }),
        },
        provider,
      }),
    { message: /three different headers/ },
  );
  t.throws(() => defineHooks({ name: "hr", webhooks: {}, provider }), {
    message: /webhooks: define at least one webhook/,
  });
});

t.test("secrets resolve from the environment; empty rotation slots are skipped", async (t) => {
  const hooks = defineHooks({
    name: "hr",
    webhooks: {
      e: http.webhook({ body, signature: { secrets: ["${NEW}", "${OLD:-}"] }, map }),
    },
    provider,
  });
  const registry = resolveHooks([{ hooks, file: "hooks/hr.ts" }], { env: { NEW: "n" } });
  t.same(await registry.webhook("hr", "e")!.secrets(), ["n"]);
  t.throws(() => resolveHooks([{ hooks, file: "hooks/hr.ts" }], { env: {} }), {
    code: "ANNAL_HOOKS_SECRET_MISSING",
    message: "hooks/hr.ts: webhook hr/e has no secret: the environment variable NEW is not set",
  });
  t.ok(resolveHooks([{ hooks }], { env: {}, secrets: false }), "not needed by failed-work retry");
  t.throws(
    () =>
      resolveHooks(
        [
          { hooks, file: "a.ts" },
          { hooks, file: "b.ts" },
        ],
        { env: { NEW: "n" } },
      ),
    {
      code: "ANNAL_HOOKS_INVALID",
      message: 'b.ts: the hook name "hr" is defined in a.ts too',
    },
  );
});

t.test("loadHooks imports every hooks file of the directory", async (t) => {
  const hooksFile = (name: string) => `
    import { z } from "zod";
    import { defineHooks, http } from ${JSON.stringify(src)};
    export default defineHooks({
      name: ${JSON.stringify(name)},
      webhooks: {
        events: http.webhook({
          body: z.object({ id: z.string() }),
          signature: { secrets: ["\${HOOK_SECRET}"] },
          map: (b) => ({ source: "s", eventId: b.id, type: "t", subject: "x", occurredAt: new Date() }),
        }),
      },
      provider: { process() {} },
    });
  `;
  const dir = t.testdir({
    "crm.ts": hooksFile("crm"),
    "hr.js": hooksFile("hr"),
    "_shared.ts": "throw new Error('helpers are not hooks files');",
    "notes.md": "not code",
    nested: { "deep.ts": "throw new Error('subdirectories are not read');" },
  });
  const registry = await loadHooks({ dir, env: { HOOK_SECRET: "s" } });
  t.same(
    registry.hooks.map((h) => [h.name, h.file]),
    [
      ["crm", path.join(dir, "crm.ts")],
      ["hr", path.join(dir, "hr.js")],
    ],
  );
  t.same((await loadHooks({ dir: undefined })).hooks, [], "no [hooks] table: no hooks");
  await t.rejects(loadHooks({ dir: path.join(dir, "missing") }), {
    code: "ANNAL_HOOKS_DIR_NOT_FOUND",
  });
});

t.test(
  "an invalid hooks file stops loading with ANNAL_HOOKS_INVALID naming the file",
  async (t) => {
    const cases: Record<string, [string, RegExp]> = {
      "syntax.ts": ["export default defineHooks({", /syntax\.ts: the file does not load: /],
      "throws.ts": ["throw new Error('boom');", /throws\.ts: the file does not load: boom/],
      "nodefault.ts": ["export const hooks = 1;", /nodefault\.ts: the file has no default export/],
      "other.ts": [
        "export default { name: 'x' };",
        /other\.ts: the default export is not defineHooks/,
      ],
      "bad.ts": [
        `import { defineHooks } from ${JSON.stringify(src)};
       export default defineHooks({ name: "bad", webhooks: {}, provider: { process() {} } });`,
        /bad\.ts: webhooks: define at least one webhook/,
      ],
    };
    for (const [file, [text, message]] of Object.entries(cases)) {
      const dir = t.testdir({ [file]: text });
      await t.rejects(loadHooks({ dir, env: {} }), { code: "ANNAL_HOOKS_INVALID", message }, file);
    }
  },
);
