// Witnessed rolls at the table (docs/fair-dice.md, "Witnessed rolls"): this member's table witnesses every
// roll that lists her, at once and by itself, in two signed commands like any other: first a commitment
// to 32 fresh bytes from getRandomValues (their hash, bound to the roll and to her), then, once the server
// has closed the roll's commitments with hers among them, the bytes themselves. Nothing is revealed before
// the close: a witness who saw them could choose hers after. A pending roll reads "rolling…" with its phase
// until its decision, which reads "witnessed by A, B" or "unwitnessed"; and if what this table sent is not
// among what the decision used, its line says so (the server can pretend it never arrived: only this
// table knows).
//
// Owns the rolls this page witnesses. The checks that hold for everyone (every stored commitment closed,
// every reveal matching it and included, the digest) are the chain's (./witness.js, run by ./chain.js).

import { h } from "./ui.js";
import { leftOutNote } from "./leftout.js";
import { sha256Hex } from "./chain.js";
import { sendCommand } from "./commands.js";
import { toB64url } from "./keys.js";
import { resultDecided } from "./result.js";
import { state } from "./state.js";
import { CALL, CLOSED, COMMIT, CONTRIBUTE, PENDING, commitmentText, isResolution } from "./witness.js";

const waiting = new Set(); // pending seqs this member witnesses, not decided yet, not committed to yet
// pending seq -> what this table sent: {entropy, committed: the commitment's seq once stored, commitRefused:
// code, seq: the reveal's seq once stored, refused: code, at: ms after the roll arrived that it was revealed}
const sent = new Map();
const arrived = new Map(); // pending seq -> performance.now() when this page saw it
const closes = new Map(); // pending seq -> the seqs of the commitments its close holds
const checkedCloses = new Set(); // pending seqs whose close passed this page's chain check
const decisions = new Map(); // pending seq -> the seq of its decision

/** The pending seq an event belongs to, if it is part of a witnessed roll (its pending event, call, close or decision). */
export function rollOf(ev) {
  const p = ev.payload || {};
  if (ev.type === PENDING) return ev.seq;
  if (ev.type === CALL || ev.type === CLOSED || isResolution(p)) return p.command_of;
  return null;
}

/** Every event shown, in seq order (log.js). */
export function witnessEvent(ev) {
  if (ev.hidden) return;
  const p = ev.payload || {};
  if ((ev.type === PENDING || ev.type === CALL) && Array.isArray(p.witnesses)) {
    const roll = rollOf(ev);
    if (!arrived.has(roll)) arrived.set(roll, performance.now());
    if (state.me.id != null && p.witnesses.includes(state.me.id) && !decisions.has(roll) && !sent.has(roll)) {
      waiting.add(roll);
      if (!state.loading) commit(roll);
    }
  } else if (ev.type === CLOSED) {
    closes.set(p.command_of, Array.isArray(p.committed) ? p.committed : []);
    waiting.delete(p.command_of); // too late to commit: the page reloaded, or it came after the close
    redraw(p.command_of);
    // Revealed only on a close this page has checked: one a host forged or altered, or sent on a log
    // that does not check out, would draw the bytes out for it to grind against.
    state.chain.passed(ev).then((ok) => {
      if (!ok) return;
      checkedCloses.add(p.command_of);
      reveal(p.command_of);
    });
  } else if (isResolution(p)) {
    decisions.set(p.command_of, ev.seq);
    waiting.delete(p.command_of);
    redraw(p.command_of);
    resultDecided(p.command_of, ev.seq);
  }
}

/** Once the backlog is shown: commit to the rolls in it still waiting for this member. */
export function flushWitnessing() {
  for (const roll of [...waiting]) commit(roll);
}

async function commit(roll) {
  if (!waiting.delete(roll) || sent.has(roll) || decisions.has(roll)) return;
  const entropy = toB64url(crypto.getRandomValues(new Uint8Array(32)));
  const mine = { entropy, committed: null, commitRefused: null, seq: null, refused: null, at: null };
  sent.set(roll, mine);
  try {
    const commitment = await sha256Hex(commitmentText(roll, state.me.id, entropy));
    mine.committed = (await sendCommand({ type: COMMIT, roll, commitment })).seq;
  } catch (problem) {
    mine.commitRefused = problem?.code || "refused";
  }
  redraw(roll);
  reveal(roll); // the close may have come before the answer to the commitment it holds
}

/** Reveal this table's entropy for `roll` once its commitment is stored and the close holds it, that
 *  close passed the chain check and the log still checks out. */
async function reveal(roll) {
  const mine = sent.get(roll);
  const closed = closes.get(roll);
  if (!mine || mine.committed === null || !closed || !closed.includes(mine.committed) || mine.at !== null ||
      decisions.has(roll) || !checkedCloses.has(roll) || state.chain.broken) return;
  mine.at = Math.round(performance.now() - (arrived.get(roll) ?? performance.now()));
  try {
    mine.seq = (await sendCommand({ type: CONTRIBUTE, roll, entropy: mine.entropy })).seq;
  } catch (problem) {
    mine.refused = problem?.code || "refused";
  }
  redraw(roll);
}

function redraw(roll) {
  const decided = decisions.get(roll);
  if (decided) state.redrawEvent?.(decided);
  state.redrawEvent?.(roll);
}

/** The badge and the note a witnessed roll's line carries (log.js), or null for any other event. */
export function witnessMarks(ev) {
  if (ev.hidden) return null;
  const p = ev.payload || {};
  if (ev.type === PENDING) {
    const decided = decisions.get(ev.seq);
    const phase = closes.has(ev.seq) ? "revealing" : "committing";
    return { badge: h("span", { class: "badge witness", dataset: { state: decided ? "decided" : phase },
      title: decided ? "" : phase === "committing"
        ? "The witnesses' tables are committing to their random bytes, unseen"
        : "The commitments are closed: the witnesses' tables are revealing their bytes" },
    decided ? `decided in #${decided}` : `rolling… (${phase})`) };
  }
  if (!isResolution(p)) return null;
  const names = (p.witnessed_by || []).map((seq) => state.events.get(seq)?.actor || `#${seq}`);
  const badge = p.unwitnessed === true
    ? h("span", { class: "badge witness", dataset: { state: "unwitnessed" },
      title: "No witness's random bytes were revealed in time: its dice are only as fair as the host" }, "unwitnessed")
    : h("span", { class: "badge witness", dataset: { state: "witnessed" },
      title: "Its dice hang on the random bytes these members' tables committed to after it was stored" }, `witnessed by ${names.join(", ")}`);
  return { badge, note: leftOut(p) };
}

/** What to tell this member when what her table sent is not among what the decision used (./leftout.js). */
function leftOut(p) {
  return leftOutNote(sent.get(p.command_of), p, closes.get(p.command_of), state.me.id, (seq) => state.events.get(seq));
}
