// The log as this browser checks it (docs/protocol.md, "Heads and the client's check").
//
// Every event's link (prev_hash) and hash are recomputed here as they arrive, so a server
// cannot show this member a log that does not hash up; the last verified head
// {seq, hash} is kept per campaign in localStorage, so a server that later serves a log
// that does not extend it (shorter, rewritten, reordered) is caught at the next visit.
//
// Hash formats (docs/event-log.md):
//   format 2: body_digest = SHA-256(JCS({type, version, character, payload})), or the sealed
//             placeholder's body_digest; hash = SHA-256(prev_hash + JCS(envelope with body)).
//   format 1: hash = SHA-256(prev_hash + Python's json of the fields with the payload). A
//             sealed format-1 event has no payload here, so only its link is checked.
// SHA-256 and HMAC come from WebCrypto where it exists; plain-http origins have no
// crypto.subtle, and there the vendored @noble/hashes does the same work.

import { sha256 as nobleSha256, sha512 } from "./vendor/noble-hashes/sha2.js";
import { hmac as nobleHmac } from "./vendor/noble-hashes/hmac.js";
import * as ed25519 from "./vendor/noble-ed25519/index.js";
import { DICE_V4, WitnessBook, said } from "./witness.js";

ed25519.hashes.sha512 = sha512; // synchronous verification, with or without crypto.subtle

export const GENESIS = "0".repeat(64);
const encoder = new TextEncoder();
export const utf8 = (text) => encoder.encode(text);
export const toHex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
export function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
export const short = (hash) => (hash ? hash.slice(0, 12) : "");

// --- JSON in ----------------------------------------------------------------------------------

// Format 1 hashed Python's json text, where 1.0 and 1 differ; JSON.parse makes both 1. The
// number's source text (JSON.parse source text access, in current browsers) is kept beside
// the parsed value, so format-1 hashes can be reproduced exactly.
const numberSources = new WeakMap(); // parsed object or array -> Map(key -> source text)
let sourceTextAccess = false;
JSON.parse("[1]", (key, value, context) => { if (context?.source === "1") sourceTextAccess = true; return value; });

function keepSource(key, value, context) {
  if (typeof value === "number" && context?.source !== undefined) {
    if (!numberSources.has(this)) numberSources.set(this, new Map());
    numberSources.get(this).set(key, context.source);
  }
  return value;
}

/** JSON.parse that remembers each number's text: use it for everything that carries events. */
export function parseJSON(text) {
  return JSON.parse(text, sourceTextAccess ? keepSource : undefined);
}

// --- JSON out ---------------------------------------------------------------------------------

/** RFC 8785 (JCS): keys in UTF-16 code unit order (JavaScript's default sort), no whitespace,
 * strings and numbers exactly as JSON.stringify writes them. */
export function jcs(value) {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("NaN and Infinity are not JSON");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${jcs(value[k])}`).join(",")}}`;
  }
  throw new TypeError(`${typeof value} is not a JSON value`);
}

const byCodePoint = (a, b) => {
  const x = [...a].map((c) => c.codePointAt(0));
  const y = [...b].map((c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};

/** Format 1's encoding: Python's json.dumps(sort_keys, compact, ensure_ascii=False). Numbers are
 * written as the server wrote them (their source text); `state.exact` turns false when one had
 * no source text, i.e. the result may differ from Python's through no fault of the server. */
export function pythonJSON(value, state = { exact: true }, holder = null, key = null) {
  if (typeof value === "number") {
    const source = holder ? numberSources.get(holder)?.get(key) : undefined;
    if (source !== undefined) return source;
    // No source text: right for the integers built here (holder null), a guess for parsed ones.
    if (holder) state.exact = false;
    return String(value);
  }
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v, i) => pythonJSON(v, state, value, String(i))).join(",")}]`;
  return `{${Object.keys(value).sort(byCodePoint).map((k) => `${JSON.stringify(k)}:${pythonJSON(value[k], state, value, k)}`).join(",")}}`;
}

// --- SHA-256 and HMAC ---------------------------------------------------------------------------

const subtle = globalThis.crypto?.subtle; // undefined on plain-http origins

/** The pure-JS implementations (the fallback), exported so tests can compare both. */
export const pure = {
  sha256: async (bytes) => nobleSha256(bytes),
  hmac: async (key, bytes) => nobleHmac(nobleSha256, key, bytes),
};
const hmacKeys = new Map(); // key hex -> CryptoKey: the dice use one key for many messages
export const webCrypto = subtle && {
  sha256: async (bytes) => new Uint8Array(await subtle.digest("SHA-256", bytes)),
  async hmac(key, bytes) {
    const id = toHex(key);
    if (!hmacKeys.has(id)) hmacKeys.set(id, subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]));
    return new Uint8Array(await subtle.sign("HMAC", await hmacKeys.get(id), bytes));
  },
};
const hashing = webCrypto || pure;

export async function sha256Hex(data) {
  return toHex(await hashing.sha256(typeof data === "string" ? utf8(data) : data));
}

export async function hmacSha256(key, message) {
  return hashing.hmac(key, typeof message === "string" ? utf8(message) : message);
}

// --- events -------------------------------------------------------------------------------------

/** What a format-2 body digest covers. */
export const bodyOf = (ev) => ({ type: ev.type, version: ev.version, character: ev.character ?? null, payload: ev.payload });

/** A sealed placeholder: a hidden event as a member who may not see it receives it. */
export const isSealed = (ev) => ev.hidden === true;

/** Why `ev` can't follow `before` in the chain for its hash format ("" when it can): format 2 replaced
 *  format 1 for good, so an older format later is an event this member can't rehash when sealed (or a
 *  session of the old dice scheme, which a host can aim) slipped in. */
export function formatProblem(ev, before) {
  return before && (ev.format || 1) < (before.format || 1)
    ? `#${ev.seq} is in hash format ${ev.format || 1} after #${before.seq} in format ${before.format}: a log's format never goes back.` : "";
}

/** Why a sealed placeholder can't be what the server owes this member ("" when it can, or is no seal):
 *  its commitment must be its body digest, and a public event is every member's to read (sealed, its
 *  dice would go unchecked). */
export function sealProblem(ev) {
  if (!isSealed(ev)) return "";
  if (ev.visibility === "public") return `#${ev.seq} is public, but the server sent it sealed: its body and dice are kept from you.`;
  if ((ev.format || 1) >= 2 && ev.payload?.commitment !== ev.body_digest) {
    return `#${ev.seq} is sealed with a commitment that is not its body digest.`;
  }
  return "";
}

/**
 * Recompute an event's hash from what this member received.
 * Returns {hash, digest, exact}: `hash` null when it can't be recomputed here (a sealed
 * format-1 event), `exact` false when a mismatch may be this browser's doing (format 1
 * without number source text), `digest` the body digest (format 2).
 */
export async function recomputeHash(ev, campaignId) {
  const prev = ev.prev_hash;
  if ((ev.format || 1) >= 2) {
    const digest = isSealed(ev) ? ev.body_digest : await sha256Hex(jcs(bodyOf(ev)));
    if (typeof digest !== "string") return { hash: null, digest: null, exact: true };
    const envelope = {
      format: 2, campaign: campaignId, seq: ev.seq, actor: ev.actor_id ?? null, session: ev.session ?? null,
      scene: ev.scene ?? null, visibility: ev.visibility, created_at: ev.created_at, body: digest,
    };
    return { hash: await sha256Hex(prev + jcs(envelope)), digest, exact: true };
  }
  if (isSealed(ev)) return { hash: null, digest: null, exact: true };
  const state = { exact: true };
  const fields = {
    campaign: campaignId, seq: ev.seq, type: ev.type, version: ev.version, payload: ev.payload,
    actor: ev.actor_id ?? null, character: ev.character ?? null, session: ev.session ?? null, scene: ev.scene ?? null,
    visibility: ev.visibility, created_at: ev.created_at,
  };
  const text = `{${Object.keys(fields).sort(byCodePoint).map((k) => `${JSON.stringify(k)}:${
    k === "payload" ? pythonJSON(fields.payload, state) : pythonJSON(fields[k], { exact: true })}`).join(",")}}`;
  return { hash: await sha256Hex(prev + text), digest: null, exact: state.exact };
}

/**
 * Why a `roll_revealed` payload does not match the sealed event it names ("" when it does).
 * `sealed` is that event as this member received and checked it, with `digest` its body digest.
 */
export async function revealProblem(reveal, sealed) {
  const p = reveal.payload || {};
  const hasBody = p.body && typeof p.body === "object";
  if (hasBody && sealed.digest) { // the sealed event is format 2: its commitment is its body digest
    return (await sha256Hex(jcs(p.body))) === sealed.digest ? ""
      : `the body revealed in #${reveal.seq} is not the one #${p.seq} was sealed with (its commitment)`;
  }
  // A format-1 sealed event committed to SHA-256(Python json of its payload without "commitment");
  // old reveals carried {seq, type, payload}, new ones {seq, body}.
  const payload = hasBody ? p.body.payload : p.payload;
  if (!payload || typeof payload !== "object") return `#${reveal.seq} reveals nothing to check`;
  const committed = sealed.payload?.commitment ?? payload.commitment;
  const state = { exact: true };
  const again = await sha256Hex(pythonJSON(without(payload, "commitment"), state));
  if (again === committed && payload.commitment === committed) return "";
  return state.exact ? `the roll revealed in #${reveal.seq} is not the one #${p.seq} committed to` : "";
}

/** A copy of `object` without `key` that keeps its numbers' source text. */
function without(object, key) {
  const { [key]: _dropped, ...rest } = object;
  if (numberSources.has(object)) numberSources.set(rest, numberSources.get(object));
  return rest;
}

// --- fair dice v2 (docs/fair-dice.md) -------------------------------------------------------------

export const DICE_V1 = "talekeeper-hmac-sha256-v1";
export const DICE_V2 = "talekeeper-hmac-sha256-v2";

export const DICE_V3 = "talekeeper-hmac-sha256-v3";
// Scheme v3 (sessions where members sign their commands) is v2 with "v3" in the messages' prefixes.
// Scheme v4 is a witnessed command's (./witness.js): v3's derivation with the witness digest after its id.
const VERSION = { [DICE_V2]: "v2", [DICE_V3]: "v3", [DICE_V4]: "v4" };

/** Die `index` (d`sides`) of member `actorId`'s command `commandId`, from the session seed (hex). */
export async function deriveFace(seedHex, campaignId, session, actorId, commandId, index, sides, scheme = DICE_V2) {
  const key = fromHex(seedHex);
  const limit = (2n ** 64n / BigInt(sides)) * BigInt(sides); // rejection sampling: no face favoured
  for (let counter = 0; ; counter += 1) {
    const mac = await hmacSha256(key, `talekeeper-dice-${VERSION[scheme]}|${campaignId}|${session}|${actorId}|${commandId}|${index}|${counter}`);
    const value = new DataView(mac.buffer, mac.byteOffset, 8).getBigUint64(0, false);
    if (value < limit) return Number(value % BigInt(sides)) + 1;
  }
}

/** A hidden command's nonce, derivable by anyone once the seed is revealed. */
export async function deriveNonce(seedHex, campaignId, session, actorId, commandId, scheme = DICE_V2) {
  const mac = await hmacSha256(fromHex(seedHex), `talekeeper-nonce-${VERSION[scheme]}|${campaignId}|${session}|${actorId}|${commandId}`);
  return toHex(mac).slice(0, 32);
}

// --- the stored head ---------------------------------------------------------------------------

const headKey = (slug) => `talekeeper:head:${slug}`;

export function storedHead(slug) {
  try {
    const head = JSON.parse(localStorage.getItem(headKey(slug)));
    return head && Number.isSafeInteger(head.seq) && typeof head.hash === "string" ? head : null;
  } catch {
    return null; // storage off or junk in it: nothing to compare with
  }
}

export function storeHead(slug, head) {
  try { localStorage.setItem(headKey(slug), JSON.stringify({ seq: head.seq, hash: head.hash })); } catch { /* storage off */ }
}

export function forgetHead(slug) {
  try { localStorage.removeItem(headKey(slug)); } catch { /* storage off */ }
}

// --- the chain as this page receives it ----------------------------------------------------------

/**
 * Checks events in seq order as they arrive, against the head stored by an earlier visit.
 *
 * `fetchEvents(after, limit)` pages the events API (to fill the gap between the stored head
 * and the first event the page shows); `onProblem({kind, seq, message, who})` is called for
 * each problem: kind "log" (the server's log is not the one this browser verified),
 * "member" (another member reports a different hash for a seq), "command" (a command this
 * browser sent was stored under another id, which keys its dice) or "witness" (a witnessed roll
 * decided without a contribution stored before it, ./witness.js); `onHead(head)` after each
 * verified event. Work is queued so checks happen in the order things arrived.
 */
export class Chain {
  constructor({ slug, campaignId, fetchEvents, onProblem, onHead = () => {}, inspect = async () => {} }) {
    // `inspect(ev)`: further checks of each event in seq order, once its hash is checked (./trust.js).
    Object.assign(this, { slug, campaignId, fetchEvents, onProblem, onHead, inspect });
    this.stored = storedHead(slug); // what an earlier visit verified: the log must extend it
    this.last = null; // {seq, hash} of the last event checked on this page
    this.lastEvent = null; // {seq, format} of it
    this.seen = new Map(); // seq -> {hash, digest, payload} of every event checked here
    this.claims = new Map(); // seq -> [{hash, who}]: heads reported for seqs not checked yet
    this.sent = new Map(); // seq -> {id, action} this browser sent the command stored there with, until checked
    this.problems = [];
    this.unreproduced = 0; // events whose hash this browser could not recompute (sealed format 1)
    this.witnesses = new WitnessBook(sha256Hex); // witnessed rolls: every contribution included (./witness.js)
    this.queue = Promise.resolve();
  }

  get broken() { return this.problems.some((p) => p.kind === "log"); }

  /** The head to report to others: the last verified one, or the stored one once broken. */
  get head() { return this.broken ? this.stored : this.last || this.stored; }

  _enqueue(task) {
    this.queue = this.queue.then(task).catch((problem) => console.error("chain check failed", problem));
    return this.queue;
  }

  /** Called once, before the page's first event: `after` is the seq the page starts after. */
  start(after) {
    const stored = this.stored;
    if (!stored || stored.seq > after) return; // checked when the stored seq arrives (or never: shorter)
    this._enqueue(async () => { // the page starts past the stored head: read the gap first
      let next = stored.seq - 1;
      while (next < after) {
        const page = await this.fetchEvents(next, Math.min(500, after - next));
        if (!page.length) break; // the log ends early: the server's head will say so
        for (const ev of page) await this._check(ev);
        next = page[page.length - 1].seq;
      }
    });
  }

  event(ev) { return this._enqueue(() => this._check(ev)); }

  /**
   * Resolves, once every check queued before it is done, to whether `ev` (already queued with event())
   * was checked here as the event it is, raised no problem, and the log is not broken: what a table
   * waits for before it acts on an event (./witnessing.js reveals only on a close that passed).
   */
  passed(ev) {
    return this._enqueue(() => this.seen.get(ev.seq)?.hash === ev.hash && !this.broken &&
      !this.problems.some((p) => p.seq === ev.seq)).then((ok) => ok === true);
  }

  /**
   * A head the server states: its hash must be the one this page has at its seq. `ready` also
   * says where the log ends, so there a head below what this browser verified means events
   * were removed. (A heartbeat's head may lag an event sent just before it: not a removal.)
   */
  serverHead(head, { ends = false } = {}) {
    if (!head) return this.queue;
    return this._enqueue(() => {
      const floor = Math.max(this.stored?.seq || 0, this.last?.seq || 0);
      if (ends && head.seq < floor) {
        this._problem("log", head.seq + 1,
          `The server says its log ends at #${head.seq}, but this browser already verified it up to #${floor}: events were removed.`);
        return;
      }
      this._claim(head.seq, head.hash, "the server");
    });
  }

  /** Other members' reported heads, from a presence frame. */
  memberHeads(members, me) {
    return this._enqueue(() => {
      for (const m of members) if (m.head && m.username !== me) this._claim(m.head.seq, m.head.hash, m.username);
    });
  }

  /**
   * A command this browser sent (with `id`) was stored at `seq`: the die it rolled must be keyed on
   * that id (docs/fair-dice.md, section 2). A server that stored it under an id of its own choosing
   * could have tried ids until the dice suited it, and every die would still match the seed.
   */
  ownCommand(seq, id, action) {
    const sent = { id, action: JSON.parse(JSON.stringify(action)) }; // as the server received it
    rememberSent(this.slug, seq, sent); // for a reveal, and the verification page, later
    return this._enqueue(() => {
      if (this.seen.has(seq)) this._compareCommand(seq, this.seen.get(seq).payload, sent);
      else if (!this.last || seq > this.last.seq) this.sent.set(seq, sent);
    });
  }

  _compareCommand(seq, payload, sent) {
    const problem = commandProblem(seq, payload, sent);
    if (problem) this._problem("command", seq, problem);
  }

  _claim(seq, hash, who) {
    if (this.seen.has(seq)) this._compare(seq, hash, who);
    else if (!this.last || seq > this.last.seq) {
      if (!this.claims.has(seq)) this.claims.set(seq, []);
      this.claims.get(seq).push({ hash, who });
    } // else: before what this page checked; nothing here to compare it with
  }

  _compare(seq, hash, who) {
    if (seq === 0 || this.seen.get(seq).hash === hash) return;
    if (who === "the server") {
      this._problem("log", seq, `The server's head for #${seq} (${short(hash)}) is not the event it sent for #${seq} (${short(this.seen.get(seq).hash)}).`);
    } else {
      this._problem("member", seq, `${who}'s log differs from yours at #${seq}: they have ${short(hash)}, you have ${short(this.seen.get(seq).hash)}. The server is showing you different logs.`, who);
    }
  }

  _problem(kind, seq, message, who = null) {
    const problem = { kind, seq, message, who };
    if (this.problems.some((p) => p.kind === kind && p.seq === seq && p.who === who)) return;
    this.problems.push(problem);
    this.onProblem(problem);
  }

  async _check(ev) {
    if (this.last && ev.seq <= this.last.seq) return; // already checked (the gap read overlaps)
    if (this.last && ev.seq !== this.last.seq + 1) {
      this._problem("log", this.last.seq + 1, `#${this.last.seq + 1} is missing: the next event sent was #${ev.seq}.`);
    } else if (this.last && ev.prev_hash !== this.last.hash) {
      this._problem("log", ev.seq, `#${ev.seq} does not link to #${this.last.seq}: its prev_hash is not the hash of the event before it.`);
    } else if (ev.seq === 1 && ev.prev_hash !== GENESIS) {
      this._problem("log", 1, "#1 does not start the chain (its prev_hash is not 64 zeros).");
    }
    const backwards = formatProblem(ev, this.lastEvent);
    if (backwards) this._problem("log", ev.seq, backwards);
    this.lastEvent = { seq: ev.seq, format: ev.format || 1 };
    const digest = await this._checkContents(ev);
    for (const problem of await this.witnesses.see(ev)) this._problem("witness", problem.seq, said(problem));
    await this.inspect(ev);
    if (this.stored && ev.seq === this.stored.seq && ev.hash !== this.stored.hash) {
      this._problem("log", ev.seq, `This browser verified #${ev.seq} as ${short(this.stored.hash)}; the server now serves ${short(ev.hash)}: the log was rewritten.`);
    }
    this.last = { seq: ev.seq, hash: ev.hash };
    this.seen.set(ev.seq, { hash: ev.hash, prev_hash: ev.prev_hash, digest, payload: ev.payload });
    for (const { hash, who } of this.claims.get(ev.seq) || []) this._compare(ev.seq, hash, who);
    this.claims.delete(ev.seq);
    if (this.sent.has(ev.seq)) this._compareCommand(ev.seq, ev.payload, this.sent.get(ev.seq));
    this.sent.delete(ev.seq);
    if (ev.type === "roll_revealed") await this._checkReveal(ev);
    // Only a log that extends the stored head replaces it: after an alarm the evidence stays.
    if (!this.broken && (!this.stored || ev.seq >= this.stored.seq)) {
      this.stored = this.last;
      storeHead(this.slug, this.last);
      this.onHead(this.last);
    }
  }

  /** The event's hash from its contents (and a seal's commitment); returns its body digest. */
  async _checkContents(ev) {
    const again = await recomputeHash(ev, this.campaignId);
    if (again.hash === null) this.unreproduced += 1;
    else if (again.hash !== ev.hash && again.exact) {
      this._problem("log", ev.seq, `#${ev.seq} was altered: its hash does not match its contents.`);
    } else if (again.hash !== ev.hash) this.unreproduced += 1;
    const sealing = sealProblem(ev);
    if (sealing) this._problem("log", ev.seq, sealing);
    return again.digest;
  }

  /** Events paged in before the first one checked ("Show earlier events"), in seq order: each
   * must hash up and be the one the event after it links to. */
  older(page) {
    const newestFirst = [...page].sort((a, b) => b.seq - a.seq);
    return this._enqueue(async () => {
      for (const ev of newestFirst) {
        const next = this.seen.get(ev.seq + 1);
        if (!next || this.seen.has(ev.seq)) continue; // not next to what was checked: nothing to link to
        if (next.prev_hash !== ev.hash) {
          this._problem("log", ev.seq, `#${ev.seq} as the server sends it now is not the event #${ev.seq + 1} links to.`);
        }
        const digest = await this._checkContents(ev);
        this.seen.set(ev.seq, { hash: ev.hash, prev_hash: ev.prev_hash, digest, payload: ev.payload });
      }
    });
  }

  async _checkReveal(ev) {
    const target = ev.payload?.seq;
    let sealed = this.seen.get(target);
    if (!sealed && Number.isSafeInteger(target) && target > 0) { // sealed before this page's window
      const [old] = await this.fetchEvents(target - 1, 1);
      if (old && old.seq === target) {
        const again = await recomputeHash(old, this.campaignId);
        sealed = { hash: old.hash, digest: again.digest, payload: old.payload };
      }
    }
    if (!sealed) return this._problem("log", ev.seq, `#${ev.seq} reveals #${target}, which is not in the log.`);
    const problem = await revealProblem(ev, sealed);
    if (problem) return this._problem("log", ev.seq, `Forged reveal: ${problem}.`);
    const sent = sentCommands(this.slug).get(target); // a command of this browser's, sealed from it until now
    if (sent) this._compareCommand(target, ev.payload.body?.payload, sent);
  }
}

/**
 * Why the event a command of this browser's was stored as is not that command ("" when it is): the
 * dice it rolled must be keyed on the id sent (docs/fair-dice.md, section 2), or a server could have
 * tried ids until they suited it, every die still matching the seed; and the same id rolls the same
 * dice, so the action must be the one sent (another target or bonus makes them say something else).
 * `payload` is the event's (or its revealed body's); a command that rolled no session dice has none to aim.
 */
export function commandProblem(seq, payload, sent) {
  // A witnessed command's pending event holds its id and action; its dice come with its decision.
  const rolls = Array.isArray(payload?.dice_log) || Array.isArray(payload?.witnesses);
  if (!rolls || payload.verifiable === false) return "";
  if (payload.command_id !== sent.id) {
    return `#${seq} is your command, sent as ${short(sent.id)}, but the server stored it as ${
      short(String(payload.command_id ?? "no id"))}: it could have chosen your dice.`;
  }
  return sentAsStored(sent.action, payload.action) ? ""
    : `#${seq} is your command, but the server stored another action than the one you sent.`;
}

// The commands this browser sent, by the seq they were stored at: {seq: {id, action}}, the newest
// SENT_KEPT. Only the sender knows them, so only she can check them once they can be read (a roll
// sealed from her until the GM reveals it; the verification page).
const SENT_KEPT = 1000;
const sentKey = (slug) => `talekeeper:sent:${slug}`;

export function sentCommands(slug) {
  try {
    const kept = JSON.parse(localStorage.getItem(sentKey(slug))) || {};
    return new Map(Object.entries(kept).map(([seq, sent]) => [Number(seq), sent]));
  } catch {
    return new Map(); // storage off or junk in it
  }
}

function rememberSent(slug, seq, sent) {
  const kept = sentCommands(slug);
  kept.set(seq, sent);
  const newest = [...kept.keys()].sort((a, b) => b - a).slice(0, SENT_KEPT);
  try {
    localStorage.setItem(sentKey(slug), JSON.stringify(Object.fromEntries(newest.map((k) => [k, kept.get(k)]))));
  } catch { /* storage off or full: the table still checks what it can read now */ }
}

/** Whether the action stored holds every key of the action sent, unchanged. It may hold more: a contest
 *  naming an opponent gets the opponent's numbers filled in by the server (campaign/actions/contests.py). */
function sentAsStored(sent, stored) {
  return !!stored && typeof stored === "object"
    && Object.keys(sent).every((k) => k in stored && jcs(stored[k]) === jcs(sent[k]));
}

/** One page of the events API, as this member may see them (numbers' source text kept). */
export async function eventsPage(slug, after, limit) {
  const res = await fetch(`/api/campaigns/${encodeURIComponent(slug)}/events?after=${after}&limit=${limit}`, { credentials: "same-origin" });
  if (!res.ok) throw new Error(`The events API answered ${res.status}.`);
  return parseJSON(await res.text());
}
