// What the table says of a condition (static/talekeeper/conditions.js), under Node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { conditionText, conditionsOf, effectsOn, effectsRecorded, left } from "../../static/talekeeper/conditions.js";

test("what is left of a condition, in words", () => {
  assert.equal(left({ duration: "rounds", rounds_left: 1 }), "1 round left");
  assert.equal(left({ duration: "rounds", rounds_left: 3 }), "3 rounds left");
  assert.equal(left({ duration: "scene" }), "this scene");
  assert.equal(left({ duration: "until_removed" }), "until removed");
});

test("a modifier is said in the system's word, with its sign; none is not said", () => {
  assert.equal(conditionText({ name: "In the dark", duration: "rounds", rounds_left: 2, modifier: 2 }, "DL modifier"),
    "In the dark (DL modifier +2, 2 rounds left)");
  assert.equal(conditionText({ name: "Ferido", duration: "scene", modifier: -1 }, "Dice"), "Ferido (Dice -1, this scene)");
  assert.equal(conditionText({ name: "Frightened", duration: "until_removed", modifier: 0 }), "Frightened (until removed)");
});

test("a sheet from before conditions has none", () => {
  assert.deepEqual(conditionsOf({ harm: 0 }), []);
  assert.deepEqual(conditionsOf(null), []);
});

const MDT = { reads: ["test", "opposed_test"], effect: "{signed} {dice}" };

test("what a character's conditions change on an action the rules read them on, before it is sent", () => {
  const state = { conditions: [{ name: "Staggered", duration: "scene", modifier: -1 }, { name: "Frightened", duration: "scene", modifier: 0 },
    { name: "Blessed", duration: "rounds", rounds_left: 1, modifier: 2 }] };
  assert.deepEqual(effectsOn(state, MDT, "test"), ["Staggered: −1 die", "Blessed: +2 dice"]);
  assert.deepEqual(effectsOn(state, MDT, "say_yes"), []); // an action that reads none says none
  assert.deepEqual(effectsOn(state, MDT), ["Staggered: −1 die", "Blessed: +2 dice"]); // a fight's round reads them all
  assert.deepEqual(effectsOn(state, null, "test"), []); // a system whose rules read none
});

test("a recorded roll names the conditions it read, a WYRM passive side's too", () => {
  assert.deepEqual(effectsRecorded({ conditions: [{ name: "Staggered", modifier: -1 }] }, MDT), ["Staggered: −1 die"]);
  const wyrm = { reads: ["check"], effect: "{signed} to the DL" };
  assert.deepEqual(effectsRecorded({ opposition: { conditions: 2 } }, wyrm), ["their conditions: −2 to the DL"]);
  assert.deepEqual(effectsRecorded({ total: 3 }, wyrm), []);
  assert.deepEqual(effectsRecorded({ vs_conditions: -1 }, MDT), ["their conditions: −1 die"]);
});
