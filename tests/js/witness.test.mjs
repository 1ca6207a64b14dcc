// Witnessed rolls as the browser checks them (static/talekeeper/witness.js WitnessBook), under Node's
// own test runner: an honest roll raises nothing; a decision that leaves a contribution out, names one
// the log does not hold, carries another digest, or comes twice, and a contribution by a member the roll
// does not list, twice, or after the decision, each raise their problem. (Python's rules/witness.py
// says the same of the same logs: tests/campaign/test_witnessed_rolls.py.)
import { test } from "node:test";
import assert from "node:assert/strict";

import { sha256Hex } from "../../static/talekeeper/chain.js";
import { WitnessBook, digestText } from "../../static/talekeeper/witness.js";

const E1 = "A".repeat(43);
const E2 = "B".repeat(43);

const pending = { seq: 10, type: "roll_pending", actor_id: 1, payload: { witnesses: [2, 3], command_id: "c1", action: { type: "roll" } } };
const byAlice = { seq: 11, type: "roll_witnessed", actor_id: 2, actor: "alice", payload: { roll: 10, action: { type: "witness_roll", roll: 10, entropy: E1 } } };
const byBob = { seq: 12, type: "roll_witnessed", actor_id: 3, actor: "bob", payload: { roll: 10, action: { type: "witness_roll", roll: 10, entropy: E2 } } };

async function decision(seq, came, extra = {}) {
  return { seq, type: "roll", actor_id: 1, payload: { command_of: 10, dice_scheme: "talekeeper-hmac-sha256-v4",
    witnessed_by: came.map((c) => c[0]), witness_digest: await sha256Hex(digestText(came)), dice_log: [[6, 3]], ...extra } };
}

async function problems(events) {
  const book = new WitnessBook(sha256Hex);
  const out = [];
  for (const ev of events) {
    const problem = await book.see(ev);
    if (problem) out.push(problem);
  }
  return { out, book };
}

test("an honest witnessed roll raises nothing and names its witnesses", async () => {
  const decided = await decision(13, [[11, 2, E1], [12, 3, E2]]);
  const { out, book } = await problems([pending, byAlice, byBob, decided]);
  assert.deepEqual(out, []);
  assert.deepEqual(book.witnessesOf(decided.payload), ["alice", "bob"]);
});

test("a decision that leaves a contribution out is named", async () => {
  const { out } = await problems([pending, byAlice, byBob, await decision(13, [[11, 2, E1]])]);
  assert.match(out[0], /^#13 leaves out the contribution #12 stored before it/);
});

test("a decision naming a contribution the log does not hold, or with another digest, is named", async () => {
  const invented = await decision(13, [[11, 2, E1], [12, 3, E2]]);
  assert.match((await problems([pending, byAlice, invented])).out[0], /names contributions to roll #10 that the log does not hold/);
  const other = await decision(13, [[11, 2, E1]], { witness_digest: "0".repeat(64) });
  assert.match((await problems([pending, byAlice, other])).out[0], /witness digest is not the digest/);
});

test("a roll decided twice, and contributions out of turn, are named", async () => {
  const first = await decision(13, [[11, 2, E1], [12, 3, E2]]);
  const again = { ...first, seq: 14 };
  assert.match((await problems([pending, byAlice, byBob, first, again])).out[0], /decides roll #10 a second time/);
  const stranger = { ...byBob, actor_id: 9 };
  assert.match((await problems([pending, stranger])).out[0], /does not list as its witness/);
  const twice = { ...byAlice, seq: 12 };
  assert.match((await problems([pending, byAlice, twice])).out[0], /a second contribution/);
  const late = { ...byBob, seq: 14 };
  assert.match((await problems([pending, byAlice, await decision(13, [[11, 2, E1]]), late])).out[0], /after it was decided in #13/);
});

test("a change of whose rolls are witnessed inside a session is named; between sessions it is not", async () => {
  const off = (session) => ({ seq: 9, type: "campaign_configured", actor_id: 1, session,
    payload: { changed: { witnessed_rolls: { from: "gm", to: "off" } }, options: {}, witnessed_rolls: "off" } });
  assert.deepEqual((await problems([off(null)])).out, []);
  const { out } = await problems([off(2)]);
  assert.equal(out.length, 1);
  assert.match(out[0], /^#9 changes whose rolls are witnessed inside a session/);
});

test("a pending roll whose witnesses are no ascending list of other members' ids is named", async () => {
  for (const witnesses of [undefined, "everyone", [3, 2], [2, 2], [1, 2], [2, "3"]]) {
    const { out } = await problems([{ ...pending, payload: { ...pending.payload, witnesses } }]);
    assert.equal(out.length, 1, JSON.stringify(witnesses));
    assert.match(out[0], /^#10 is a witnessed roll whose witnesses are not member ids/);
  }
});

test("where the campaign witnesses a member's rolls, a roll of hers stored in a session without waiting is named", async () => {
  const created = { seq: 1, type: "campaign_created", actor_id: 1, actor: "gm", payload: { gm: "gm", witnessed_rolls: "gm" } };
  const joined = { seq: 2, type: "member_joined", actor_id: 1, actor: "gm", payload: { username: "alice", user_id: 2, role: "player" } };
  const plain = (seq, actor, session) => ({ seq, type: "roll", actor_id: actor === "gm" ? 1 : 2, actor, session,
    payload: { command_id: `c${seq}`, dice_log: [[6, 3]], dice_scheme: "talekeeper-hmac-sha256-v3" } });
  const { out } = await problems([created, joined, plain(3, "alice", 1), plain(4, "gm", null), plain(5, "gm", 1)]);
  assert.equal(out.length, 1);
  assert.match(out[0], /^#5 is a roll by a member whose rolls this campaign witnesses \(gm\), stored without waiting/);
  // Whose rolls wait is read by member id: the GM's account renamed since is still the GM's.
  const renamed = { ...plain(6, "keeper", 1), actor_id: 1 };
  assert.match((await problems([created, joined, renamed])).out[0] ?? "", /^#6 is a roll by a member whose rolls/);
  // A page whose window starts after the setting knows of none, and names nothing.
  assert.deepEqual((await problems([plain(5, "gm", 1)])).out, []);
});
