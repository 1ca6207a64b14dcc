// The verification page's checks of a whole log (static/talekeeper/logchecks.js), under Node's own test
// runner, on a log a real server stored: logs/revealed-witnessed-roll.json is the events API's answer to Bob
// after the GM rolled 1d20 only she may read, witnessed by Alice's table (commitment, close, reveal), revealed
// it and ended the session (recorded by tests/campaign/test_witnessed_rolls.py's page_checks with
// TALEKEEPER_RECORD_LOG set). Revealed, a sealed witnessed roll is served whole and checked like any other:
// its die from the seed and the witness digest, its contributions and commitments. A host whose server wrote
// the die itself, or left a reveal out, or revealed entropy its witness did not commit to, is named.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { bodyDigests, checkDice, checkReveals, checkWitnessed, newReport } from "../../static/talekeeper/logchecks.js";

const RECORDED = JSON.parse(readFileSync(new URL("./logs/revealed-witnessed-roll.json", import.meta.url)));
const CAMPAIGN = RECORDED.campaign;
const PENDING = 11;
const DECISION = 16;
const REVEAL = 15;

/** What the page says of `events`: its checks by name, and its problems. */
async function page(events) {
  const report = newReport();
  await checkReveals(events, await bodyDigests(events, CAMPAIGN), report);
  await checkDice(events, report, CAMPAIGN);
  await checkWitnessed(events, report);
  return { checks: Object.fromEntries(report.checks.map((c) => [c.name, c])), problems: report.problems };
}

/** The recorded log with event `seq`'s payload changed by `change`, and the reveal of it changed alike: as
 *  a host's server would have stored it, then revealed what it stored (the seal is its body digest, so it
 *  matches). */
function edited(seq, change) {
  const events = structuredClone(RECORDED.events);
  change(events[seq - 1].payload);
  for (const ev of events) if (ev.type === "roll_revealed" && ev.payload.seq === seq) change(ev.payload.body.payload);
  return events;
}

test("the recorded log is a hidden witnessed roll, revealed, in a finished session", () => {
  const at = (seq) => RECORDED.events[seq - 1];
  assert.deepEqual([at(PENDING).type, at(PENDING).visibility, at(DECISION).type, at(DECISION).visibility], ["roll_pending", "gm", "roll", "gm"]);
  assert.ok(RECORDED.events.every((ev) => !ev.hidden), "revealed events are served whole");
  assert.deepEqual(RECORDED.events.filter((ev) => ev.type === "roll_revealed").map((ev) => ev.payload.seq), [PENDING, DECISION]);
  assert.equal(at(DECISION).payload.command_of, PENDING);
  assert.deepEqual(at(DECISION).payload.witnessed_by, [REVEAL]);
  assert.equal(RECORDED.events.at(-1).type, "session_ended");
});

test("revealed, a hidden witnessed roll is checked like any other: nothing to say of an honest one", async () => {
  const { checks, problems } = await page(RECORDED.events);
  assert.deepEqual(problems, []);
  assert.equal(checks.Dice.text, "1 die matches its session's revealed seed (session 1: 1 die).");
  assert.equal(checks["Witnessed rolls"].text, "1 witnessed roll decided with every contribution stored before it.");
  assert.equal(checks.Reveals.text, "2 reveals checked against the rolls they unseal.");
});

test("a revealed hidden roll whose die the seed and the witness digest did not give is BAD", async () => {
  const face = RECORDED.events[DECISION - 1].payload.dice_log[0][1];
  const wrong = face % 20 + 1;
  const { checks, problems } = await page(edited(DECISION, (p) => { p.dice_log = [[20, wrong]]; }));
  assert.deepEqual(problems, [{ seq: DECISION, message: `#${DECISION}: die 1 (d20) shows ${wrong}; the seed gives ${face}.` }]);
  assert.equal(checks.Dice.ok, false);
  assert.equal(checks.Reveals.ok, true); // the seal holds what was stored: only the seed can tell
});

test("a revealed hidden roll decided without a reveal stored before it, or with another digest, is BAD", async () => {
  const without = await page(edited(DECISION, (p) => { p.witnessed_by = []; }));
  assert.deepEqual(without.problems.map((p) => p.message),
    [`#${DECISION} leaves out the contribution #${REVEAL} stored before it: the host chose which to use.`]);
  // Another digest: not theirs, and the die and the hidden roll's nonce derive from it, so neither is the seed's.
  const digest = await page(edited(DECISION, (p) => { p.witness_digest = "0".repeat(64); }));
  const face = RECORDED.events[DECISION - 1].payload.dice_log[0][1];
  assert.deepEqual(digest.problems.map((p) => p.message), [
    `#${DECISION}: die 1 (d20) shows ${face}; the seed gives 5.`,
    `#${DECISION}: the hidden roll's nonce is not the one the seed gives.`,
    `#${DECISION}'s witness digest is not the digest of the contributions it names.`]);
});

test("a revealed hidden roll's reveal that is not what its witness committed to is BAD", async () => {
  const events = structuredClone(RECORDED.events);
  const reveal = events[REVEAL - 1].payload.action;
  reveal.entropy = `${reveal.entropy.slice(0, 42)}${reveal.entropy.at(-1) === "A" ? "B" : "A"}`;
  const { problems } = await page(events);
  assert.ok(problems.some((p) => p.seq === REVEAL && p.message === `#${REVEAL} is a reveal that does not match its commitment #13.`),
    JSON.stringify(problems));
});

test("dice the page can't read as [sides, face] pairs are BAD, not skipped", async () => {
  for (const log of [[[20]], [20, 5], [[0, 1]], [["20", 5]], { 0: [20, 5] }, "20:5"]) {
    const { problems } = await page(edited(DECISION, (p) => { p.dice_log = log; }));
    assert.deepEqual(problems, [{ seq: DECISION, message: `#${DECISION}: its dice_log is not a list of [sides, face] pairs.` }],
      JSON.stringify(log));
  }
});

test("a witnessed roll's decision whose pending event the member can't read is BAD: its dice hang on its id", async () => {
  // As an older server revealed a hidden decision: without its pending event (whose command id its dice derive from).
  const events = structuredClone(RECORDED.events);
  const pending = events[PENDING - 1];
  events[PENDING - 1] = { ...pending, hidden: true, type: "sealed", payload: { hidden: true, commitment: pending.body_digest } };
  const report = newReport();
  await checkDice(events, report, CAMPAIGN);
  assert.deepEqual(report.problems, [{ seq: DECISION, message: `#${DECISION} is a witnessed roll's decision whose pending event this member can't read.` }]);
});
