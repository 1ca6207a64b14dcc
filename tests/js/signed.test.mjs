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
