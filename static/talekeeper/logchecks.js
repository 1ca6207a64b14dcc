// The verification page's checks of a log it has read whole (./verify.js runs them, with the chain's,
// the commands', the signatures' and the receipts'): pure, so Node runs them on a recorded log too
// (tests/js/logchecks.test.mjs). Each takes the events as this member read them from #1 and a report
// ({problem(seq, message), check(name, ok, text), problems}, see `newReport`).
//   reveals     every roll_revealed against the sealed event's body digest (its commitment);
//   dice        every die of every finished session from its revealed seed (schemes v2, v3 and v4);
//   witnesses   every witnessed roll as rules/witness.py checks it (./witness.js).

import { DICE_V2, DICE_V3, deriveFace, deriveNonce, fromHex, isSealed, recomputeHash, revealProblem, sha256Hex } from "./chain.js";
import { plural } from "./ui.js";
import { DICE_V4, PENDING, WitnessBook, isResolution, said, truthy } from "./witness.js";

/** A report the checks fill: each check's line, each problem by seq. */
export function newReport() {
  return {
    checks: [],
    problems: [],
    check(name, ok, text) { this.checks.push({ name, ok, text }); },
    problem(seq, message) { this.problems.push({ seq, message }); },
  };
}

/** Each event's body digest (format 2), by seq, as the chain check computes it: what a reveal is checked against. */
export async function bodyDigests(events, campaignId) {
  const digests = new Map();
  for (const ev of events) digests.set(ev.seq, (await recomputeHash(ev, campaignId)).digest);
  return digests;
}

export async function checkReveals(events, digests, report) {
  const before = report.problems.length;
  let count = 0;
  for (const ev of events.filter((e) => e.type === "roll_revealed")) {
    count += 1;
    const target = events[(ev.payload?.seq ?? 0) - 1];
    const problem = target ? await revealProblem(ev, { digest: digests.get(target.seq), payload: target.payload })
      : `#${ev.seq} reveals an event that is not in the log`;
    if (problem) report.problem(ev.seq, `Forged reveal: ${problem}.`);
  }
  report.check("Reveals", report.problems.length === before, `${plural(count, "reveal")} checked against the ${count === 1 ? "roll it unseals" : "rolls they unseal"}.`);
}

/** Whether a dice_log is a list of [sides, face] pairs of whole numbers, sides at least 1 (as the
 *  standalone verifier reads it): anything else would be dice no seed check could read. */
const diceLogOk = (log) => Array.isArray(log) && log.every((d) => Array.isArray(d) && d.length === 2 &&
  d.every((n) => Number.isInteger(n)) && d[0] >= 1);

async function checkSessionDice(start, end, events, report, campaignId) {
  const n = start.payload.session;
  const scheme = start.payload.dice_scheme;
  const seed = end.payload.dice_seed;
  if (seed === null || seed === undefined) {
    report.problem(end.seq, `Session ${n}'s seed was not kept (the campaign was restored from an export made while it ran): its dice can't be checked.`);
    return { dice: 0, sealed: 0 };
  }
  if (typeof seed !== "string" || !/^[0-9a-f]{64}$/.test(seed) || (await sha256Hex(fromHex(seed))) !== start.payload.dice_commitment) {
    report.problem(end.seq, `The seed revealed in #${end.seq} is not the one session ${n} committed to in #${start.seq}.`);
    return { dice: 0, sealed: 0 };
  }
  let dice = 0;
  let sealed = 0;
  for (const ev of events) {
    if (ev.session !== n) continue;
    if (isSealed(ev)) { sealed += 1; continue; }
    const p = ev.payload || {};
    if (!truthy(p.dice_log)) continue;
    if (!diceLogOk(p.dice_log)) {
      report.problem(ev.seq, `#${ev.seq}: its dice_log is not a list of [sides, face] pairs.`);
      continue;
    }
    let commandId = p.command_id;
    let version = scheme;
    if (isResolution(p) && scheme === DICE_V3) {
      // A witnessed command's decision: its id is on its pending event (revealed with it when it was sealed),
      // its dice hang on the witness digest too.
      const pending = events[p.command_of - 1];
      if (!pending || isSealed(pending) || pending.type !== PENDING || typeof pending.payload?.command_id !== "string") {
        report.problem(ev.seq, `#${ev.seq} is a witnessed roll's decision whose pending event this member can't read.`);
        continue;
      }
      commandId = `${pending.payload.command_id}|${p.witness_digest}`;
      version = DICE_V4;
    }
    if ((version !== DICE_V4 && p.dice_scheme !== scheme) || typeof commandId !== "string") {
      report.problem(ev.seq, `#${ev.seq} rolled dice in session ${n} without its dice scheme and command id.`);
      continue;
    }
    for (const [index, [sides, face]] of p.dice_log.entries()) {
      dice += 1;
      const want = Number.isSafeInteger(sides) && sides > 0
        ? await deriveFace(seed, campaignId, n, ev.actor_id, commandId, index, sides, version) : null;
      if (want !== face) {
        report.problem(ev.seq, `#${ev.seq}: die ${index + 1} (d${sides}) shows ${face}; the seed gives ${want}.`);
        break;
      }
    }
    // A nonce_drawn one (an event sealed from its own actor) is drawn, not derived: docs/fair-dice.md, section 4.
    if (ev.visibility !== "public" && p.nonce_drawn !== true && p.nonce !== await deriveNonce(seed, campaignId, n, ev.actor_id, commandId, version)) {
      report.problem(ev.seq, `#${ev.seq}: the hidden roll's nonce is not the one the seed gives.`);
    }
  }
  return { dice, sealed };
}

/** Every event from a session's start to its end is stamped with it, and none outside: a roll made
 *  while it ran, stamped as rolled outside any session ("not verifiable"), would escape its seed. */
function checkSessionBounds(n, start, end, events, report) {
  for (const ev of events) {
    const inside = ev.seq >= start.seq && ev.seq <= end.seq;
    if (inside !== (ev.session === n)) {
      report.problem(ev.seq, `#${ev.seq} is stamped ${ev.session == null ? "outside any session" : `session ${ev.session}`}, but session ${n} runs from #${start.seq} to #${end.seq}.`);
    }
  }
}

/** Every session stamped on an event opens with its start and, once the log goes on past it, closes
 *  with its end, both public: a start or end sealed from this member (stored for the GM alone) would
 *  leave every die of that session unchecked here. */
function checkSessionFrames(events, report) {
  const first = new Map();
  const last = new Map();
  for (const ev of events) {
    if (!Number.isSafeInteger(ev.session)) continue;
    if (!first.has(ev.session)) first.set(ev.session, ev);
    last.set(ev.session, ev);
  }
  const final = events.length ? events[events.length - 1].seq : 0;
  for (const [n, start] of first) {
    const frames = [["session_started", "start", start]];
    if (last.get(n).seq !== final) frames.push(["session_ended", "end", last.get(n)]); // the log goes on: it ended
    for (const [kind, word, ev] of frames) {
      if (isSealed(ev) || ev.type !== kind || ev.payload?.session !== n || ev.visibility !== "public") {
        report.problem(ev.seq, `#${ev.seq} is not session ${n}'s ${word} as a public event you can read: its dice can't be checked.`);
      }
    }
  }
}

/** Each sealed event's payload as a reveal showed it (checked against its seal by checkReveals), by seq. */
export function revealedPayloads(events) {
  return new Map(events.filter((e) => e.type === "roll_revealed" && !isSealed(e) && e.payload?.body)
    .map((e) => [e.payload.seq, e.payload.body.payload]));
}

/** A member's command id is used once in a campaign: the same id rolls the same dice, so a second event
 *  under it would replay the first one's dice, each matching the seed. */
function checkCommandIds(events, report) {
  const revealed = revealedPayloads(events);
  const first = new Map();
  for (const ev of events) {
    const id = (isSealed(ev) ? revealed.get(ev.seq) : ev.payload)?.command_id;
    if (id === undefined || id === null) continue;
    const key = JSON.stringify([ev.actor_id, id]);
    if (first.has(key)) report.problem(ev.seq, `#${ev.seq} is stored under the command id of #${first.get(key)} by the same member: the same id rolls the same dice.`);
    else first.set(key, ev.seq);
  }
}

export async function checkDice(events, report, campaignId) {
  const before = report.problems.length;
  const notes = [];
  checkSessionFrames(events, report);
  checkCommandIds(events, report);
  let dice = 0;
  const started = new Set();
  for (const start of events.filter((e) => e.type === "session_started")) {
    const n = start.payload.session;
    // A second commitment for a session that runs already: its dice would escape the first one.
    if (started.has(n)) { report.problem(start.seq, `#${start.seq} starts session ${n} a second time.`); continue; }
    started.add(n);
    const end = events.find((e) => e.type === "session_ended" && e.payload?.session === n);
    if (!end) { notes.push(`session ${n} is running: its seed stays secret until it ends`); continue; }
    checkSessionBounds(n, start, end, events, report);
    const current = start.payload.dice_scheme === DICE_V2 || start.payload.dice_scheme === DICE_V3;
    if (!current && (start.format || 1) >= 2) {
      // v1 dice hang on seq and on seeds anyone adds (a host can aim them); v1 sessions predate format 2.
      report.problem(start.seq, `#${start.seq} starts session ${n} under an old dice scheme (${start.payload.dice_scheme}), which ended with the old hash format: its dice could be aimed.`);
      continue;
    }
    if (!current) {
      notes.push(`session ${n} uses dice scheme v1 (dice keyed on seq), which this page does not check: manage.py verify_dice does`);
      continue;
    }
    const result = await checkSessionDice(start, end, events, report, campaignId);
    dice += result.dice;
    // A sealed event may be a roll, a whisper, an NPC the GM made...: its stub does not say, so neither does this.
    notes.push(`session ${n}: ${plural(result.dice, "die", "dice")}${result.sealed
      ? `, ${plural(result.sealed, "event")} sealed from you (not checked: you may not see ${result.sealed === 1 ? "it" : "them"})` : ""}`);
  }
  const unverifiable = events.filter((e) => e.payload?.verifiable === false).length;
  if (unverifiable) notes.push(`${plural(unverifiable, "roll")} outside a session ${unverifiable === 1 ? "is" : "are"} not verifiable`);
  const matched = plural(dice, "die matches its session's revealed seed", "dice match their sessions' revealed seeds");
  report.check("Dice", report.problems.length === before, `${matched}${notes.length ? ` (${notes.join("; ")})` : ""}.`);
}


/** Every witnessed roll the member can read: decided with every contribution stored before it, none
 *  other, by listed witnesses, under their digest (./witness.js; the dice are checked with the session's). */
export async function checkWitnessed(events, report) {
  const before = report.problems.length;
  const book = new WitnessBook(sha256Hex);
  for (const ev of events) {
    for (const problem of await book.see(ev)) report.problem(problem.seq, said(problem));
  }
  const rolls = [...book.rolls.values()].filter((r) => r.resolved !== null);
  const unwitnessed = rolls.filter((r) => r.payload?.unwitnessed === true).length;
  report.check("Witnessed rolls", report.problems.length === before,
    `${plural(rolls.length, "witnessed roll")} decided with every contribution stored before ${rolls.length === 1 ? "it" : "them"}${
      unwitnessed ? ` (${unwitnessed} unwitnessed: nobody else was at the table)` : ""}.`);
}

