// What the table says of a condition (static/talekeeper/conditions.js), under Node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { conditionText, conditionsOf, left } from "../../static/talekeeper/conditions.js";

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
