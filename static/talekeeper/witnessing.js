// Witnessed rolls at the table (docs/fair-dice.md, "Witnessed rolls"): this member's table contributes
// to every roll that lists her as a witness, at once and by itself (32 bytes from getRandomValues, in a
// command signed with her key like any other); a pending roll reads "rolling…" until its decision, which
// reads "witnessed by A, B" or "unwitnessed"; and if a contribution this table sent is not among those
// the decision used, its line says so (the server can pretend it never arrived: only this table knows).
//
// Owns the rolls this page witnesses. The checks that hold for everyone (every stored contribution
// included, the digest) are the chain's (./witness.js, run by ./chain.js).

import { h } from "./ui.js";
import { sendCommand } from "./commands.js";
import { toB64url } from "./keys.js";
import { resultDecided } from "./result.js";
import { state } from "./state.js";
import { CALL, CONTRIBUTE, PENDING, isResolution } from "./witness.js";

const waiting = new Set(); // pending seqs this member witnesses, not decided yet, not contributed to yet
const sent = new Map(); // pending seq -> {seq: the contribution's seq once stored, refused: code, at: ms after the roll arrived}
const arrived = new Map(); // pending seq -> performance.now() when this page saw it
const decisions = new Map(); // pending seq -> the seq of its decision

/** The pending seq an event belongs to, if it is part of a witnessed roll (its pending event, call or decision). */
export function rollOf(ev) {
  const p = ev.payload || {};
  if (ev.type === PENDING) return ev.seq;
  if (ev.type === CALL || isResolution(p)) return p.command_of;
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
      if (!state.loading) contribute(roll);
    }
  } else if (isResolution(p)) {
    decisions.set(p.command_of, ev.seq);
    waiting.delete(p.command_of);
    redraw(p.command_of);
    resultDecided(p.command_of, ev.seq);
  }
}

/** Once the backlog is shown: contribute to the rolls in it still waiting for this member. */
export function flushWitnessing() {
  for (const roll of [...waiting]) contribute(roll);
}

async function contribute(roll) {
  if (!waiting.delete(roll) || sent.has(roll)) return;
  const mine = { seq: null, refused: null, at: Math.round(performance.now() - (arrived.get(roll) ?? performance.now())) };
  sent.set(roll, mine);
  try {
    const entropy = toB64url(crypto.getRandomValues(new Uint8Array(32)));
    mine.seq = (await sendCommand({ type: CONTRIBUTE, roll, entropy })).seq;
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
    return { badge: h("span", { class: "badge witness", dataset: { state: decided ? "decided" : "pending" } },
      decided ? `decided in #${decided}` : "rolling…") };
  }
  if (!isResolution(p)) return null;
  const names = (p.witnessed_by || []).map((seq) => state.events.get(seq)?.actor || `#${seq}`);
  const badge = p.unwitnessed === true
    ? h("span", { class: "badge witness", dataset: { state: "unwitnessed" },
      title: "Nobody else had the table open when it was rolled: its dice are only as fair as the host" }, "unwitnessed")
    : h("span", { class: "badge witness", dataset: { state: "witnessed" },
      title: "Its dice hang on the random bytes these members' tables sent after it was stored" }, `witnessed by ${names.join(", ")}`);
  return { badge, note: leftOut(p) };
}

/** What to tell this member when her table's contribution is not among those the decision used. */
function leftOut(p) {
  const mine = sent.get(p.command_of);
  if (!mine || (mine.seq === null && mine.refused === null)) return ""; // not sent here, or its answer is on its way
  if (mine.seq !== null && (p.witnessed_by || []).includes(mine.seq)) return "";
  if (mine.refused === "already_witnessed") return ""; // stored from another of her devices
  const when = `${(mine.at / 1000).toFixed(1)} s after the roll reached your table`;
  if (mine.seq !== null) {
    return `Your table's contribution (#${mine.seq}) is not among those this roll was decided with: the server chose without it.`;
  }
  return mine.refused === "roll_resolved"
    ? `Your table sent its contribution ${when}; the server answered that the roll was already decided, and decided it without yours.`
    : `Your table sent its contribution ${when}, and the roll was decided without it (the server answered: ${mine.refused}).`;
}
