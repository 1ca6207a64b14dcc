// Updates wait while a button is held down (static/talekeeper/press.js), under Node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { Press } from "../../static/talekeeper/press.js";

// A Press whose "after the click" runs when the test says.
function pressWithClock() {
  const later = [];
  const press = new Press((fn) => later.push(fn));
  return { press, tick: () => later.splice(0).forEach((fn) => fn()) };
}

test("nothing held: an update runs at once", () => {
  const { press } = pressWithClock();
  const ran = [];
  press.whenFree("scroll", () => ran.push("scroll"));
  assert.deepEqual(ran, ["scroll"]);
  assert.equal(press.holds(), false);
});

test("held down: updates wait for the release and the click after it, the latest of each kept", () => {
  const { press, tick } = pressWithClock();
  const box = { name: "follow box" };
  const ran = [];
  press.down(box);
  assert.equal(press.holds(box), true);
  assert.equal(press.holds({ name: "another box" }), false);
  press.whenFree("scroll", () => ran.push("scroll 1"));
  press.hold(box, () => ran.push("box 1"));
  press.hold(box, () => ran.push("box 2")); // the latest update of the box wins
  assert.deepEqual(ran, []);
  press.release();
  assert.deepEqual(ran, []); // not before the click the release causes
  tick();
  assert.deepEqual(ran, ["scroll 1", "box 2"]);
  tick();
  assert.deepEqual(ran, ["scroll 1", "box 2"]); // each once
});

test("pressed again before the click: the next release runs them", () => {
  const { press, tick } = pressWithClock();
  const ran = [];
  press.down("box");
  press.hold("list", () => ran.push("list"));
  press.release();
  press.down("box");
  tick();
  assert.deepEqual(ran, []);
  press.release();
  tick();
  assert.deepEqual(ran, ["list"]);
});

test("a press outside any box holds nothing", () => {
  const { press } = pressWithClock();
  press.down(null);
  const ran = [];
  press.whenFree("scroll", () => ran.push("scroll"));
  assert.deepEqual(ran, ["scroll"]);
});
