// The table's pure formatting (static/talekeeper/format.js), under Node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  askedAction, eventTime, fillTemplate, keptNote, minuteUTC, orderCharacters, playerCount, renamed, sessionCommands, sessionLine,
  termText, textOf,
} from "../../static/talekeeper/format.js";

test("a declared sentence fills from the payload, a missing value as ?", () => {
  assert.equal(fillTemplate("earned {points} points", { points: 3 }), "earned 3 points");
  assert.equal(fillTemplate("gave the turn to {name} (round {round})", { round: 2, name: "O'Brien" }),
    "gave the turn to O'Brien (round 2)");
  assert.equal(fillTemplate("ended the encounter “{name}” after {rounds|round|rounds}", { name: "Ambush" }),
    "ended the encounter “Ambush” after ? rounds");
});

test("a count agrees with its noun", () => {
  const t = "after {rounds|round|rounds}";
  assert.equal(fillTemplate(t, { rounds: 0 }), "after 0 rounds");
  assert.equal(fillTemplate(t, { rounds: 1 }), "after 1 round");
  assert.equal(fillTemplate(t, { rounds: 2 }), "after 2 rounds");
});

test("an optional part is said only when every value in it is given", () => {
  const t = "started scene {scene}[: “{name}”]";
  assert.equal(fillTemplate(t, { scene: 2, name: "The ford" }), "started scene 2: “The ford”");
  assert.equal(fillTemplate(t, { scene: 2 }), "started scene 2");
  assert.equal(fillTemplate(t, { scene: 2, name: "" }), "started scene 2");
  assert.equal(fillTemplate(t, { scene: 2, name: null }), "started scene 2");
});

test("a filled-in value is never read again as a template", () => {
  assert.equal(fillTemplate("said {text}", { text: "{secret} [x{y}]" }), "said {secret} [x{y}]");
  assert.equal(fillTemplate("[named {name}]", { name: "{name}" }), "named {name}");
});

test("an event stored under a former name reads under today's", () => {
  const { nowName, asNow } = renamed({ fate_spent: "spend_fate_rolled" });
  assert.equal(nowName("fate_spent"), "spend_fate_rolled");
  assert.equal(nowName("roll"), "roll");
  const ev = { seq: 4, type: "fate_spent", payload: {} };
  assert.deepEqual(asNow(ev), { seq: 4, type: "spend_fate_rolled", payload: {}, stored_type: "fate_spent" });
  assert.equal(asNow({ seq: 5, type: "roll" }).stored_type, undefined);
  assert.equal(ev.type, "fate_spent"); // the event as stored is left as it is (the chain checks it)
});

test("the text of a description: strings and nodes alike", () => {
  assert.equal(textOf("rolled 2d6"), "rolled 2d6");
  assert.equal(textOf(["voided ", { textContent: "#3" }, " (a roll)", null]), "voided #3 (a roll)");
});

test("times are UTC, as stored", () => {
  assert.deepEqual(eventTime("2026-03-01T19:42:07.123456+00:00"), { shown: "19:42 UTC", title: "2026-03-01 19:42:07 UTC" });
  assert.equal(minuteUTC("2026-03-01T19:42:07.123456+00:00"), "2026-03-01 19:42 UTC");
  assert.equal(minuteUTC("2026-03-01T23:30:00-02:00"), "2026-03-02 01:30 UTC");
});

test("the session line and the GM's buttons", () => {
  assert.equal(sessionLine(null, null, null), "No session running");
  assert.equal(sessionLine(3, null, null), "Session 3, between scenes");
  assert.equal(sessionLine(3, 2, null), "Session 3, scene 2");
  assert.equal(sessionLine(3, 2, "The ford"), "Session 3, scene 2: The ford");
  assert.deepEqual(sessionCommands(null, null), {
    allowed: { start_session: true, start_scene: false, end_scene: false, end_session: false }, why: "" });
  assert.deepEqual(sessionCommands(3, null).allowed, { start_session: false, start_scene: true, end_scene: false, end_session: true });
  assert.deepEqual(sessionCommands(3, 2), {
    allowed: { start_session: false, start_scene: false, end_scene: true, end_session: false }, why: "End scene 2 first." });
});

test("a result kept more hidden than asked says why, to its sender", () => {
  const alice = { isGM: false, username: "alice", char: { name: "Ayasha", owner: "alice" } };
  assert.equal(keptNote({ visibility: "public" }, "public", alice), null);
  assert.equal(keptNote({ visibility: "gm" }, null, alice), null); // nothing asked: nothing to say
  assert.equal(keptNote({ visibility: "gm", payload: {} }, "secret", alice), null); // hers and the GM's, as asked
  assert.match(keptNote({ visibility: "gm", hidden: true }, "public", alice), /^Kept for the GM/);
  assert.equal(keptNote({ visibility: "gm", payload: { shared_with: [{ username: "alice" }, { username: "bob" }] } }, "public", alice),
    "Kept for you, bob and the GM: it reads a secret or GM-only event not revealed yet, so only who may read that reads this.");
  const gm = (shown) => ({ isGM: true, username: "gm", char: { name: "Ghoul", owner: "gm", npc: true, shown } });
  assert.match(keptNote({ visibility: "gm" }, "public", gm("hidden")), /don't know Ghoul is here/);
  assert.match(keptNote({ visibility: "gm" }, "public", gm("name")), /know only Ghoul's name/);
  assert.equal(keptNote({ visibility: "gm", payload: {} }, "public", gm("full")),
    "Kept for you: it reads a secret or GM-only event not revealed yet, so only who may read that reads this.");
});

test("the tabs: this member's characters first, then by name and id", () => {
  const list = [
    { id: 4, name: "Borin", owner: "bob" }, { id: 2, name: "Zed", owner: "alice" },
    { id: 3, name: "Ayasha", owner: "bob" }, { id: 1, name: "Ayasha", owner: "gm" }, { id: 5, name: "Mira", owner: "alice" },
  ];
  assert.deepEqual(orderCharacters(list, "alice").map((c) => c.id), [5, 2, 1, 3, 4]);
  assert.deepEqual(list.map((c) => c.id), [4, 2, 3, 1, 5]); // the list itself is left alone
});

test("every player is asked: not the NPCs, not the GM's own", () => {
  const roles = { gm: "gm", alice: "player", bob: "player" };
  const chars = [{ owner: "alice" }, { owner: "bob" }, { owner: "gm" }, { owner: "gm", npc: true }, { owner: "alice", npc: true }];
  assert.equal(playerCount(chars, (name) => roles[name]), 2);
  assert.equal(playerCount([].values(), (name) => roles[name]), 0);
});

test("a dice term says what joins it", () => {
  assert.equal(termText({ sign: 1 }, "2d6"), "+2d6");
  assert.equal(termText({ sign: -1 }, "1d4"), "−1d4");
  assert.equal(termText({ sign: 1, op: "*" }, "2"), "×2");
  assert.equal(termText({ sign: 1, label: "fire" }, "2d6"), "+2d6 fire");
});

test("a roll request's action: where members sign, the one it asks for; else its action", () => {
  const check = { type: "check", dl: 12 };
  assert.deepEqual(askedAction({ asked: check, action: { type: "request_roll" } }), check);
  assert.deepEqual(askedAction({ action: check }), check);
});
