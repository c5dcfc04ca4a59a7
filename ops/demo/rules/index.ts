/**
 * The demo's rules file: custom endpoints under /api ([rules] file in annal.toml). Each route
 * checks the caller's access itself; docs/endpoints.md describes the context.
 *
 *   GET  /api/departments/engineering/people.csv?encoding=windows-1252
 *        the department's people as CSV, in the encoding asked for (needs `read`)
 *   POST /api/access-requests  { "group": "...", "reason": "..." }
 *        starts the access-request workflow for the caller (any signed-in person or token)
 *   POST /api/welcome/:uid
 *        mails a person the welcome template (needs `operator`)
 *   GET  /api/status
 *        public: whether the caller is signed in
 */
import { defineEndpoints } from "annal";
import { departmentPeople } from "./people.ts";

export const endpoints = defineEndpoints((context) => {
  const { app, gql, v, vValidator, HTTPException, publicRoute } = context;
  app.route("/departments", departmentPeople(context));

  app.post(
    "/access-requests",
    vValidator(
      "json",
      v.object({
        group: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
        reason: v.pipe(v.string(), v.minLength(3), v.maxLength(2000)),
      }),
    ),
    async (c) => {
      const { group, reason } = c.req.valid("json");
      // Runs as the caller: the workflow's start records who asked.
      const data = await c.env.query<{ startWorkflow: { id: string; state: string } }>(
        gql`
          mutation Request($parameters: JSON!) {
            startWorkflow(name: "access-request", parameters: $parameters) {
              id
              state
            }
          }
        `,
        { parameters: { group, reason } },
      );
      return c.json(data.startWorkflow, 201);
    },
  );

  app.post("/welcome/:uid", async (c) => {
    if (!c.env.viewer.has("operator")) {
      throw new HTTPException(403, { message: "only operators send welcome mail" });
    }
    const uid = c.req.param("uid");
    const { person } = await c.env.query<{
      person: { displayName: string | null; mail: string | null } | null;
    }>(
      gql`
        query Person($uid: String!) {
          person(q: $uid) {
            displayName
            mail
          }
        }
      `,
      { uid },
    );
    if (!person?.mail) {
      throw new HTTPException(404, { message: `no person with a mail address has the uid ${uid}` });
    }
    const result = await c.env.messaging.send({
      to: person.mail,
      subject: "Welcome to Example",
      template: "@welcome",
      data: { name: person.displayName ?? uid, sender: c.env.viewer.account?.displayName ?? "IT" },
    });
    if (!result.success) {
      throw new HTTPException(502, {
        message: "the mail server did not take the message",
        cause: result.error,
      });
    }
    return c.json({ sent: true, messageId: result.messageId });
  });

  app.get("/status", publicRoute, (c) =>
    c.json({ signedIn: !c.env.viewer.anonymous, name: c.env.viewer.account?.name ?? null }),
  );
});
