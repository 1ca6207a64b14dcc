// The switch that turns members' signatures on in a campaign made before them (static/talekeeper/signed.js,
// docs/fair-dice.md "Which campaigns"), under Node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { CommandCheck, SIGNING_REQUIRED } from "../../static/talekeeper/signed.js";

const roll = (seq, extra = {}) => ({ seq, type: "roll", actor: "alice", actor_id: 2, session: null, payload: { notation: "1d6", total: 3, ...extra } });
const switchAt = (seq, payload = { signed_commands: true }, session = null) => ({ seq, type: SIGNING_REQUIRED, actor: "gm", actor_id: 1, session, payload });

async function run(events) {
  const check = new CommandCheck(7);
  const verdicts = [];
  for (const ev of events) verdicts.push(await check.check(ev));
  return { check, verdicts };
}

test("before the switch a member's command is not signed; from it on, an unsigned one is BAD", async () => {
  const { check, verdicts } = await run([roll(1), switchAt(2), roll(3)]);
  assert.equal(check.signingFrom, 2);
  assert.deepEqual(verdicts.map((v) => v.state), ["unsigned", "server", "bad"]);
  assert.match(verdicts[2].problems[0], /no signature/);
});

test("a second switch, one inside a session, or one that says off is BAD", async () => {
  const second = await run([switchAt(1), switchAt(2, { signed_commands: false })]);
  assert.match(second.verdicts[1].problems[0], /never switched off or on again/);
  const inside = await run([switchAt(1, { signed_commands: true }, 1)]);
  assert.match(inside.verdicts[0].problems[0], /between sessions only/);
  const off = await run([switchAt(1, { signed_commands: false })]);
  assert.match(off.verdicts[0].problems[0], /never switched off/);
});

test("a later event of a command whose first event is sealed from this member is hers to skip, not BAD", async () => {
  // A GM's hidden witnessed roll: its pending event (the signed command) is sealed from a player; its public
  // call and close name it. Only the GM's export reads its signature (the standalone verifier says the same).
  const sealed = { seq: 2, type: "sealed", hidden: true, actor: "gm", actor_id: 1, session: 1, payload: { hidden: true } };
  const call = { seq: 3, type: "witness_call", actor: "gm", actor_id: 1, session: 1, payload: { witnesses: [2], command_of: 2 } };
  const close = { seq: 4, type: "commitments_closed", actor: "gm", actor_id: 1, session: 1, payload: { command_of: 2, committed: [] } };
  const { verdicts } = await run([switchAt(1), sealed, call, close]);
  assert.deepEqual(verdicts.map((v) => [v.state, v.problems]), [["server", []], ["sealed", []], ["sealed", []], ["sealed", []]]);
  // One naming an event she reads that is no command, or one not before it, is BAD as ever.
  const note = { seq: 2, type: "note_posted", actor: "gm", actor_id: 1, session: 1, payload: { text: "hi" } };
  const naming = await run([switchAt(1), note, { ...call, payload: { ...call.payload, command_of: 2 } }, { ...close, payload: { command_of: 5 } }]);
  assert.deepEqual(naming.verdicts.slice(2).map((v) => v.problems), [
    ["#3 says it is part of the command at #2, which is no command's first event before it."],
    ["#4 says it is part of the command at #5, which is no command's first event before it."]]);
});

test("a later event of a command before the table's window can't be judged there, and is not BAD", async () => {
  const check = new CommandCheck(7);
  check.prime({ signingFrom: 1 });
  const decision = { seq: 40, type: "roll", actor: "gm", actor_id: 1, session: 1, payload: { command_of: 38, dice_log: [[6, 2]] } };
  const later = { seq: 41, type: "roll", actor: "gm", actor_id: 1, session: 1, payload: { command_of: 40 } };
  const none = { ...later, seq: 42, payload: { command_of: 0 } }; // no seq at all, whatever the window
  assert.deepEqual([(await check.check(decision)).problems, (await check.check(later)).problems, (await check.check(none)).problems],
    [[], ["#41 says it is part of the command at #40, which is no command's first event before it."],
      ["#42 says it is part of the command at #0, which is no command's first event before it."]]);
});
