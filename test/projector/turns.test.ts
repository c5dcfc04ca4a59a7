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

t.test(
  "a turn taken alone holds every slot when all are free, and is one slot when some are taken",
  async (t) => {
    const turns = new Turns(2);
    const alone = await turns.take(0, { alone: true });
    const order: number[] = [];
    const waiting = [2, 1].map(async (rank) => {
      const done = await turns.take(rank);
      order.push(rank);
      return done;
    });
    await new Promise((resolve) => setImmediate(resolve));
    t.same(order, [], "nothing else runs while the lone turn holds both slots");
    alone();
    const [endTwo, endOne] = await Promise.all(waiting);
    t.same(order, [1, 2], "its end frees both slots, taken by rank");

    // One slot taken: a lone turn does not wait for it to end.
    endTwo!();
    const second = await turns.take(0, { alone: true });
    let third = false;
    void turns.take(3).then(() => (third = true));
    await new Promise((resolve) => setImmediate(resolve));
    t.notOk(third, "the lone turn took the one free slot and no more");
    endOne!();
    await new Promise((resolve) => setImmediate(resolve));
    t.ok(third, "a slot ended frees one");
    second();
  },
);
