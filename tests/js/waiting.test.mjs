// What waits for this member (static/talekeeper/waiting.js), under Node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { WaitingList, titleWith } from "../../static/talekeeper/waiting.js";

const events = new Map([3, 5, 8, 9, 12].map((seq) => [seq, { seq }]));

test("events wait in seq order, each once", () => {
  const w = new WaitingList(5);
  assert.equal(w.set(9, true), true);
  assert.equal(w.set(3, true), true);
  assert.equal(w.set(9, true), false); // already waiting: nothing changed
  assert.deepEqual(w.list(events).map((ev) => ev.seq), [3, 9]);
  assert.equal(w.set(3, false), true);
  assert.equal(w.set(3, false), false);
  assert.deepEqual(w.list(events).map((ev) => ev.seq), [9]);
});

test("an event the page no longer holds is not listed", () => {
  const w = new WaitingList(0);
  w.set(40, true);
  w.set(8, true);
  assert.deepEqual(w.list(events).map((ev) => ev.seq), [8]);
});

test("only what came after the page opened is announced, the newest, once", () => {
  const w = new WaitingList(8); // 3, 5 and 8 were there when the page opened
  for (const seq of [3, 9, 12]) w.set(seq, true);
  assert.equal(w.toAnnounce(w.list(events)).seq, 12);
  assert.equal(w.toAnnounce(w.list(events)), null); // all announced already
  w.set(12, false);
  w.set(12, true); // waits again (redrawn): not announced again
  assert.equal(w.toAnnounce(w.list(events)), null);
  const fresh = new WaitingList(8);
  fresh.set(3, true);
  assert.equal(fresh.toAnnounce(fresh.list(events)), null); // from before the page: listed, never announced
});

test("the title counts what waits", () => {
  assert.equal(titleWith(0, "The Torn Road · Talekeeper"), "The Torn Road · Talekeeper");
  assert.equal(titleWith(2, "The Torn Road · Talekeeper"), "(2) The Torn Road · Talekeeper");
});
