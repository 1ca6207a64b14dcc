// Who could send a member's command, as the browser checks it (static/talekeeper/senders.js `Seats`, run by
// signed.js `CommandCheck` on the table and the verification page), under Node's own test runner: a
// player acting for the GM's NPC or own character, a spectator acting for anyone, and a command by someone
// who never joined or was removed are named; a page whose window starts after the log's first event names
// nobody; and where the GM's rolls are witnessed (witness.js `WitnessBook`), a roll for a GM's character
// stored without waiting is named whoever sent it. (rules/senders.py says the same of the same logs:
// tests/test_js.py compares them on tests/rules/test_senders.py's.)
import { test } from "node:test";
import assert from "node:assert/strict";

import { sha256Hex } from "../../static/talekeeper/chain.js";
import { Seats } from "../../static/talekeeper/senders.js";
import { CommandCheck } from "../../static/talekeeper/signed.js";
import { WitnessBook, said as witnessSaid } from "../../static/talekeeper/witness.js";

const NAMES = { 1: "gm", 2: "alice", 3: "bob", 4: "watcher" };
const SIGNATURE = { key: "k", session: null, commitment: null, sig: "s" };
const ev = (seq, type, payload, actor = 1, extra = {}) => ({ seq, type, payload, actor_id: actor, actor: NAMES[actor], session: null, character: null, ...extra });
const command = (seq, actor, action, type = action.type, extra = {}, payload = {}) =>
  ev(seq, type, { ...payload, command_id: `c${seq}`, action, signature: SIGNATURE }, actor, extra);
const roll = (seq, actor, character) => command(seq, actor, { type: "roll", notation: "1d20", ...(character ? { character } : {}) },
  "roll", { session: 1, character: character ?? null }, { dice_log: [[20, 7]] });

const table = (witnessed = "off") => [
  ev(1, "campaign_created", { gm: "gm", signed_commands: true, witnessed_rolls: witnessed }),
  ev(2, "member_joined", { username: "alice", user_id: 2, role: "player" }),
  ev(3, "member_joined", { username: "watcher", user_id: 4, role: "spectator" }),
  command(4, 2, { type: "create_character", name: "Hero" }, "character_created", { character: 10 }, { owner_id: 2 }),
  command(5, 1, { type: "create_character", name: "Ogre", npc: true }, "character_created", { character: 11 }, { owner_id: 1, npc: true }),
  command(6, 1, { type: "create_character", name: "Keeper" }, "character_created", { character: 12 }, { owner_id: 1 }),
  ev(7, "session_started", { session: 1 }, 1, { session: 1 }),
];

function said(events) {
  const seats = new Seats();
  return events.map((e) => [e.seq, seats.see(e).problem]).filter(([, p]) => p);
}

test("a player acts for her own character and the GM for any; nobody else is named", () => {
  assert.deepEqual(said([...table(), roll(8, 2, 10), roll(9, 1, 10), roll(10, 1, 11), roll(11, 2)]), []);
});

test("a player for the GM's NPC or own character, and a spectator for anyone, are named", () => {
  const out = said([...table(), roll(8, 2, 11), roll(9, 2, 12), roll(10, 4, 10)]);
  assert.deepEqual(out.map(([seq]) => seq), [8, 9, 10]);
  assert.match(out[0][1], /^a command for character 11, which its sender may not act for: an NPC is the GM's$/);
  assert.match(out[1][1], /it is another member's$/);
  assert.match(out[2][1], /a spectator acts for nobody$/);
});

test("a command by someone who never joined, or after her removal, is named; a page read from later names nobody", () => {
  const removed = ev(8, "member_removed", { username: "alice", user_id: 2, role: "player" });
  const out = said([...table(), roll(8, 3), removed, roll(10, 2, 10)]);
  assert.deepEqual(out.map(([seq]) => seq), [8, 10]);
  assert.match(out[0][1], /^a command by someone who is not a member of the campaign at this point of the log/);
  assert.deepEqual(said([...table().slice(1), roll(8, 3), roll(9, 2, 11)]), []);
});

test("the table's command check names such a command as a member's command that does not check out", async () => {
  const check = new CommandCheck(7);
  const verdicts = [];
  for (const e of [...table(), roll(8, 2, 11)]) verdicts.push(await check.check(e));
  const last = verdicts.at(-1);
  assert.equal(last.state, "bad");
  assert.ok(last.problems.includes("#8 is a command for character 11, which its sender may not act for: an NPC is the GM's."), last.problems);
});

test("where the GM's rolls are witnessed, a roll for her character that did not wait is named whoever sent it", async () => {
  const book = new WitnessBook(sha256Hex);
  const out = [];
  for (const e of [...table("gm"), roll(8, 2, 10), roll(9, 2), roll(10, 2, 11), roll(11, 2, 12)]) {
    out.push(...(await book.see(e)).map(witnessSaid));
  }
  assert.equal(out.length, 2, JSON.stringify(out));
  assert.match(out[0], /^#10 is a roll for a character of a GM's \(an NPC, or one a GM owns\), whose rolls this campaign witnesses \(gm\), stored without waiting/);
  assert.match(out[1], /^#11 is a roll for a character of a GM's/);
});
