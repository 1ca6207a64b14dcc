// This device's member key: what the browser signs every command with (docs/fair-dice.md, "Signed commands").
//
// One Ed25519 key pair per member on each device, kept in IndexedDB. Where WebCrypto has Ed25519 (secure
// origins: https, localhost) the private key is a non-extractable CryptoKey: scripts can sign with it but
// never read it out. A plain-http origin has no crypto.subtle: there the vendored noble-ed25519 signs,
// and the private key is kept as bytes in the same store (readable by the origin's scripts, which the
// server serves anyway).
//
// A key signs in a campaign once the log holds it: `Registration.ready()` sends the self-signed
// `add_member_key` the first time this device is used in a campaign (and again if the key was revoked),
// and every command waits for it. The keys this device added are remembered here, so that a key added in
// the member's name by someone else (a host writing the database) can be told apart and warned about.

import { jcs, utf8 } from "./chain.js";
import * as ed25519 from "./vendor/noble-ed25519/index.js";

export const COMMAND_SCHEME = "talekeeper-command-v1";

export const toB64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
export const fromB64url = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

/** The bytes a command's signature covers: JCS of the scheme, campaign, session, commitment, id and action. */
export function signedBytes(campaign, session, commitment, id, action) {
  return utf8(jcs({ scheme: COMMAND_SCHEME, campaign, session: session ?? null, commitment: commitment ?? null, id, action }));
}

// --- the store --------------------------------------------------------------------------------

const DB = "talekeeper-keys";
const STORE = "member-keys"; // {username, key (public, base64url), label, secret: CryptoKey | Uint8Array, created}

function openStore() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: "username" });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function storeOp(mode, op) {
  const db = await openStore();
  try {
    return await new Promise((resolve, reject) => {
      const request = op(db.transaction(STORE, mode).objectStore(STORE));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  } finally {
    db.close();
  }
}

/** Whether WebCrypto here makes Ed25519 keys (checked once: a browser without it throws). */
let webEd25519 = null;
async function hasWebEd25519() {
  if (webEd25519 === null) {
    try {
      await globalThis.crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
      webEd25519 = true;
    } catch {
      webEd25519 = false;
    }
  }
  return webEd25519;
}

/** A label for this device in the log ("Chrome on Linux, 2026-12-05"): 1-60 characters. */
export function deviceLabel() {
  const ua = navigator.userAgent || "";
  const browser = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge" : /Chrom(e|ium)\//.test(ua) ? "Chrome"
    : /Safari\//.test(ua) ? "Safari" : "A browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS"
    : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return `${browser}${os ? ` on ${os}` : ""}, ${new Date().toISOString().slice(0, 10)}`.slice(0, 60);
}

async function makeKey(username) {
  let secret;
  let raw;
  if (await hasWebEd25519()) {
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    secret = pair.privateKey; // non-extractable: stored as a CryptoKey, never as bytes
    raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  } else {
    secret = ed25519.utils.randomSecretKey(); // getRandomValues: on plain http too
    raw = ed25519.getPublicKey(secret); // synchronous SHA-512: chain.js sets it for noble
  }
  const record = { username, key: toB64url(raw), label: deviceLabel(), secret, created: new Date().toISOString() };
  await storeOp("readwrite", (s) => s.put(record));
  return record;
}

const loaded = new Map(); // username -> Promise of the record: one key per member per page

/** This device's key for `username` (made on first use). `fresh` replaces it (the old one was revoked). */
export function deviceKey(username, { fresh = false } = {}) {
  if (fresh || !loaded.has(username)) {
    loaded.set(username, (async () => (!fresh && await storeOp("readonly", (s) => s.get(username))) || makeKey(username))());
  }
  return loaded.get(username);
}

async function sign(record, bytes) {
  if (record.secret instanceof Uint8Array) return ed25519.sign(bytes, record.secret);
  return new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, record.secret, bytes));
}

/** The envelope's signature object for one command, signed with this device's key. */
export async function signCommand(record, campaign, session, commitment, id, action) {
  const sig = await sign(record, signedBytes(campaign, session, commitment, id, action));
  return { key: record.key, session: session ?? null, commitment: commitment ?? null, sig: toB64url(sig) };
}

// --- what this device added, and what the member confirmed -------------------------------------

const knownKey = (username) => `talekeeper:known-keys:${username}`;

/** Keys the member vouched for on this device: the ones it made, and others she confirmed as hers. */
export function knownKeys(username) {
  try {
    return new Set(JSON.parse(localStorage.getItem(knownKey(username))) || []);
  } catch {
    return new Set();
  }
}

export function vouchFor(username, key) {
  const known = knownKeys(username);
  known.add(key);
  try { localStorage.setItem(knownKey(username), JSON.stringify([...known])); } catch { /* storage off */ }
}

/** What this device may do about `k`, one of its member's keys as the log's check lists them ({key, revoked,
 *  vouched}), given `mine`, this device's own key as listed there (undefined when the log holds none), and
 *  `known` (knownKeys): {stranger: live but not known here, so "It is mine" is offered; vouch: this device's
 *  key can vouch for it (an endorsement it signs counts); cannotVouch: it is not vouched for and this device
 *  would sign for it, but this device's own key is not vouched for either; revoke: live}. An endorsement
 *  counts only when the key signing it is vouched for itself (rules/vouching.py, signed.js rule 8), so a
 *  device whose key is not vouched for offers none (docs/fair-dice.md, "Vouching for a new key"). */
export function keyChoices(k, mine, known) {
  const live = k.revoked === null;
  const wanting = live && k.vouched === false && k.key !== mine?.key;
  const signs = mine !== undefined && mine.revoked === null;
  const vouched = signs && mine.vouched !== false;
  return { stranger: live && !known.has(k.key), vouch: wanting && vouched, cannotVouch: wanting && signs && !vouched, revoke: live };
}

// --- registering in a campaign ------------------------------------------------------------------

/** The campaign's member keys as the server lists them (GET .../keys: {signed_from, keys: [{member, key, label,
 *  added_seq, revoked_seq}]}), as [{member, key, label, added, revoked}] with `signedFrom` beside them. */
export async function campaignKeys(slug) {
  const res = await fetch(`/api/campaigns/${encodeURIComponent(slug)}/keys`, { credentials: "same-origin" });
  if (!res.ok) throw new Error(`The keys API answered ${res.status}.`);
  const json = await res.json();
  const keys = (json.keys || []).map((k) => ({
    member: k.member, key: k.key, label: k.label, added: k.added_seq ?? k.added, revoked: k.revoked_seq ?? k.revoked ?? null,
  }));
  keys.signedFrom = json.signed_from ?? null;
  return keys;
}

const newId = () => [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");

/** The session and commitment a `stale_session` refusal says are current now. */
export function staleNow(error) {
  const where = [error, error?.details, error?.error].find((o) => o && "commitment" in o && "session" in o);
  return where ? { session: where.session ?? null, commitment: where.commitment ?? null } : null;
}

/**
 * This device's key in one campaign: `ready()` resolves with the key record once the log holds it live
 * for this member (registering it first if it does not). `post(envelope)` sends one command (HTTP),
 * resolving with the server's JSON or rejecting with {code, message, ...}; `context()` gives the
 * {session, commitment} to sign with now.
 */
export class Registration {
  constructor({ slug, campaignId, username, post, context }) {
    Object.assign(this, { slug, campaignId, username, post, context });
    this.promise = null;
  }

  ready() {
    if (!this.promise) this.promise = this._register().catch((problem) => { this.promise = null; throw problem; });
    return this.promise;
  }

  /** Forget what is known: the next ready() asks the log again (a refusal said the key is not live). */
  reset() { this.promise = null; }

  async _register() {
    let record = await deviceKey(this.username);
    const listed = (await campaignKeys(this.slug)).filter((k) => k.key === record.key);
    if (listed.some((k) => k.member === this.username && (k.revoked === null || k.revoked === undefined))) return record;
    // Revoked here (or listed for someone else): this device makes a new key and registers that.
    if (listed.length) record = await deviceKey(this.username, { fresh: true });
    vouchFor(this.username, record.key);
    const action = { type: "add_member_key", key: record.key, label: record.label };
    let where = await this.context();
    for (let attempt = 0; ; attempt += 1) {
      const id = newId(); // a new id for each try: an id is never signed into another session
      const envelope = { id, action, signature: await signCommand(record, this.campaignId, where.session, where.commitment, id, action) };
      try {
        await this.post(envelope);
        return record;
      } catch (problem) {
        const now = problem?.code === "stale_session" && staleNow(problem);
        if (!now || attempt >= 3) throw problem;
        where = now;
      }
    }
  }
}
