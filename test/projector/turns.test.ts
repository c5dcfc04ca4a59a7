import t from "tap";
import { Turns } from "../../src/projector/turns.ts";

t.test("turns go to the lowest rank waiting, a slot at a time", async (t) => {
  const turns = new Turns(1);
  const order: number[] = [];
  const end = await turns.take(5);
  const waiting = [3, 1, 2, 1].map(async (rank) => {
    const done = await turns.take(rank);
    order.push(rank);
    done();
  });
  end();
  await Promise.all(waiting);
  t.same(order, [1, 1, 2, 3], "by rank, equal ranks in the order they came");
});

t.test("as many turns at once as there are slots; an ended turn ends once", async (t) => {
  const turns = new Turns(2);
  const a = await turns.take(0);
  const b = await turns.take(0);
  let third = false;
  const c = turns.take(0).then((done) => {
    third = true;
    return done;
  });
  await Promise.resolve();
  t.notOk(third, "a third waits while two hold their turns");
  a();
  a();
  const endC = await c;
  t.ok(third);
  let fourth = false;
  void turns.take(0).then(() => (fourth = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(fourth, "ending a turn twice freed one slot, not two");
  b();
  endC();
});
