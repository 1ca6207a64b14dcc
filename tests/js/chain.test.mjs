// The checks every table page makes of the log it is shown (static/talekeeper/chain.js Chain), under
// Node's own test runner: a log that checks out raises nothing; each way a server can show another
// log (an event altered, left out, relinked, rewritten after this browser verified it, a reveal
// that is not what was sealed, another member shown a different head) raises its problem.
import { test } from "node:test";
import assert from "node:assert/strict";

import { Chain, GENESIS, bodyOf, jcs, parseJSON, recomputeHash, sha256Hex } from "../../static/talekeeper/chain.js";

const CAMPAIGN = 7;

// Two events and their hashes as the server computes them (campaign/eventlog/chain.py event_hash, format 2),
// written as the events API sends them: the big number keeps its source text through parseJSON.
const SERVED = parseJSON(`[
  {"seq": 1, "format": 2, "type": "roll", "version": 1, "character": null, "actor_id": 3, "session": 1, "scene": null,
   "visibility": "public", "created_at": "2026-03-01T19:42:07.123456+00:00",
   "payload": {"notation": "2d6+1", "total": 9, "label": "Ünïcode “quotes”", "big": 12345678901234567890},
   "prev_hash": "${GENESIS}", "hash": "5b6d86b19a72cfd3b1c640b9e9b81b77defc51234a106ae6952dea582c9548af"},
  {"seq": 2, "format": 2, "type": "skill_tested", "version": 2, "character": 11, "actor_id": 3, "session": 1, "scene": 2,
   "visibility": "gm", "created_at": "2026-03-01T19:43:00.000001+00:00",
   "payload": {"skill": "Strike", "dice": [3, 4], "mod": -1.5},
   "prev_hash": "5b6d86b19a72cfd3b1c640b9e9b81b77defc51234a106ae6952dea582c9548af",
   "hash": "2687ff3c55663fabebdccec254be34cb4a38b7fbfba650ea97f9620a6bb3707c"}
]`);
const SKILL_BODY_DIGEST = "6ecd731f486a8a2af6f4b35518b851a9774d19159d7906ada42fdf190d4d857b";

// A page's chain with nothing stored from an earlier visit (Node has no localStorage: none is).
function chain({ fetchEvents = async () => [] } = {}) {
  const problems = [];
  const heads = [];
  const c = new Chain({ slug: "torn-road", campaignId: CAMPAIGN, fetchEvents, onProblem: (p) => problems.push(p),
    onHead: (h) => heads.push(h.seq) });
  return { c, problems, heads };
}

// An event linked after `prev` and hashed as the server would (format 2).
async function next(prev, fields) {
  const ev = { format: 2, version: 1, character: null, actor_id: 3, session: 1, scene: null, visibility: "public",
    created_at: "2026-03-01T20:00:00.000000+00:00", payload: {}, ...fields, prev_hash: prev ? prev.hash : GENESIS };
  ev.hash = (await recomputeHash(ev, CAMPAIGN)).hash;
  return ev;
}

test("the server's own hashes recompute here", async () => {
  const [roll, skill] = SERVED;
  assert.equal((await recomputeHash(roll, CAMPAIGN)).hash, roll.hash);
  const again = await recomputeHash(skill, CAMPAIGN);
  assert.equal(again.hash, skill.hash);
  assert.equal(again.digest, SKILL_BODY_DIGEST);
  assert.equal(await sha256Hex(jcs(bodyOf(skill))), SKILL_BODY_DIGEST);
});

test("a log that checks out raises nothing and moves the verified head", async () => {
  const { c, problems, heads } = chain();
  for (const ev of SERVED) await c.event(ev);
  assert.deepEqual(problems, []);
  assert.deepEqual(heads, [1, 2]);
  assert.deepEqual(c.head, { seq: 2, hash: SERVED[1].hash });
});

test("an altered event does not hash up", async () => {
  const { c, problems } = chain();
  await c.event(SERVED[0]);
  await c.event({ ...SERVED[1], payload: { ...SERVED[1].payload, dice: [6, 6] } });
  assert.deepEqual(problems.map((p) => [p.kind, p.seq]), [["log", 2]]);
  assert.match(problems[0].message, /#2 was altered/);
  assert.equal(c.broken, true);
});

test("an event left out, or not linked to the one before it", async () => {
  const a = await next(null, { seq: 1, type: "roll" });
  const b = await next(a, { seq: 2, type: "roll" });
  const c3 = await next(b, { seq: 3, type: "roll" });
  const gap = chain();
  await gap.c.event(a);
  await gap.c.event(c3);
  assert.match(gap.problems[0].message, /#2 is missing/);
  const relinked = chain();
  await relinked.c.event(a);
  await relinked.c.event(await next({ hash: "f".repeat(64) }, { seq: 2, type: "roll" }));
  assert.match(relinked.problems[0].message, /#2 does not link to #1/);
  const first = chain();
  await first.c.event(await next({ hash: "1".repeat(64) }, { seq: 1, type: "roll" }));
  assert.match(first.problems[0].message, /#1 does not start the chain/);
});

test("a log rewritten after this browser verified it", async () => {
  const a = await next(null, { seq: 1, type: "roll" });
  const { c, problems } = chain();
  c.stored = { seq: 1, hash: "e".repeat(64) }; // what an earlier visit verified at #1
  await c.event(a);
  assert.match(problems[0].message, /the log was rewritten/);
});

test("the server's head must be the event it sent, and never below what was verified", async () => {
  const { c, problems } = chain();
  for (const ev of SERVED) await c.event(ev);
  await c.serverHead({ seq: 2, hash: SERVED[1].hash }, { ends: true });
  assert.deepEqual(problems, []);
  await c.serverHead({ seq: 2, hash: "d".repeat(64) });
  assert.match(problems[0].message, /^The server's head for #2 \(dddddddddddd\) is not the event it sent for #2/);
  const shorter = chain();
  for (const ev of SERVED) await shorter.c.event(ev);
  await shorter.c.serverHead({ seq: 1, hash: SERVED[0].hash }, { ends: true });
  assert.match(shorter.problems[0].message, /log ends at #1, but this browser already verified it up to #2: events were removed/);
});

test("another member shown a different log", async () => {
  const { c, problems } = chain();
  await c.memberHeads([{ username: "bob", head: { seq: 2, hash: "b".repeat(64) } },
    { username: "alice", head: { seq: 2, hash: "a".repeat(64) } }], "alice"); // her own report is not compared
  for (const ev of SERVED) await c.event(ev); // bob's claim is compared once #2 is checked
  assert.deepEqual(problems.map((p) => [p.kind, p.seq, p.who]), [["member", 2, "bob"]]);
  assert.equal(c.broken, false); // the server's log checks out here: the alarm names the other member
});

test("a sealed event must be committed to its body, and a public one is never sealed", async () => {
  const body = { type: "roll", version: 1, character: null, payload: { total: 4 } };
  const digest = await sha256Hex(jcs(body));
  const sealedFields = { seq: 1, type: "sealed", hidden: true, visibility: "gm", body_digest: digest, payload: { commitment: digest } };
  const sealed = await next(null, sealedFields);
  const ok = chain();
  await ok.c.event(sealed);
  assert.deepEqual(ok.problems, []);
  const wrong = chain();
  await wrong.c.event(await next(null, { ...sealedFields, payload: { commitment: "0".repeat(64) } }));
  assert.match(wrong.problems[0].message, /commitment that is not its body digest/);
  const open = chain();
  await open.c.event(await next(null, { ...sealedFields, visibility: "public" }));
  assert.match(open.problems[0].message, /#1 is public, but the server sent it sealed/);

  // Its reveal must be the body it was sealed with.
  const honest = await next(sealed, { seq: 2, type: "roll_revealed", payload: { seq: 1, body } });
  await ok.c.event(honest);
  assert.deepEqual(ok.problems, []);
  const forged = chain();
  await forged.c.event(sealed);
  await forged.c.event(await next(sealed, { seq: 2, type: "roll_revealed", payload: { seq: 1, body: { ...body, payload: { total: 6 } } } }));
  assert.match(forged.problems[0].message, /^Forged reveal: the body revealed in #2 is not the one #1 was sealed with/);
});

test("earlier events paged in must be the ones the log links to", async () => {
  const a = await next(null, { seq: 1, type: "roll" });
  const b = await next(a, { seq: 2, type: "roll" });
  const { c, problems } = chain();
  await c.event(b); // the page starts at #2
  await c.older([a]);
  assert.deepEqual(problems, []);
  const other = await next(null, { seq: 1, type: "roll", payload: { total: 1 } });
  const { c: c2, problems: p2 } = chain();
  await c2.event(b);
  await c2.older([other]);
  assert.match(p2[0].message, /#1 as the server sends it now is not the event #2 links to/);
});

test("an event passes once it is checked as sent, raised no problem, and the log is not broken", async () => {
  // A table acts on a close only once it passed (static/talekeeper/witnessing.js reveals on it): passed()
  // waits for the checks queued before it, as the socket queues each event before showing it.
  const pending = await next(null, { seq: 1, type: "roll_pending", actor_id: 1,
    payload: { witnesses: [2], command_id: "c1", action: { type: "roll" } } });
  const close = (committed) => next(pending, { seq: 2, type: "commitments_closed", actor_id: 1,
    payload: { command_of: 1, committed } });
  const honest = chain();
  honest.c.event(pending);
  const closed = await close([]);
  honest.c.event(closed);
  assert.equal(await honest.c.passed(closed), true);
  assert.equal(await honest.c.passed({ ...closed, hash: "a".repeat(64) }), false); // not the event checked
  const altered = chain();
  altered.c.event(pending);
  altered.c.event({ ...closed, payload: { ...closed.payload, committed: [1] } });
  assert.equal(await altered.c.passed(closed), false);
  const invented = chain(); // hashes up, but names a commitment the log does not hold
  invented.c.event(pending);
  const naming = await close([7]);
  invented.c.event(naming);
  assert.equal(await invented.c.passed(naming), false);
  assert.deepEqual(invented.problems.map((p) => [p.kind, p.seq]), [["witness", 2]]);
  const broken = chain(); // the close checks out, but the log before it does not
  broken.c.event({ ...pending, payload: { ...pending.payload, command_id: "c2" } });
  broken.c.event(closed);
  assert.equal(await broken.c.passed(closed), false);
  const unchecked = chain();
  assert.equal(await unchecked.c.passed(closed), false);
});

test("the table's witness checks judge only the rolls its window holds", async () => {
  // A page opened at #5 never read #2: a commitment to it says nothing. Nothing waits at #6, which it read.
  const opening = { seq: 4, hash: "4".repeat(64) };
  const commitment = (seq, prev, roll) => next(prev, { seq, type: "roll_committed", actor_id: 2,
    payload: { roll, action: { type: "witness_commit", roll, commitment: "c".repeat(64) } } });
  const before = await commitment(5, opening, 2);
  const noRoll = await next(before, { seq: 6, type: "message_posted", payload: { text: "hi" } });
  const after = await commitment(7, noRoll, 6);
  const { c, problems } = chain();
  for (const ev of [before, noRoll, after]) await c.event(ev);
  assert.deepEqual(problems.map((p) => [p.kind, p.seq, p.message]),
    [["witness", 7, "#7 is a commitment to #6, which is not a roll waiting for witnesses."]]);
});
