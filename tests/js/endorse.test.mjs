// Vouching for a new key in the browser's check (static/talekeeper/signed.js, rule 8; docs/fair-dice.md
// "Vouching for a new key"), with real Ed25519 signatures, under Node's own test runner: a member's first
// key is taken on first use, a later one is "not vouched for" until an older key of hers endorses it, and a
// forged endorsement is BAD.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, createPrivateKey, sign } from "node:crypto";

import { CommandCheck, ENDORSE_KEY, KEY_ADDED, KEY_REVOKED } from "../../static/talekeeper/signed.js";
import { keyChoices, signedBytes, toB64url } from "../../static/talekeeper/keys.js";

const CAMPAIGN = 7;
const ACTORS = { alice: 2, bob: 3 };

/** A deterministic Ed25519 key for `name` (PKCS#8 around a 32-byte seed). */
function keyOf(name) {
  const seed = createHash("sha256").update(`talekeeper-js-test|${name}`).digest();
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const priv = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  return { priv, pub: priv.export({ format: "jwk" }).x }; // x: the raw 32-byte public key, base64url, no padding
}

let n = 0;
/** A member's command as the server stores it: its first event, signed by `device`'s key outside a session. */
function command(seq, who, type, action, payload, device) {
  const id = `cmd-${(n += 1)}`;
  const { priv, pub } = keyOf(device);
  const sig = toB64url(sign(null, signedBytes(CAMPAIGN, null, null, id, action), priv));
  return { seq, type, actor: who, actor_id: ACTORS[who], session: null,
    payload: { ...payload, command_id: id, action, signature: { key: pub, session: null, commitment: null, sig } } };
}
const pub = (device) => keyOf(device).pub;
const add = (seq, who, device) => command(seq, who, KEY_ADDED, { type: "add_member_key", key: pub(device), label: device },
  { key: pub(device), label: device }, device);
const endorse = (seq, who, target, device) => command(seq, who, "member_key_endorsed", { type: ENDORSE_KEY, key: pub(target) },
  { key: pub(target) }, device);
const revoke = (seq, who, target, device) => command(seq, who, KEY_REVOKED, { type: "revoke_member_key", key: pub(target) },
  { key: pub(target) }, device);
const created = { seq: 1, type: "campaign_created", actor: "gm", actor_id: 1, session: null, payload: { signed_commands: true } };

async function run(events) {
  const check = new CommandCheck(CAMPAIGN);
  // Alice and Bob are players (their joins are left out of these logs: who may send is senders.test.mjs's).
  for (const id of Object.values(ACTORS)) check.seats.roles.set(id, "player");
  const verdicts = [];
  for (const ev of events) verdicts.push(await check.check(ev));
  const vouched = Object.fromEntries(check.keyList().map((k) => [k.label, k.vouched]));
  return { check, verdicts, vouched };
}

test("a member's first key is taken on first use; a second is not vouched for until her first endorses it", async () => {
  const before = await run([created, add(2, "alice", "laptop"), add(3, "alice", "phone"), add(4, "bob", "bob's")]);
  assert.deepEqual(before.verdicts.map((v) => v.problems), [[], [], [], []]);
  assert.deepEqual(before.vouched, { laptop: true, phone: false, "bob's": true });
  assert.equal(before.check.unvouched(pub("phone")), true);
  const after = await run([created, add(2, "alice", "laptop"), add(3, "alice", "phone"), endorse(4, "alice", "phone", "laptop")]);
  assert.deepEqual(after.verdicts.map((v) => v.state), ["server", "signed", "signed", "signed"]);
  assert.deepEqual(after.vouched, { laptop: true, phone: true });
});

test("a key added once every earlier one is revoked is taken on first use", async () => {
  const { vouched, verdicts } = await run([created, add(2, "alice", "laptop"), revoke(3, "alice", "laptop", "laptop"), add(4, "alice", "tablet")]);
  assert.deepEqual(verdicts.map((v) => v.problems), [[], [], [], []]);
  assert.deepEqual(vouched, { laptop: true, tablet: true });
});

test("two keys nobody vouched for, endorsing each other, stay not vouched for (and are not BAD)", async () => {
  const { vouched, verdicts } = await run([created, add(2, "alice", "laptop"), add(3, "alice", "host one"), add(4, "alice", "host two"),
    endorse(5, "alice", "host two", "host one"), endorse(6, "alice", "host one", "host two")]);
  assert.deepEqual(verdicts.map((v) => v.problems), [[], [], [], [], [], []]);
  assert.deepEqual(vouched, { laptop: true, "host one": false, "host two": false });
});

test("a forged endorsement is BAD: by itself, another member's key, a revoked key, for another's or a revoked key, altered", async () => {
  const base = [created, add(2, "alice", "laptop"), add(3, "alice", "host's"), add(4, "bob", "bob's"), add(5, "alice", "old"),
    revoke(6, "alice", "old", "laptop")];
  const cases = {
    itself: [endorse(7, "alice", "host's", "host's"), /is a key vouching for itself/],
    bobs: [{ ...endorse(7, "bob", "host's", "bob's"), actor: "alice", actor_id: 2 }, /signed by bob's key, but stored as alice's/],
    revokedSigner: [endorse(7, "alice", "host's", "old"), /signed by a key alice revoked at #6/],
    bobsTarget: [endorse(7, "alice", "bob's", "laptop"), /vouches for bob's key as alice's/],
    revokedTarget: [endorse(7, "alice", "old", "laptop"), /vouches for a key revoked at #6/],
    otherStored: [(() => { const e = endorse(7, "alice", "laptop", "laptop"); e.payload.key = pub("host's"); return e; })(), /stores another key/],
    altered: [(() => { const e = endorse(7, "alice", "old", "laptop"); e.payload.action = { type: ENDORSE_KEY, key: pub("host's") }; e.payload.key = pub("host's"); return e; })(), /signature does not verify/],
  };
  for (const [name, [forgery, said]] of Object.entries(cases)) {
    const { verdicts, vouched } = await run([...base, forgery]);
    assert.deepEqual(verdicts.slice(0, -1).map((v) => v.problems.length), [0, 0, 0, 0, 0, 0], name);
    assert.equal(verdicts.at(-1).state, "bad", name);
    assert.match(verdicts.at(-1).problems.join(" "), said, name);
    assert.equal(vouched["host's"], false, `${name}: a forged endorsement vouches for nothing`);
  }
});

test("the verification page offers to vouch only from a device whose own key is vouched for", () => {
  const key = (name, vouched, revoked = null) => ({ key: pub(name), vouched, revoked });
  const known = new Set([pub("laptop"), pub("phone")]);
  const phone = key("phone", false);
  // Her laptop's key, vouched for, vouches for her phone's (known here: "Vouch for it"; not known: "It is mine").
  assert.deepEqual(keyChoices(phone, key("laptop", true), known), { stranger: false, vouch: true, cannotVouch: false, revoke: true });
  assert.deepEqual(keyChoices(key("tablet", false), key("laptop", true), known),
    { stranger: true, vouch: true, cannotVouch: false, revoke: true });
  // On a device whose own key is not vouched for, an endorsement would vouch for nothing: none is offered, and it says why.
  assert.deepEqual(keyChoices(phone, key("laptop", false), known), { stranger: false, vouch: false, cannotVouch: true, revoke: true });
  assert.deepEqual(keyChoices(key("tablet", false), key("laptop", false), known),
    { stranger: true, vouch: false, cannotVouch: true, revoke: true });
  // Nothing to say: about the device's own key, a key already vouched for, a revoked one, or from a device
  // whose key the log does not hold (or revoked): it signs nothing until it registers again.
  assert.deepEqual(keyChoices(phone, phone, known), { stranger: false, vouch: false, cannotVouch: false, revoke: true });
  assert.deepEqual(keyChoices(key("phone", true), key("laptop", false), known), { stranger: false, vouch: false, cannotVouch: false, revoke: true });
  assert.deepEqual(keyChoices(key("old", false, 9), key("laptop", true), known), { stranger: false, vouch: false, cannotVouch: false, revoke: false });
  for (const mine of [undefined, key("laptop", true, 9)]) {
    assert.deepEqual(keyChoices(phone, mine, known), { stranger: false, vouch: false, cannotVouch: false, revoke: true });
  }
});
