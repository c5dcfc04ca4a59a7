import t from "tap";
import { signDelivery, verifyDelivery } from "../../src/hooks/index.ts";

t.test("signatures match the Standard Webhooks reference example", async (t) => {
  // From the Standard Webhooks specification's example (a whsec_ secret is base64 key bytes).
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const timestamp = 1614265330;
  const payload = '{"test": 2432232314}';
  t.equal(
    signDelivery(secret, id, timestamp, payload),
    "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
  );
});

t.test("verification takes any of several signatures under any of several secrets", async (t) => {
  const body = Buffer.from('{"a":1}');
  const good = signDelivery("new", "id-1", 100, body);
  const other = signDelivery("unrelated", "id-1", 100, body);
  t.ok(verifyDelivery(["old", "new"], "id-1", "100", body, `${other} ${good}`));
  t.ok(
    verifyDelivery(["old", "new"], "id-1", "100", body, `v1a,xyz ${good}`),
    "unknown versions are skipped",
  );
  t.notOk(verifyDelivery(["old"], "id-1", "100", body, good), "a secret not listed");
  t.notOk(verifyDelivery(["new"], "id-2", "100", body, good), "another id");
  t.notOk(verifyDelivery(["new"], "id-1", "101", body, good), "another timestamp");
  t.notOk(verifyDelivery(["new"], "id-1", "100", Buffer.from('{"a": 1}'), good), "other bytes");
  t.notOk(verifyDelivery(["new"], "id-1", "100", body, ""), "no signature");
  t.notOk(verifyDelivery(["new"], "id-1", "100", body, "v1,short"), "malformed");
  t.notOk(
    verifyDelivery(["new"], "id-1", "100", body, Array(11).fill(good).join(" ")),
    "more signatures than allowed",
  );
});
