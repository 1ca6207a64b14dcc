// Witnessed rolls as the browser reads them (docs/fair-dice.md, "Witnessed rolls"): the checks of
// rules/witness.py on the events this page receives, and what the table shows of each roll.
//
// A witnessed command is a `roll_pending` event (its signed envelope, `witnesses`: member ids), for a
// sealed one also a public `witness_call`; then each witness's signed `witness_commit` (the commitment
// to her entropy), stored as `roll_committed`; then the server's `commitments_closed` (`committed`: the
// seqs of the commitments stored before it); then each witness's signed `witness_roll` (her entropy,
// revealed), stored as `roll_witnessed`; then its decision, whose first event names the reveals it used
// (`witnessed_by`) and their digest (`witness_digest`), or says `"unwitnessed": true`. A session whose
// `session_started` says `"witness_commits": true` commits before it reveals, and so does every later one.
// Whose rolls wait follows the members' roles and the characters' owners, folded by ./senders.js.

import { GM, Seats, characterOf } from "./senders.js";

export const PENDING = "roll_pending";
export const CALL = "witness_call";
export const CONTRIBUTION = "roll_witnessed";
export const CONTRIBUTE = "witness_roll";
export const COMMITTED = "roll_committed";
export const CLOSED = "commitments_closed";
export const COMMIT = "witness_commit";
export const COMMITS_MARK = "witness_commits";
export const DICE_V4 = "talekeeper-hmac-sha256-v4";
export const MODES = ["off", "gm", "everyone"];

const changes = (p) => (p.changed && typeof p.changed === "object" ? p.changed : {});

export const isResolution = (payload) => !!payload && typeof payload === "object" && "witness_digest" in payload;

/** What the digest covers, of `[[seq, member id, entropy], ...]`: `[[member id, entropy], ...]` in member id
 * order, as JCS (whole numbers and base64url text, so JSON.stringify writes exactly it). Not the seqs: the
 * host chooses where it stores each contribution (rules/witness.py). */
export const digestText = (came) => JSON.stringify(came.map(([, member, entropy]) => [member, entropy])
  .sort((a, b) => a[0] - b[0]));

/** What a witness commits to, of her entropy for a roll: the JCS of `{entropy, member, roll}` (keys in
 *  order; whole numbers and base64url text, so JSON.stringify writes exactly it), hashed by SHA-256. */
export const commitmentText = (roll, member, entropy) => JSON.stringify({ entropy, member, roll });

const isCommitment = (text) => typeof text === "string" && /^[0-9a-f]{64}$/.test(text);

/** Whether a pending roll's `witnesses` are member ids, each once in ascending order, not its sender's. */
export const witnessListOk = (w, sender) => Array.isArray(w) && w.every((id) => Number.isInteger(id)) &&
  !w.includes(sender) && w.every((id, i) => i === 0 || w[i - 1] < id);

/** The witnessed rolls this page has seen, in seq order. `sha256Hex(text)` hashes the UTF-8 of text. */
export class WitnessBook {
  constructor(sha256Hex) {
    this.sha256Hex = sha256Hex;
    this.rolls = new Map(); // pending seq -> {actor, witnesses, came: [[seq, member, entropy]], by: {seq: username}, resolved}
    // Whose rolls wait for witnesses, as far as this page read the log from its start ("off" until then).
    this.mode = "off";
    // Roles by member id (a username is no part of the chain, and a host could rename its GM's account),
    // the characters' owners, and who was a GM at any point of the session now read (GM at its start, or
    // made one in it): under "gm" her rolls wait for witnesses to its end, whatever her role now.
    this.seats = new Seats();
    this.marked = new Map(); // session -> whether its witnessed rolls commit before they reveal
    this.markedFrom = null; // the earliest session_started carrying the marker: every later one must too
  }

  /** The roll a pending seq names, once seen (null before). */
  roll(seq) { return this.rolls.get(seq) || null; }

  /** Read one event (in seq order, once its hash is checked); the problem it shows, or "". */
  async see(ev) {
    const { change } = this.seats.see(ev);
    if (ev.hidden) return "";
    const p = ev.payload || {};
    if (ev.type === "campaign_created") { // its actor is the GM
      this.mode = p.witnessed_rolls ?? "off";
      if (!MODES.includes(this.mode)) return `#${ev.seq} names no setting of whose rolls are witnessed (${MODES.join(", ")}).`;
    } else if (change && ev.type !== "member_removed") {
      // Inside a session a GM made a player for one roll would escape its witnesses (rules/witness.py steps_down).
      if (ev.session != null && this.mode === "gm" && change.was === GM && change.role !== GM) {
        return `#${ev.seq} changes who is a GM inside a session where the GM's rolls are witnessed: as a player her rolls would escape their witnesses.`;
      }
    }
    if (ev.type === "session_started") {
      this.marked.set(p.session, p[COMMITS_MARK] === true);
      if (p[COMMITS_MARK] === true) this.markedFrom ??= ev.seq;
      else if (this.markedFrom !== null) {
        return `#${ev.seq} starts a session whose witnessed rolls reveal without committing first, after #${this.markedFrom} began committing: a downgrade, the last witness could aim the dice.`;
      }
    }
    if (ev.type === PENDING) {
      this.rolls.set(ev.seq, this._new(p.witnesses, ev.actor_id, false, this.marked.get(ev.session) === true));
      if (!witnessListOk(p.witnesses, ev.actor_id)) {
        return `#${ev.seq} is a witnessed roll whose witnesses are not member ids in ascending order, its sender not among them: no contribution could be checked against them.`;
      }
    } else if (ev.type === CALL) {
      const known = this.rolls.get(p.command_of);
      if (!known) this.rolls.set(p.command_of, this._new(p.witnesses, ev.actor_id, true, this.marked.get(ev.session) === true));
      else if (JSON.stringify(known.witnesses) !== JSON.stringify(p.witnesses)) {
        return `#${ev.seq} calls other witnesses than roll #${p.command_of} lists.`;
      }
    } else if (ev.type === COMMITTED) {
      return this._commitment(ev, p);
    } else if (ev.type === CLOSED) {
      return this._close(ev, p);
    } else if (ev.type === CONTRIBUTION) {
      return this._contribution(ev, p);
    } else if (isResolution(p)) {
      return this._resolution(ev, p);
    } else if (ev.type === "campaign_configured" && ("witnessed_rolls" in p || "witnessed_rolls" in changes(p))) {
      this.mode = p.witnessed_rolls;
      // The server writes the key only with a change, and only between sessions (rules/witness.py).
      if (ev.session != null) return `#${ev.seq} changes whose rolls are witnessed inside a session, where rolls could escape their witnesses: it changes between sessions only.`;
      // Its line of the log reads `changed`; every check here reads the setting: they must agree.
      if (!MODES.includes(this.mode) || changes(p).witnessed_rolls?.to !== this.mode) {
        return `#${ev.seq} sets whose rolls are witnessed otherwise than its line of the log says, or to no setting (${MODES.join(", ")}).`;
      }
    } else if (Array.isArray(p.dice_log) && p.dice_log.length && ev.session != null && "command_id" in p) {
      return this._unwaited(ev, p);
    }
    return "";
  }

  /** Why a roll inside a session stored without the pending step should have waited ("" if not): its
   *  sender's rolls wait (her role, or under "gm" a GM at any point of the session), or under "gm" the
   *  character it is for is a GM's, whoever sent it (rules/witness.py). */
  _unwaited(ev, p) {
    const { seats, mode } = this;
    if (mode === "everyone" || (mode === "gm" && (seats.roles.get(ev.actor_id) === GM || seats.gmThis.has(ev.actor_id)))) {
      return `#${ev.seq} is a roll by a member whose rolls this campaign witnesses (${mode}), stored without waiting for witnesses: its sender could have chosen its dice.`;
    }
    if (mode === "gm" && seats.gms(characterOf(p))) {
      return `#${ev.seq} is a roll for a character of a GM's (an NPC, or one a GM owns), whose rolls this campaign witnesses (${mode}), stored without waiting for witnesses: its sender could have chosen its dice.`;
    }
    return "";
  }

  // `commits`: its session commits before it reveals; `committed`: [[seq, member, commitment]] in seq order;
  // `closed`: its close's seq, and `closedSet`: member -> [seq, commitment] the close holds.
  _new(witnesses, actor, sealed, commits) {
    return { actor, witnesses: Array.isArray(witnesses) ? witnesses : null, came: [], by: {}, resolved: null, sealed,
      payload: null, commits, committed: [], closed: null, closedSet: new Map() };
  }

  /** Whether a roll is checked as commit-then-reveal: its session says so, or a commitment or close to it came. */
  _twoPhase(known) { return known.commits || known.committed.length > 0 || known.closed !== null; }

  /** What every witness's command to a roll must be (rules/witness.py): of the roll she signed, to a
   *  waiting roll that lists her. `known` null: its roll is before this page's window (the verification
   *  page reads the whole log). */
  _witnessProblem(ev, p, known, what) {
    const roll = p.action?.roll;
    if (p.roll !== roll) return `#${ev.seq} is a ${what} whose roll is not the one its member signed.`;
    if (!known) return "";
    if (known.resolved !== null) return `#${ev.seq} is a ${what} to roll #${roll} after it was decided in #${known.resolved}.`;
    if (known.witnesses && !known.witnesses.includes(ev.actor_id)) {
      return `#${ev.seq} is a ${what} by a member roll #${roll} does not list as its witness.`;
    }
    return "";
  }

  _commitment(ev, p) {
    const roll = p.action?.roll;
    const known = this.rolls.get(roll);
    if (!isCommitment(p.action?.commitment)) return `#${ev.seq} is a commitment that is not a SHA-256 digest in hex.`;
    const why = this._witnessProblem(ev, p, known, "commitment");
    if (why || !known) return why;
    if (known.closed !== null) return `#${ev.seq} is a commitment to roll #${roll} after its commitments were closed in #${known.closed}.`;
    if (known.committed.some(([, member]) => member === ev.actor_id)) return `#${ev.seq} is a second commitment of this member to roll #${roll}.`;
    known.committed.push([ev.seq, ev.actor_id, p.action.commitment]);
    return "";
  }

  _close(ev, p) {
    const known = this.rolls.get(p.command_of);
    if (!known) return "";
    if (known.resolved !== null) return `#${ev.seq} closes the commitments to roll #${p.command_of} after it was decided in #${known.resolved}.`;
    if (known.closed !== null) return `#${ev.seq} closes the commitments to roll #${p.command_of} a second time (first in #${known.closed}).`;
    known.closed = ev.seq;
    const stored = known.committed.map(([seq]) => seq);
    const named = Array.isArray(p.committed) ? p.committed : null;
    for (const [seq, member, text] of known.committed) if (named && named.includes(seq)) known.closedSet.set(member, [seq, text]);
    if (!named || JSON.stringify(named) !== JSON.stringify(stored)) {
      const left = stored.filter((seq) => !named || !named.includes(seq));
      if (left.length) {
        return `#${ev.seq} leaves out the commitment${left.length > 1 ? "s" : ""} ${left.map((s) => `#${s}`).join(", ")} stored before it: the host chose whose entropy could count.`;
      }
      return `#${ev.seq} names commitments to roll #${p.command_of} that the log does not hold before it.`;
    }
    return "";
  }

  async _contribution(ev, p) {
    const roll = p.action?.roll;
    const known = this.rolls.get(roll);
    const why = this._witnessProblem(ev, p, known, "contribution");
    if (why || !known) return why;
    if (known.came.some(([, member]) => member === ev.actor_id)) return `#${ev.seq} is a second contribution to roll #${roll} by one member.`;
    if (this._twoPhase(known)) {
      if (known.closed === null) {
        return `#${ev.seq} reveals its entropy to roll #${roll} before its commitments were closed: a witness who saw it could choose hers after.`;
      }
      const mine = known.closedSet.get(ev.actor_id);
      if (!mine) return `#${ev.seq} is a reveal by a member with no commitment in roll #${roll}'s closed set (#${known.closed}).`;
      if (await this.sha256Hex(commitmentText(roll, ev.actor_id, p.action?.entropy)) !== mine[1]) {
        return `#${ev.seq} is a reveal that does not match its commitment #${mine[0]}.`;
      }
    }
    known.came.push([ev.seq, ev.actor_id, p.action?.entropy]);
    known.by[ev.seq] = ev.actor;
    return "";
  }

  async _resolution(ev, p) {
    const known = this.rolls.get(p.command_of);
    if (!known) return "";
    if (known.resolved !== null) return `#${ev.seq} decides roll #${p.command_of} a second time (first in #${known.resolved}).`;
    known.resolved = ev.seq;
    known.payload = p;
    if (this._twoPhase(known) && known.closed === null && !(Array.isArray(known.witnesses) && known.witnesses.length === 0)) {
      return `#${ev.seq} decides roll #${p.command_of} before its commitments were closed.`;
    }
    const came = known.came.map(([seq]) => seq);
    const named = Array.isArray(p.witnessed_by) ? p.witnessed_by : [];
    const left = came.filter((seq) => !named.includes(seq));
    if (left.length) {
      return `#${ev.seq} leaves out the contribution${left.length > 1 ? "s" : ""} ${left.map((s) => `#${s}`).join(", ")} stored before it: the server chose which to use.`;
    }
    if (JSON.stringify(named) !== JSON.stringify(came)) return `#${ev.seq} names contributions to roll #${p.command_of} that the log does not hold before it.`;
    if (p.dice_scheme !== DICE_V4) return `#${ev.seq} is a witnessed roll's decision not of dice scheme v4.`;
    if (p.witness_digest !== await this.sha256Hex(digestText(known.came))) {
      return `#${ev.seq}'s witness digest is not the digest of the contributions it names.`;
    }
    if ((p.unwitnessed === true) !== (came.length === 0)) return `#${ev.seq} says unwitnessed with contributions, or witnessed with none.`;
    return "";
  }

  /** Who witnessed the roll decided at `seq` (usernames), or null if it is no witnessed roll seen here. */
  witnessesOf(payload) {
    if (!isResolution(payload)) return null;
    const known = this.rolls.get(payload.command_of);
    if (!known) return (payload.witnessed_by || []).map((seq) => `#${seq}`);
    return (payload.witnessed_by || []).map((seq) => known.by[seq] || `#${seq}`);
  }
}
