import t from "tap";
import { AnnalError } from "../../src/errors/index.ts";

t.test("an AnnalError carries its code, hint, status and cause", async (t) => {
  const cause = new Error("root");
  const error = new AnnalError("ANNAL_CONFLICT", "it broke", {
    hint: "fix it",
    status: 400,
    cause,
  });
  t.equal(error.code, "ANNAL_CONFLICT");
  t.equal(error.hint, "fix it");
  t.equal(error.status, 400);
  t.equal(error.cause, cause);
  t.equal(error.name, "AnnalError");
});
