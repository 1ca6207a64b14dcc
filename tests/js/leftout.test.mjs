// What a witness's table says when a witnessed roll is decided without what it sent
// (static/talekeeper/leftout.js), under Node's own test runner. The server's "already committed" and
// "already witnessed" count only when the log holds a commitment (in the close) or a reveal (in the
// decision) of hers to that roll: a host answering either, storing nothing, is named like any drop.
import { test } from "node:test";
import assert from "node:assert/strict";

import { leftOutNote } from "../../static/talekeeper/leftout.js";

const ME = 2;
const ROLL = 10;
const events = new Map([
  [11, { seq: 11, type: "roll_committed", actor_id: ME, payload: { roll: ROLL } }],
  [12, { seq: 12, type: "roll_committed", actor_id: 3, payload: { roll: ROLL } }],
  [14, { seq: 14, type: "roll_witnessed", actor_id: ME, payload: { roll: ROLL } }],
  [15, { seq: 15, type: "roll_witnessed", actor_id: 3, payload: { roll: ROLL } }],
  [16, { seq: 16, type: "roll_committed", actor_id: ME, payload: { roll: 99 } }],
]);
const eventAt = (seq) => events.get(seq);
const sent = (fields) => ({ entropy: "A".repeat(43), committed: null, commitRefused: null, seq: null, refused: null,
  at: null, ...fields });
const decision = (witnessedBy) => ({ command_of: ROLL, witnessed_by: witnessedBy, witness_digest: "0".repeat(64) });
const note = (mine, closed, witnessedBy) => leftOutNote(mine, decision(witnessedBy), closed, ME, eventAt);

test("nothing to say when nothing was sent here, or what was sent was used", () => {
  assert.equal(note(undefined, [12], [15]), "");
  assert.equal(note(sent({ committed: 11, seq: 14, at: 300 }), [11, 12], [14, 15]), "");
});

test("'already committed' is fine only if the close holds a commitment of hers to this roll", () => {
  const refused = sent({ commitRefused: "already_committed" });
  assert.equal(note(refused, [11, 12], [15]), ""); // committed from another of her devices
  for (const closed of [[12], [], undefined, [16, 12]]) { // none of hers, or hers to another roll
    assert.match(note(refused, closed, [15]),
      /^Your table sent its commitment, and the roll was decided without it \(the server answered: already_committed\)/,
      JSON.stringify(closed));
  }
});

test("'already witnessed' is fine only if the decision names a reveal of hers to this roll", () => {
  const refused = sent({ committed: 11, refused: "already_witnessed", at: 1500 });
  assert.equal(note(refused, [11, 12], [14, 15]), "");
  for (const witnessedBy of [[15], [], [11, 15]]) { // none of hers, or one that is no reveal
    assert.match(note(refused, [11, 12], witnessedBy),
      /^Your table sent its contribution 1\.5 s after the roll reached your table, and the roll was decided without it \(the server answered: already_witnessed\)/,
      JSON.stringify(witnessedBy));
  }
});

test("any other drop is named", () => {
  assert.match(note(sent({ commitRefused: "commitments_closed" }), [12], [15]), /answered: commitments_closed/);
  assert.match(note(sent({ committed: 11 }), [12], [15]), /^Your table's commitment \(#11\) is not among those/);
  assert.match(note(sent({ committed: 11, seq: 14, at: 10 }), [11, 12], [15]), /^Your table's contribution \(#14\) is not among/);
  assert.match(note(sent({ committed: 11, refused: "roll_resolved", at: 10 }), [11, 12], [15]), /already decided/);
});
