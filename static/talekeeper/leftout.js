// What a witness's table says on a witnessed roll's decision when what it sent is not among what the
// decision used (docs/fair-dice.md, "Witnessed rolls", "In the browser"). Kept apart from the page
// (./witnessing.js) so the decision can be tested without one.
//
// The server's answers are never taken as proof: "already_committed" (committed from another of her
// devices) is fine only if the close holds a commitment of hers to the roll, and "already_witnessed"
// only if the decision names a reveal of hers. A host could otherwise answer her with either code,
// store nothing, and decide without her bytes while her table stays silent.

import { COMMITTED, CONTRIBUTION } from "./witness.js";

/** Whether one of `seqs` is an event of `type` to `roll` whose actor is member `me` (`eventAt(seq)`: the
 *  event this page holds at seq, or undefined). */
function holdsOwn(seqs, type, roll, me, eventAt) {
  return (seqs || []).some((seq) => {
    const ev = eventAt(seq);
    return !!ev && ev.type === type && ev.actor_id === me && ev.payload?.roll === roll;
  });
}

/**
 * The note for a decision `p` (its first event's payload) of this member (`me`, her member id), or "".
 * `mine`: what her table sent for the roll ({committed, commitRefused, seq, refused, at}, ./witnessing.js),
 * undefined if it sent nothing; `closed`: the seqs of the commitments the roll's close holds, undefined
 * before it; `eventAt(seq)`: the event this page holds at seq.
 */
export function leftOutNote(mine, p, closed, me, eventAt) {
  if (!mine) return ""; // not sent here
  const roll = p.command_of;
  if (mine.commitRefused !== null) {
    // Committed from another of her devices: then the close holds that commitment, by her.
    if (mine.commitRefused === "already_committed" && holdsOwn(closed, COMMITTED, roll, me, eventAt)) return "";
    return `Your table sent its commitment, and the roll was decided without it (the server answered: ${mine.commitRefused}).`;
  }
  if (mine.committed === null) return ""; // its answer is on its way
  if (closed && !closed.includes(mine.committed)) {
    return `Your table's commitment (#${mine.committed}) is not among those the roll's commitments were closed with: the server chose without it.`;
  }
  if (mine.at === null || (mine.seq === null && mine.refused === null)) return ""; // not revealed yet, or its answer is on its way
  if (mine.seq !== null && (p.witnessed_by || []).includes(mine.seq)) return "";
  // Revealed already (the same bytes sent again): then the decision names that reveal, by her.
  if (mine.refused === "already_witnessed" && holdsOwn(p.witnessed_by, CONTRIBUTION, roll, me, eventAt)) return "";
  const when = `${(mine.at / 1000).toFixed(1)} s after the roll reached your table`;
  if (mine.seq !== null) {
    return `Your table's contribution (#${mine.seq}) is not among those this roll was decided with: the server chose without it.`;
  }
  return mine.refused === "roll_resolved"
    ? `Your table sent its contribution ${when}; the server answered that the roll was already decided, and decided it without yours.`
    : `Your table sent its contribution ${when}, and the roll was decided without it (the server answered: ${mine.refused}).`;
}
