// Witnessed rolls as the browser checks them (static/talekeeper/witness.js WitnessBook), under Node's
// own test runner: an honest roll raises nothing; a decision that leaves a contribution out, names one
// the log does not hold, carries another digest, or comes twice, and a contribution by a member the roll
// does not list, twice, or after the decision, each raise their problem; under commit-then-reveal, a
// reveal before the close, without a closed commitment or not matching it, a commitment after the close,
// a close leaving one out and a session that stops committing are named, and a one-phase roll verifies
// only in a session from before commitments. The book is as strict as rules/witness.py: a commitment, close,
// reveal or decision for a roll it never read, entropy that is not 32 bytes in base64url, a decision with no
// list of what it used, and a roll never decided before its session ended are named too. (Python's
// rules/witness.py says the same of the same logs, in the same words: tests/test_js.py and
// tests/campaign/test_witnessed_rolls.py.)
import { test } from "node:test";
import assert from "node:assert/strict";

import { sha256Hex } from "../../static/talekeeper/chain.js";
import { WitnessBook, digestText, said } from "../../static/talekeeper/witness.js";

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
  for (const ev of events) for (const problem of await book.see(ev)) out.push(said(problem));
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

test("a GM removed and added again as a player inside a session is named, and so is her unwaited roll", async () => {
  const created = { seq: 1, type: "campaign_created", actor_id: 1, actor: "gm", payload: { gm: "gm", witnessed_rolls: "gm" } };
  const bob = { seq: 2, type: "member_joined", actor_id: 1, actor: "gm", payload: { username: "bob", user_id: 3, role: "gm" } };
  const start = { seq: 3, type: "session_started", actor_id: 1, session: 1, payload: { session: 1 } };
  const removed = (seq, session) => ({ seq, type: "member_removed", actor_id: 3, actor: "bob", session,
    payload: { username: "gm", user_id: 1, role: "gm" } });
  // A bare join, as a host's own server writes one: no command id, no actor.
  const back = (seq, session) => ({ seq, type: "member_joined", actor_id: null, session,
    payload: { username: "gm", user_id: 1, role: "player" } });
  const roll = (seq, session) => ({ seq, type: "roll", actor_id: 1, actor: "gm", session,
    payload: { command_id: `c${seq}`, dice_log: [[20, 17]], dice_scheme: "talekeeper-hmac-sha256-v3" } });
  const { out } = await problems([created, bob, start, removed(4, 1), back(5, 1), roll(6, 1)]);
  assert.equal(out.length, 2, JSON.stringify(out));
  assert.match(out[0], /^#5 changes who is a GM inside a session where the GM's rolls are witnessed/);
  assert.match(out[1], /^#6 is a roll by a member whose rolls this campaign witnesses \(gm\), stored without waiting/);
  // Between sessions she steps down, and her rolls as a player in the next session wait for nobody.
  const end = { seq: 7, type: "session_ended", actor_id: 1, session: 1, payload: { session: 1 } };
  const next = { ...start, seq: 10, session: 2, payload: { session: 2 } };
  assert.deepEqual((await problems([created, bob, start, end, removed(8, null), back(9, null), next, roll(11, 2)])).out, []);
});

// --- commit-then-reveal (rules/witness.py says the same: tests/campaign/test_witnessed_rolls.py) ---------

const { commitmentText } = await import("../../static/talekeeper/witness.js");
const started = (seq, session, marked) => ({ seq, type: "session_started", actor_id: 1, session,
  payload: { session, dice_scheme: "talekeeper-hmac-sha256-v3", ...(marked ? { witness_commits: true } : {}) } });
const inSession = (ev) => ({ ...ev, session: 1 });
const commitBy = async (seq, actor, entropy, roll = 10) => ({ seq, type: "roll_committed", actor_id: actor, session: 1,
  payload: { roll, action: { type: "witness_commit", roll, commitment: await sha256Hex(commitmentText(roll, actor, entropy)) } } });
const close = (seq, committed) => ({ seq, type: "commitments_closed", actor_id: 1, session: 1, payload: { command_of: 10, committed } });
const revealBy = (seq, actor, entropy) => ({ seq, type: "roll_witnessed", actor_id: actor, session: 1, actor: actor === 2 ? "alice" : "bob",
  payload: { roll: 10, action: { type: "witness_roll", roll: 10, entropy } } });

async function twoPhase() {
  return [started(1, 1, true), inSession(pending), await commitBy(11, 2, E1),
    await commitBy(12, 3, E2), close(13, [11, 12])];
}

test("an honest roll that commits, closes and reveals raises nothing", async () => {
  const log = [...await twoPhase(), revealBy(14, 2, E1), revealBy(15, 3, E2),
    inSession(await decision(16, [[14, 2, E1], [15, 3, E2]]))];
  assert.deepEqual((await problems(log)).out, []);
});

test("a reveal that does not match its commitment, or comes before the close, or without a closed commitment, is named", async () => {
  const ground = "C".repeat(43);
  const mismatch = await problems([...await twoPhase(), revealBy(14, 2, E1), revealBy(15, 3, ground)]);
  assert.match(mismatch.out[0], /^#15 is a reveal that does not match its commitment #12/);
  const [start, pend, c1, c2] = await twoPhase();
  const early = await problems([start, pend, c1, revealBy(12, 2, E1)]);
  assert.match(early.out[0], /^#12 reveals its entropy to roll #10 before its commitments were closed/);
  const late = await problems([start, pend, c1, close(12, [11]), { ...c2, seq: 13 }, revealBy(14, 3, E2)]);
  assert.match(late.out[0], /^#13 is a commitment to roll #10 after its commitments were closed in #12/);
  assert.match(late.out[1], /^#14 is a reveal by a member with no commitment in roll #10's closed set \(#12\)/);
});

test("a close that leaves out a commitment stored before it is named", async () => {
  const [start, pend, c1, c2] = await twoPhase();
  const { out } = await problems([start, pend, c1, c2, close(13, [11])]);
  assert.match(out[0], /^#13 leaves out the commitment #12 stored before it/);
});

test("a one-phase roll verifies in a session from before commitments, not in one that commits, nor after it", async () => {
  const onePhase = (marked) => [started(1, 1, marked), inSession(pending), revealBy(11, 2, E1)];
  assert.deepEqual((await problems([...onePhase(false), inSession(await decision(12, [[11, 2, E1]]))])).out, []);
  const { out } = await problems([...onePhase(true), inSession(await decision(12, [[11, 2, E1]]))]);
  assert.match(out[0], /^#11 reveals its entropy to roll #10 before its commitments were closed/);
  assert.match(out[1], /^#12 decides roll #10 before its commitments were closed/);
  const downgrade = await problems([started(1, 1, true), started(5, 2, false)]);
  assert.match(downgrade.out[0], /^#5 starts a session whose witnessed rolls reveal without committing first/);
});

// --- as strict as rules/witness.py ---------------------------------------------------------------------

const sealedStub = (seq) => ({ seq, type: "sealed", hidden: true, actor_id: 1, session: 1, payload: { hidden: true } });
const call = (seq, roll = 10) => ({ seq, type: "witness_call", actor_id: 1, session: 1, payload: { witnesses: [2, 3], command_of: roll } });
const ended = (seq) => ({ seq, type: "session_ended", actor_id: 1, session: 1, payload: { session: 1 } });

test("a commitment, close, reveal or decision to a roll the page never read is named; one before its window is not", async () => {
  const strays = async (roll) => [await commitBy(11, 2, E1, roll), { ...close(12, [11]), payload: { command_of: roll, committed: [11] } },
    { ...revealBy(13, 2, E1), payload: { roll, action: { type: "witness_roll", roll, entropy: E1 } } },
    inSession({ ...await decision(14, [[13, 2, E1]]), payload: { ...(await decision(14, [[13, 2, E1]])).payload, command_of: roll } })];
  // Read from #1: nothing at #10 waits for witnesses, nor at #20 (after each of them).
  for (const roll of [10, 20]) {
    const { out } = await problems([started(1, 1, true), ...await strays(roll)]);
    assert.deepEqual(out, [
      `#11 is a commitment to #${roll}, which is not a roll waiting for witnesses.`,
      `#12 closes the commitments to #${roll}, which is no roll waiting for witnesses.`,
      `#13 is a contribution to #${roll}, which is not a roll waiting for witnesses.`,
      `#14 decides #${roll} as a witnessed roll, but it is no roll waiting for witnesses.`]);
  }
  // A roll named by no seq at all is named whatever the page read.
  const { out } = await problems([await commitBy(11, 2, E1, "10")]);
  assert.deepEqual(out, ["#11 is a commitment to #10, which is not a roll waiting for witnesses."]);
  // A table that opened at #11 never read #10: it can't say, and says nothing. No table read a #0.
  assert.deepEqual((await problems(await strays(10))).out, []);
  assert.deepEqual((await problems([await commitBy(11, 2, E1, 0)])).out, ["#11 is a commitment to #0, which is not a roll waiting for witnesses."]);
  // A roll sealed from this member is known by its public call.
  const sealed = [started(1, 1, true), sealedStub(10), call(11), await commitBy(12, 2, E1), await commitBy(13, 3, E2),
    close(14, [12, 13]), revealBy(15, 2, E1), revealBy(16, 3, E2), { ...sealedStub(17) }];
  assert.deepEqual((await problems(sealed)).out, []);
});

test("a reveal whose entropy is not 32 bytes in base64url without padding is named", async () => {
  // One phase: no commitment to match, so only the entropy's form can tell. Two phases: committed to as it is.
  for (const entropy of ["A".repeat(42), "A".repeat(44), `${"A".repeat(42)}=`, "+".repeat(43), "/".repeat(43),
    `${"A".repeat(42)}é`, 43, null, undefined]) {
    const onePhase = await problems([started(1, 1, false), inSession(pending), revealBy(11, 2, entropy)]);
    assert.deepEqual(onePhase.out, ["#11 is a contribution whose entropy is not 32 bytes in base64url."], String(entropy));
  }
  const loose = "A".repeat(44);
  const committed = [started(1, 1, true), inSession(pending), await commitBy(11, 2, loose), close(12, [11]), revealBy(13, 2, loose)];
  assert.deepEqual((await problems(committed)).out, ["#13 is a contribution whose entropy is not 32 bytes in base64url."]);
  // Any 43 characters of the alphabet are 32 bytes (the last one's two spare bits are not read).
  assert.deepEqual((await problems([started(1, 1, false), inSession(pending), revealBy(11, 2, "-_9z".repeat(10) + "AB_")])).out, []);
});

test("a decision that does not list what it used, as a list, is named, with or without contributions", async () => {
  const unwitnessed = { ...pending, payload: { ...pending.payload, witnesses: [] } };
  const honest = await decision(11, [], { unwitnessed: true });
  assert.deepEqual((await problems([unwitnessed, honest])).out, []);
  const { witnessed_by: _gone, ...bare } = honest.payload;
  assert.deepEqual((await problems([unwitnessed, { ...honest, payload: bare }])).out,
    ["#11 names contributions to roll #10 that the log does not hold before it."]);
  const notAList = await decision(13, [[11, 2, E1]], { witnessed_by: 11 });
  assert.deepEqual((await problems([pending, byAlice, notAList])).out,
    ["#13 leaves out the contribution #11 stored before it: the host chose which to use."]);
});

test("a witnessed roll never decided before its session ended is named at its pending event", async () => {
  const log = [...await twoPhase(), revealBy(14, 2, E1), revealBy(15, 3, E2), ended(16)];
  assert.deepEqual((await problems(log)).out, ["#10 is a witnessed roll never decided before its session ended (#16)."]);
  // A sealed roll too, when nothing was sealed from this member after it: its decision could not be.
  const sealed = [started(1, 1, true), sealedStub(10), call(11), await commitBy(12, 2, E1), await commitBy(13, 3, E2),
    close(14, [12, 13]), ended(15)];
  assert.deepEqual((await problems(sealed)).out, ["#10 is a witnessed roll never decided before its session ended (#15)."]);
  // An event sealed from her after it may be its decision (one read by fewer than its pending event): the GM's export says.
  assert.deepEqual((await problems([...log.slice(0, -1), sealedStub(16), ended(17)])).out, []);
  assert.deepEqual((await problems([...sealed.slice(0, -1), sealedStub(15), ended(16)])).out, []);
  // Decided: nothing to say.
  const decided = [...log.slice(0, -1), inSession(await decision(16, [[14, 2, E1], [15, 3, E2]])), ended(17)];
  assert.deepEqual((await problems(decided)).out, []);
});

test("every reason reads in rules/witness.py's words", async () => {
  const first = await decision(13, [[11, 2, E1], [12, 3, E2]]);
  assert.deepEqual((await problems([pending, byAlice, { ...byAlice, seq: 12 }])).out,
    ["#12 is a second contribution of this member to roll #10."]);
  assert.deepEqual((await problems([pending, byAlice, byBob, await decision(13, [[11, 2, E1]])])).out,
    ["#13 leaves out the contribution #12 stored before it: the host chose which to use."]);
  assert.deepEqual((await problems([pending, byAlice, byBob, { ...first, payload: { ...first.payload, dice_scheme: "talekeeper-hmac-sha256-v3" } }])).out,
    ["#13 is a witnessed roll's dice not of scheme talekeeper-hmac-sha256-v4."]);
  assert.deepEqual((await problems([pending, byAlice, byBob, { ...first, payload: { ...first.payload, witness_digest: "0".repeat(64) } }])).out,
    ["#13's witness digest is not the digest of the contributions it names."]);
  // A setting written as null is no setting; a change inside a session to no setting is named twice over.
  const created = { seq: 1, type: "campaign_created", actor_id: 1, actor: "gm", payload: { gm: "gm", witnessed_rolls: null } };
  assert.deepEqual((await problems([created])).out, ["#1 names no setting of whose rolls are witnessed (off, gm, everyone)."]);
  const inside = { seq: 9, type: "campaign_configured", actor_id: 1, session: 2, payload: { witnessed_rolls: "all", changed: {} } };
  assert.deepEqual((await problems([inside])).out, [
    "#9 changes whose rolls are witnessed inside a session, where rolls could escape their witnesses: it changes between sessions only.",
    "#9 sets whose rolls are witnessed otherwise than its line of the log says, or to no setting (off, gm, everyone)."]);
});

test("a GM's roll with any dice_log Python reads as dice is one that should have waited", async () => {
  const created = { seq: 1, type: "campaign_created", actor_id: 1, actor: "gm", payload: { gm: "gm", witnessed_rolls: "gm" } };
  const roll = (dice_log) => ({ seq: 2, type: "roll", actor_id: 1, actor: "gm", session: 1,
    payload: { command_id: "c2", dice_log, dice_scheme: "talekeeper-hmac-sha256-v3" } });
  for (const log of [[[20, 17]], { 0: [20, 17] }, "20:17"]) {
    assert.match((await problems([created, roll(log)])).out[0] ?? "", /^#2 is a roll by a member whose rolls this campaign witnesses/, JSON.stringify(log));
  }
  for (const log of [[], {}, "", null]) assert.deepEqual((await problems([created, roll(log)])).out, [], JSON.stringify(log));
});
