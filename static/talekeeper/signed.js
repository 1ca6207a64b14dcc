// Members' signed commands as this browser checks them (docs/fair-dice.md, "What every verifier checks").
//
// `CommandCheck` reads events in seq order and says, for each one a member may read, what is wrong
// with it as a member's command:
//   1. it is server-made, or a command's first event (command_id, action, signature), or a later
//      event of a command (`command_of` naming an earlier first event of the same actor and session);
//   2. the signing key was added for that member, self-signed, at a lower seq and not revoked since;
//   3. the Ed25519 signature verifies over the bytes built from this campaign, the signed session and
//      commitment, the command id and the action as stored;
//   4. the signed session and commitment are the event's session and that session's commitment;
//   5. every die the page shows is a die of `dice_log` (the rules replay itself is the server's
//      verify_dice and the standalone verifier's: they run the rules, this browser does not);
//   6. no member uses a command id twice;
//   7. once signing is on it never goes off: no later session under an older dice scheme, no roll
//      stored "not verifiable" inside a session;
//   8. its sender could send it: a member at that point of the log, acting for characters she may act
//      for (./senders.js; read from the log's first event only);
//   9. an endorsement (`endorse_member_key`, stored as `member_key_endorsed`) names a live key of the
//      same member other than the one that signs it (rules/vouching.py reads the same rules). A key she
//      adds while she holds a live key is `vouched: false` until a key of hers that is vouched for
//      endorses it: not BAD, but said ("not vouched for by her earlier keys"); her first is taken on first use.
// Before signing is on (older logs) member commands are counted as "not signed": the host could have
// sent them in the member's name. A signature they carry anyway is checked like any other.

import { DICE_V3, jcs } from "./chain.js";
import { fromB64url, signedBytes } from "./keys.js";
import { Seats } from "./senders.js";
import * as ed25519 from "./vendor/noble-ed25519/index.js";

export { DICE_V3 };
// Events the server makes on its own, with no member's command: the only events without a signature.
export const SERVER_MADE = new Set(["campaign_created", "member_joined"]);
export const KEY_ADDED = "member_key_added";
export const KEY_REVOKED = "member_key_revoked";
export const ENDORSE_KEY = "endorse_member_key";
export const KEY_ENDORSED = "member_key_endorsed";
export const UNVOUCHED = "not vouched for by her earlier keys";
// The GM's switch in a campaign made before signed commands: members sign from this event on, for good.
export const SIGNING_REQUIRED = "signed_commands_required";

// --- signatures -----------------------------------------------------------------------------------

const subtle = globalThis.crypto?.subtle;
const imported = new Map(); // public key -> Promise<CryptoKey | null>
let webVerify = null; // whether WebCrypto verifies Ed25519 here (checked on first use)

async function verifySignature(publicKey, sig, bytes) {
  let raw;
  let signature;
  try {
    raw = fromB64url(publicKey);
    signature = fromB64url(sig);
  } catch {
    return false;
  }
  if (raw.length !== 32 || signature.length !== 64) return false;
  if (subtle && webVerify !== false) {
    try {
      if (!imported.has(publicKey)) imported.set(publicKey, subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]));
      const result = await subtle.verify({ name: "Ed25519" }, await imported.get(publicKey), signature, bytes);
      webVerify = true;
      return result;
    } catch (problem) {
      imported.delete(publicKey);
      if (webVerify === true) return false; // WebCrypto works here: this key is not a key
      webVerify = false; // no Ed25519 in this browser's WebCrypto: noble from now on
    }
  }
  try {
    return ed25519.verify(signature, bytes, raw);
  } catch {
    return false;
  }
}

// --- the dice a page shows -------------------------------------------------------------------------

// Keys whose dice are copies of dice shown elsewhere in the same payload (sorted for display, a
// reroll's "before" and "after" beside the roll's own `dice`), or not dice at all.
const COPIES = new Set(["sorted", "columns", "odds", "original_dice", "new_dice", "exchanges", "dice_log", "action", "filled", "signature", "asked"]);
const isFace = (v) => Number.isSafeInteger(v);

/** Every die face a payload shows (in the order found): a `face` of any object, and the plain faces listed
 *  under a `dice` key (or `*_dice`, or inside an object under `dice`), copies left out. */
export function shownFaces(payload, out = []) {
  if (!payload || typeof payload !== "object") return out;
  if (Array.isArray(payload)) {
    for (const item of payload) shownFaces(item, out);
    return out;
  }
  if (payload.fate === true && Array.isArray(payload.dice)) { // a Fate die is a d3 shown as -1, 0, +1 (rules/notation.py)
    for (const d of payload.dice) if (isFace(d?.face)) out.push(d.face + 2);
    return out;
  }
  if (isFace(payload.face)) out.push(payload.face);
  for (const [key, value] of Object.entries(payload)) {
    if (COPIES.has(key) || key === "face" || !value || typeof value !== "object") continue;
    const diceKey = key === "dice" || key.endsWith("_dice");
    if (diceKey && Array.isArray(value) && value.every(isFace)) out.push(...value);
    else if (diceKey && !Array.isArray(value)) {
      for (const inner of Object.values(value)) {
        if (Array.isArray(inner) && inner.every(isFace)) out.push(...inner);
        else shownFaces(inner, out);
      }
    } else shownFaces(value, out);
  }
  return out;
}

/** Why the dice a payload shows are not its `dice_log` ("" when they are): each die shown must be one
 *  rolled, every die rolled is shown, and no face is beyond its die. */
export function diceShownProblem(seq, payload) {
  const log = payload?.dice_log;
  if (!Array.isArray(log) || !log.length) return "";
  if (!log.every((d) => Array.isArray(d) && isFace(d[0]) && isFace(d[1]) && d[1] >= 1 && d[1] <= d[0])) {
    return `#${seq}'s dice_log holds a face beyond its die.`;
  }
  const rolled = log.map((d) => d[1]).sort((a, b) => a - b);
  const shown = shownFaces(payload).sort((a, b) => a - b);
  if (!shown.length) return ""; // a roll whose dice the page does not show (a hidden stub's, a system's own)
  if (jcs(rolled) === jcs(shown)) return "";
  return `#${seq} shows the dice ${shown.join(", ")}, but the dice rolled (dice_log) are ${rolled.join(", ")}.`;
}

// --- the log's members' commands --------------------------------------------------------------------

const nothing = (v) => v === null || v === undefined;

/**
 * Checks events in seq order (call `check` for each, awaiting it). Each result is
 * {problems: [text], state}: state "signed" (a member's command, signature and all checked),
 * "part" (a later event of a checked command), "server" (server-made), "unsigned" (before signing is
 * on: not signed), "sealed" (this member may not read it) or "bad".
 */
export class CommandCheck {
  constructor(campaignId) {
    this.campaignId = campaignId;
    this.signingFrom = null; // the first seq at which every member command must be signed
    this.keys = new Map(); // public key -> {actor, member, label, added, revoked, vouched}
    this.firsts = new Map(); // seq of a command's first event -> {actor, session}
    this.ids = new Map(); // JSON [actor, command id] -> seq
    this.commitments = new Map(); // session -> its session_started dice commitment
    this.counts = { signed: 0, unsigned: 0, sealed: 0, server: 0, bad: 0 };
    this.sealed = new Set(); // seqs this member received sealed
    this.from = null; // the first seq checked here: the table checks a window of the log, the verification page all of it
    this.seats = new Seats(); // who is a member, and whose each character is (rule 8)
  }

  /** What happened before the first event this browser checks (the table's window): keys as listed by
   *  the server (each one's own event checked by the caller), signing on or not, sessions' commitments. */
  prime({ signingFrom = null, keys = [], commitments = {} } = {}) {
    this.signingFrom = signingFrom;
    for (const k of keys) this.keys.set(k.key, { actor: k.actor ?? null, member: k.member, label: k.label, added: k.added, revoked: k.revoked ?? null });
    for (const [n, c] of Object.entries(commitments)) this.commitments.set(Number(n), c);
  }

  /** The member keys known so far, oldest first: [{key, member, label, added, revoked, vouched}]; `vouched`
   *  is false for a key added while its member held a live key and no key of hers vouched for since
   *  (undefined for a key primed from the server's list: the verification page reads every one from #1). */
  keyList() { return [...this.keys].map(([key, k]) => ({ key, ...k })).sort((a, b) => a.added - b.added); }

  signingOn(seq) { return this.signingFrom !== null && seq >= this.signingFrom; }

  async check(ev) {
    const problems = [];
    const sender = this.seats.see(ev).problem;
    const p = ev.payload || {};
    const on = this.signingOn(ev.seq);
    let state;
    this.from ??= ev.seq;
    if (ev.hidden) { // its body is sealed from this member; a reveal shows it later
      this.sealed.add(ev.seq);
      state = "sealed";
    } else if (ev.type === SIGNING_REQUIRED) state = this._switch(ev, p, problems);
    else state = await this._command(ev, p, on, problems);
    if (ev.type === "campaign_created" && p.signed_commands === true && this.signingFrom === null) this.signingFrom = ev.seq;
    if (ev.type === "session_started" && !ev.hidden) this._sessionStarted(ev, p, problems);
    if (on && p.verifiable === false && !nothing(ev.session)) {
      problems.push(`#${ev.seq} is stored "not verifiable" inside session ${ev.session}: once members sign, every roll of a session is verifiable.`);
    }
    if (!ev.hidden) {
      const dice = diceShownProblem(ev.seq, p);
      if (dice) problems.push(dice);
    }
    if (sender) problems.push(`#${ev.seq} is ${sender}.`);
    if (problems.length) state = "bad";
    this.counts[state === "part" ? "signed" : state] += 1;
    return { problems, state };
  }

  /** The switch that turns signing on: one only, between sessions, saying only "on". */
  _switch(ev, p, problems) {
    if (this.signingFrom === null) this.signingFrom = ev.seq;
    if (this.signingFrom !== ev.seq) {
      problems.push(`#${ev.seq} switches signed commands again, which came on at #${this.signingFrom}: they are required once, and never switched off or on again.`);
    } else if (!nothing(ev.session)) {
      problems.push(`#${ev.seq} switches signed commands on inside a session: they come on between sessions only.`);
    } else if (jcs(p) !== jcs({ signed_commands: true })) {
      problems.push(`#${ev.seq} is a switch of signed commands that does not say they are required: signing is never switched off.`);
    }
    return "server";
  }

  _sessionStarted(ev, p, problems) {
    if (!nothing(p.session)) this.commitments.set(p.session, p.dice_commitment ?? null);
    if (p.dice_scheme === DICE_V3) {
      if (this.signingFrom === null) this.signingFrom = ev.seq + 1;
    } else if (this.signingFrom !== null && ev.seq >= this.signingFrom) {
      problems.push(`#${ev.seq} starts session ${p.session} under an older dice scheme (${p.dice_scheme}) after members began signing: a downgrade.`);
    }
  }

  /** Rules 1-4 and 6 for one readable event; returns its state. */
  async _command(ev, p, on, problems) {
    const isFirst = !nothing(p.command_id) || !nothing(p.signature);
    if (!nothing(p.command_of)) {
      const named = p.command_of;
      const first = this.firsts.get(named);
      if (!first && Number.isSafeInteger(named) && named >= 1 && named < ev.seq && (this.sealed.has(named) || named < this.from)) {
        // Its command's first event is sealed from this member (a GM's hidden witnessed roll, named by its public
        // call and close), or before this page's window: the GM's export, or the verification page, checks it.
        return "sealed";
      }
      if (!first || p.command_of >= ev.seq) {
        problems.push(`#${ev.seq} says it is part of the command at #${p.command_of}, which is no command's first event before it.`);
      } else if (first.actor !== (ev.actor_id ?? null) || first.session !== (ev.session ?? null)) {
        problems.push(`#${ev.seq} says it is part of #${p.command_of}'s command, but another member or session made that one.`);
      }
      return "part";
    }
    if (SERVER_MADE.has(ev.type) && !isFirst) return "server";
    if (!isFirst || nothing(p.signature)) {
      if (!on) return nothing(ev.actor_id) && !isFirst ? "server" : this._remember(ev, p, "unsigned");
      problems.push(`#${ev.seq} (${ev.type}) is a member's command with no signature: the host could have sent it in ${ev.actor || "a member"}'s name.`);
      return "bad";
    }
    await this._signature(ev, p, problems);
    return this._remember(ev, p, "signed", problems);
  }

  _remember(ev, p, state, problems = []) {
    if (!nothing(p.command_id)) {
      const id = JSON.stringify([ev.actor_id ?? null, p.command_id]);
      if (this.ids.has(id)) problems.push(`#${ev.seq} is stored under the command id of #${this.ids.get(id)} by the same member: the same id rolls the same dice.`);
      else this.ids.set(id, ev.seq);
      this.firsts.set(ev.seq, { actor: ev.actor_id ?? null, session: ev.session ?? null });
    }
    return state;
  }

  async _signature(ev, p, problems) {
    const s = p.signature;
    const who = ev.actor || "this member";
    if (typeof s !== "object" || typeof s.key !== "string" || typeof s.sig !== "string" || typeof p.command_id !== "string"
        || !p.action || typeof p.action !== "object") {
      problems.push(`#${ev.seq}'s signature is not a signed command (key, sig, command_id and action).`);
      return;
    }
    const adding = ev.type === KEY_ADDED;
    const known = this.keys.get(s.key);
    if (adding) { // self-signed: the key it registers signs it
      if (s.key !== p.action.key || s.key !== p.key) problems.push(`#${ev.seq} adds a key for ${who} that did not sign it: a key is registered by itself.`);
      else if (known && nothing(known.revoked)) problems.push(`#${ev.seq} adds a key that is already live.`);
    } else if (!known || known.added >= ev.seq) {
      problems.push(`#${ev.seq} is signed by a key the log never registered for ${who} before it.`);
    } else if (known.actor !== (ev.actor_id ?? null)) {
      problems.push(`#${ev.seq} is signed by ${known.member}'s key, but stored as ${who}'s.`);
    } else if (!nothing(known.revoked) && known.revoked < ev.seq) {
      problems.push(`#${ev.seq} is signed by a key ${who} revoked at #${known.revoked}.`);
    }
    const bytes = signedBytes(this.campaignId, s.session ?? null, s.commitment ?? null, p.command_id, p.action);
    if (!(await verifySignature(s.key, s.sig, bytes))) {
      problems.push(`#${ev.seq}'s signature does not verify: the action, id, session or commitment stored is not what ${who} signed.`);
    }
    const session = ev.type === "session_started" ? null : ev.session ?? null; // starting one, no session was running
    if ((s.session ?? null) !== session) {
      problems.push(`#${ev.seq} was signed for ${nothing(s.session) ? "no session" : `session ${s.session}`} but stored in ${nothing(session) ? "no session" : `session ${session}`}.`);
    } else if (!nothing(session) && this.commitments.has(session) && (s.commitment ?? null) !== this.commitments.get(session)) {
      problems.push(`#${ev.seq} was signed under another dice commitment than session ${session}'s: its seed could have been chosen after the command.`);
    } else if (nothing(session) && !nothing(s.commitment)) {
      problems.push(`#${ev.seq} was signed with a dice commitment outside any session.`);
    }
    if (adding && !problems.length) {
      const actor = ev.actor_id ?? null;
      const firstUse = ![...this.keys.values()].some((k) => k.actor === actor && nothing(k.revoked));
      this.keys.set(s.key, { actor, member: ev.actor, label: p.label, added: ev.seq, revoked: null, vouched: firstUse });
    }
    if (p.action.type === ENDORSE_KEY && !problems.length) this._endorse(ev, p, s.key, problems);
    if (ev.type === KEY_REVOKED) {
      const target = this.keys.get(p.action.key);
      if (!target || target.actor !== (ev.actor_id ?? null)) problems.push(`#${ev.seq} revokes a key that is not ${who}'s.`);
      else if (!problems.length && nothing(target.revoked)) target.revoked = ev.seq;
    }
  }

  /** Rule 8: a signed endorsement by `signer` (a live key of the actor's, checked above). */
  _endorse(ev, p, signer, problems) {
    const target = this.keys.get(p.action.key);
    const who = ev.actor || "this member";
    if (p.key !== p.action.key) problems.push(`#${ev.seq} stores another key than the one its signed action vouches for.`);
    else if (!target) problems.push(`#${ev.seq} vouches for a key the log never registered.`);
    else if (target.actor !== (ev.actor_id ?? null)) problems.push(`#${ev.seq} vouches for ${target.member}'s key as ${who}'s.`);
    else if (p.action.key === signer) problems.push(`#${ev.seq} is a key vouching for itself.`);
    else if (!nothing(target.revoked)) problems.push(`#${ev.seq} vouches for a key revoked at #${target.revoked}.`);
    else if (this.keys.get(signer)?.vouched !== false) target.vouched = true;
  }

  /** Whether `key` was added while its member held a live key and no key of hers vouched for it since. */
  unvouched(key) { return this.keys.get(key)?.vouched === false; }
}
