// The verification page: this member's browser checks the log as the server shows it to them.
//
// The server only serves the page and the events API; every check is here (and in ./chain.js):
//   the chain   every link and hash from #1, and the head this browser verified at the table;
//   reveals     every roll_revealed against the sealed event's body digest (its commitment) (./logchecks.js);
//   dice        every die of every finished session from its revealed seed (./logchecks.js);
//   receipts    every signed checkpoint: the server's signature, and that the log extends it;
//   commands    every member's command as signed (./signed.js): key, signature, session, id, dice shown;
//   witnesses   every witnessed roll as rules/witness.py checks it (./logchecks.js, ./witness.js);
//   anchors     a pasted anchor line (./anchor.js): the log still passes through it.
// A hidden event the GM revealed comes whole from the events API, and is checked like any other.
// Each problem names its seq; the summary names the first. The member's keys are listed, with the
// ones this device does not know (added in her name elsewhere) marked, to confirm or revoke.

import {
  GENESIS, commandProblem, eventsPage, formatProblem, isSealed, recomputeHash, sealProblem, sentCommands, short, storedHead,
} from "./chain.js";
import { receiptSigned } from "./receipt.js";
import { fill, h, plural } from "./ui.js";
import { CommandCheck, ENDORSE_KEY, UNVOUCHED } from "./signed.js";
import { checkDice, checkReveals, checkWitnessed, newReport, revealedPayloads } from "./logchecks.js";
import { Registration, deviceKey, keyChoices, knownKeys, signCommand, staleNow, vouchFor } from "./keys.js";
import { anchorProblem, parseAnchor } from "./anchor.js";

const data = JSON.parse(document.getElementById("verify-data").textContent);

async function readLog(slug) {
  const events = [];
  let after = 0;
  for (;;) {
    const page = await eventsPage(slug, after, 500);
    events.push(...page.events);
    if (!page.has_more || !page.events.length) return { events, head: page.head };
    after = page.next_after;
  }
}

async function checkChain(events, head, report) {
  let prev = GENESIS;
  let unreproduced = 0;
  const digests = new Map(); // seq -> body digest (format 2), for the reveals
  for (const [index, ev] of events.entries()) {
    if (ev.seq !== index + 1) {
      report.problem(index + 1, `#${index + 1} is missing from the log (the next event is #${ev.seq}).`);
      return { digests, ok: false };
    }
    if (ev.prev_hash !== prev) report.problem(ev.seq, `#${ev.seq} does not link to the event before it.`);
    const backwards = formatProblem(ev, events[index - 1]);
    if (backwards) report.problem(ev.seq, backwards);
    const again = await recomputeHash(ev, data.campaignId);
    digests.set(ev.seq, again.digest);
    if (again.hash === null || (again.hash !== ev.hash && !again.exact)) unreproduced += 1;
    else if (again.hash !== ev.hash) report.problem(ev.seq, `#${ev.seq} was altered: its hash does not match its contents.`);
    const sealing = sealProblem(ev);
    if (sealing) report.problem(ev.seq, sealing);
    prev = ev.hash;
  }
  if (events.length !== head) report.problem(events.length + 1, `The server says the log has ${plural(head, "event")} but sent ${events.length}.`);
  const stored = storedHead(data.slug);
  if (stored && stored.seq > 0) {
    const ev = events[stored.seq - 1];
    if (!ev) report.problem(events.length + 1, `At the table this browser verified the log up to #${stored.seq}; it now ends at #${events.length}.`);
    else if (ev.hash !== stored.hash) report.problem(stored.seq, `At the table this browser verified #${stored.seq} as ${short(stored.hash)}; it is now ${short(ev.hash)}.`);
  }
  const checked = events.length - unreproduced;
  report.check("Hash chain", !report.problems.length,
    `${plural(events.length, "event")}, ${plural(checked, "hash", "hashes")} recomputed${unreproduced
      ? `, ${plural(unreproduced, "sealed old-format event")} checked by ${unreproduced === 1 ? "its" : "their"} link only` : ""}`
    + `${stored ? `; extends the head this browser verified at the table (#${stored.seq})` : ""}.`);
  return { digests };
}

/** The commands this browser sent (chain.js sentCommands): each stored under its id, with its action,
 *  as far as the member can read it now (a roll sealed from her counts once revealed). */
function checkCommands(events, report) {
  const before = report.problems.length;
  const revealed = revealedPayloads(events);
  let checked = 0;
  let sealed = 0;
  for (const [seq, sent] of sentCommands(data.slug)) {
    const ev = events[seq - 1];
    if (!ev) continue; // beyond the log: the chain check says so if this browser verified it
    const payload = isSealed(ev) ? revealed.get(seq) : ev.payload;
    if (!payload) { sealed += 1; continue; }
    checked += 1;
    const problem = commandProblem(seq, payload, sent);
    if (problem) report.problem(seq, problem);
  }
  report.check("Your commands", report.problems.length === before,
    `${plural(checked, "command")} this browser sent, each stored under the id it was sent with${sealed
      ? ` (${sealed} more sealed from you)` : ""}.`);
}

/** The receipts the member picked from their own files (one checkpoint or a list per file). */
async function keptReceipts() {
  const kept = [];
  for (const file of document.getElementById("verify-receipts").files) {
    let value;
    try {
      value = JSON.parse(await file.text());
    } catch {
      throw new Error(`${file.name} is not a receipt (not JSON).`);
    }
    for (const c of Array.isArray(value) ? value : [value]) {
      if (!c || typeof c !== "object" || !Number.isSafeInteger(c.seq) || typeof c.signature !== "string" || c.campaign !== data.slug) {
        throw new Error(`${file.name} is not a receipt of ${data.slug}.`);
      }
      kept.push(c);
    }
  }
  return kept;
}

/** Every checkpoint the server lists, a page at a time in seq order (one per head). */
async function listedReceipts(slug) {
  const listed = [];
  let after = 0;
  for (;;) {
    const res = await fetch(`/api/campaigns/${encodeURIComponent(slug)}/checkpoints?after=${after}&limit=500`,
      { credentials: "same-origin" });
    if (!res.ok) throw new Error(`The server's receipts could not be read (${res.status}).`);
    const page = await res.json();
    listed.push(...page.checkpoints);
    if (!page.has_more || !page.checkpoints.length) return listed;
    after = page.next_after;
  }
}

async function checkReceipts(events, report) {
  const before = report.problems.length;
  const [listed, key, kept] = await Promise.all([
    listedReceipts(data.slug),
    fetch("/api/key").then((r) => r.json()),
    keptReceipts(),
  ]);
  const receipts = [...listed, ...kept];
  for (const c of receipts) {
    if (!receiptSigned(c, key)) report.problem(c.seq, `The receipt for #${c.seq} is not signed by the server's key.`);
    else if (c.seq > 0 && events[c.seq - 1]?.hash !== c.hash) {
      report.problem(c.seq, `The log no longer extends the receipt signed for #${c.seq} (${short(c.hash)}).`);
    }
  }
  report.check("Receipts", report.problems.length === before,
    `${plural(receipts.length, "signed checkpoint")} (${kept.length} from your files); the log extends ${receipts.length === 1 ? "it" : "each"}.`);
}

/** Every member's command this member can read, as signed (./signed.js); a sealed one once revealed. */
async function checkSigned(events, report) {
  const before = report.problems.length;
  const check = new CommandCheck(data.campaignId);
  for (const ev of events) {
    const { problems } = await check.check(ev);
    for (const problem of problems) report.problem(ev.seq, problem);
  }
  const c = check.counts;
  const notes = [`${plural(c.signed, "event")} of members' commands signed by their registered keys`];
  if (c.unsigned) notes.push(`${plural(c.unsigned, "command")} from before members signed: not signed, so the host could have sent ${c.unsigned === 1 ? "it" : "them"} in a member's name`);
  if (c.sealed) notes.push(`${plural(c.sealed, "event")} sealed from you`);
  const unvouched = check.keyList().filter((k) => k.vouched === false);
  if (unvouched.length) {
    notes.push(`warning: ${unvouched.map((k) => `${k.member}'s key ${k.label || k.key.slice(0, 8)} (#${k.added})`).join(", ")} `
      + `${unvouched.length === 1 ? "is" : "are"} ${UNVOUCHED}: added while she held a live key that did not endorse ${unvouched.length === 1 ? "it" : "them"}`);
  }
  report.check("Signed commands", report.problems.length === before, `${notes.join("; ")}.`);
  return check;
}

/** The session and commitment now, from the log as read: what a command signed here is signed under. */
function currentSession(events) {
  let where = { session: null, commitment: null };
  for (const ev of events) {
    if (ev.type === "session_started" && !isSealed(ev)) where = { session: ev.payload.session, commitment: ev.payload.dice_commitment ?? null };
    if (ev.type === "session_ended" && !isSealed(ev)) where = { session: null, commitment: null };
  }
  return where;
}

export async function verify() {
  const report = newReport();
  const { events, head } = await readLog(data.slug);
  const { digests } = await checkChain(events, head, report);
  await checkReveals(events, digests, report);
  await checkDice(events, report, data.campaignId);
  checkCommands(events, report);
  const signed = await checkSigned(events, report);
  await checkWitnessed(events, report);
  await checkReceipts(events, report);
  checkAnchor(events, report);
  report.keys = signed.keyList();
  report.where = currentSession(events);
  report.firstBad = report.problems.length ? Math.min(...report.problems.map((p) => p.seq)) : null;
  return report;
}

/** A pasted anchor line, if any: the log must pass through it. */
function checkAnchor(events, report) {
  const text = document.getElementById("anchor-input").value.trim();
  if (!text) return;
  const anchor = parseAnchor(text);
  if (!anchor) {
    report.check("Anchor", false, "That is not an anchor line (Talekeeper <campaign> #<seq> and six groups of four hex digits).");
    return;
  }
  const problem = anchorProblem(anchor, data.slug, events);
  if (problem) report.problem(anchor.seq, problem);
  report.check("Anchor", !problem, problem || `The log passes through #${anchor.seq} as the anchor says.`);
}

// --- this member's keys --------------------------------------------------------------------------

const me = data.me.username;

async function post(envelope) {
  const csrf = document.querySelector("[name=csrfmiddlewaretoken]")?.value || "";
  const res = await fetch(`/api/campaigns/${encodeURIComponent(data.slug)}/commands`, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf }, body: JSON.stringify(envelope),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw { code: "refused", message: `The server refused it (${res.status}).`, ...(json.error || {}) };
  return json;
}

/** Revoke one of this member's keys, or vouch for one (`endorse_member_key`), signed by this device's key
 *  (registered first if it is not yet). */
async function sendKeyCommand(action, where) {
  const registration = new Registration({ slug: data.slug, campaignId: data.campaignId, username: me, post, context: async () => where });
  const record = await registration.ready();
  for (let attempt = 0; ; attempt += 1) {
    const id = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
    try {
      return await post({ id, action, signature: await signCommand(record, data.campaignId, where.session, where.commitment, id, action) });
    } catch (problem) {
      const now = problem?.code === "stale_session" && staleNow(problem);
      if (!now || attempt >= 2) throw problem;
      where = now;
    }
  }
}

const CANNOT_VOUCH = "This device's key is not vouched for yet, so it can't vouch for this one: "
  + "vouch for this device's key from an older device first.";

async function showKeys(report) {
  const mine = (await deviceKey(me)).key;
  const known = knownKeys(me);
  const keys = report.keys.filter((k) => k.member === me);
  const live = keys.filter((k) => k.revoked === null);
  const strangers = live.filter((k) => !known.has(k.key));
  // This device's key as the log holds it: it vouches for another key of hers only if it is live and
  // vouched for itself (docs/fair-dice.md, "Vouching for a new key").
  const mineListed = live.find((k) => k.key === mine);
  const unvouched = live.filter((k) => k.vouched === false && known.has(k.key));
  const status = document.getElementById("keys-status");
  const summary = document.getElementById("keys-summary");
  summary.dataset.state = strangers.length ? "warn" : "ok";
  summary.textContent = strangers.length
    ? `Warning: the log shows ${plural(strangers.length, "key")} added in your name that this device did not add and you have not confirmed. `
      + "If you did not add it on another device, someone else (whoever runs the server) can sign in your name: revoke it."
    : keys.some((k) => k.key === mine) ? "This device's key is registered; every key in your name is one you know."
      : "This device's key is not registered in this campaign yet: the table registers it the first time you use it here.";
  if (!strangers.length && unvouched.length) {
    summary.dataset.state = "warn";
    summary.textContent += ` ${plural(unvouched.length, "key")} of yours ${unvouched.length === 1 ? "is" : "are"} ${UNVOUCHED.replace("her", "your")}: `
      + "every member's tools warn of it until a device holding an earlier key vouches for it.";
  }
  const act = (label, aria, run) => h("button", { type: "button", class: "small secondary", "aria-label": aria, onclick: async (e) => {
    e.currentTarget.disabled = true;
    status.textContent = "";
    try {
      await run();
      await runAll();
    } catch (problem) {
      status.textContent = problem?.message || "That did not work.";
    }
  } }, label);
  fill(document.getElementById("key-list"), ...(keys.length ? keys.map((k) => {
    const { stranger, vouch, cannotVouch, revoke } = keyChoices(k, mineListed, known);
    const unvouchedKey = k.vouched === false && k.revoked === null;
    const endorse = () => sendKeyCommand({ type: ENDORSE_KEY, key: k.key }, report.where);
    return h("li", { class: stranger ? "stranger" : "", dataset: { key: k.key } },
      h("strong", null, k.label || "(no label)"), h("code", { title: k.key }, `${k.key.slice(0, 12)}…`),
      h("span", { class: "muted small" }, `added #${k.added}`),
      k.key === mine ? h("span", { class: "badge" }, "this device") : null,
      k.revoked !== null ? h("span", { class: "badge void" }, `revoked #${k.revoked}`) : null,
      stranger ? h("span", { class: "badge bad" }, "not added here") : null,
      unvouchedKey ? h("span", { class: "badge warn" }, UNVOUCHED) : null,
      // Compare the label and the first characters with what the other device shows: "It is mine" vouches
      // for it from here (an endorsement signed by this device's key) when it is not vouched for yet.
      // Each button's name starts with the words it shows (WCAG 2.5.3, "Label in Name"), then names the key.
      stranger ? act("It is mine", `It is mine: the key ${k.label}`, async () => {
        vouchFor(me, k.key);
        if (vouch) await endorse();
      }) : null,
      !stranger && vouch ? act("Vouch for it", `Vouch for it: the key ${k.label}, with this device's key`, endorse) : null,
      // An endorsement signed by a key nobody vouched for vouches for nothing: say so instead of offering one.
      cannotVouch ? h("span", { class: "small cannot-vouch" }, CANNOT_VOUCH) : null,
      revoke ? act("Revoke", `Revoke the key ${k.label}`, () => sendKeyCommand({ type: "revoke_member_key", key: k.key }, report.where)) : null);
  }) : [h("li", { class: "muted" }, "No key in your name yet.")]));
}

/** Every member's keys as the log registered them (checked above), grouped per member, oldest first. */
function showMemberKeys(report) {
  const byMember = new Map();
  for (const k of report.keys) byMember.set(k.member, [...(byMember.get(k.member) || []), k]);
  fill(document.getElementById("member-keys"), ...(byMember.size ? [...byMember].map(([member, keys]) =>
    h("li", { dataset: { member } }, h("strong", null, member || "(a former member)"), ": ",
      ...keys.flatMap((k, i) => [i ? "; " : "", h("span", { class: "member-key", dataset: { key: k.key } },
        `${k.label || "(no label)"} (added #${k.added}${k.revoked !== null ? `, revoked #${k.revoked}` : ""})`,
        k.vouched === false ? [" ", h("span", { class: "badge warn" }, UNVOUCHED)] : null)])))
    : [h("li", { class: "muted" }, "No member has registered a key yet.")]));
}

const summaryEl = document.getElementById("verify-summary");

async function run() {
  summaryEl.dataset.state = "running";
  summaryEl.textContent = "Checking…";
  let report;
  try {
    report = await verify();
  } catch (problem) {
    summaryEl.dataset.state = "error";
    summaryEl.textContent = `Could not finish: ${problem.message}`;
    return null;
  }
  fill(document.getElementById("verify-checks"), ...report.checks.map((c) => h("li", { class: c.ok ? "ok" : "bad" },
    h("span", { "aria-hidden": "true" }, c.ok ? "✔ " : "✘ "), h("strong", null, `${c.name}: `), c.text)));
  const problems = [...report.problems].sort((a, b) => a.seq - b.seq);
  fill(document.getElementById("verify-problems"), ...(problems.length
    ? problems.map((p) => h("li", { dataset: { seq: p.seq } }, p.message))
    : [h("li", { class: "muted" }, "None.")]));
  summaryEl.dataset.state = report.firstBad === null ? "ok" : "bad";
  if (report.firstBad !== null) summaryEl.dataset.firstBad = report.firstBad;
  summaryEl.textContent = report.firstBad === null
    ? "Everything you can see checks out: the chain, the reveals, the dice of every finished session and the receipts."
    : `The log does not check out: the first bad event is #${report.firstBad}.`;
  showMemberKeys(report);
  if (data.signing !== false) await showKeys(report);
  else document.getElementById("keys-summary").textContent = "This campaign's members do not sign their commands: there are no keys to list.";
  return report;
}
const runAll = () => run();

document.getElementById("verify-run").addEventListener("click", run);
document.getElementById("verify-receipts").addEventListener("change", run);
document.getElementById("anchor-check").addEventListener("click", run);
window.talekeeperVerify = { run, verify };
run();
