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

/** Whether a reveal's entropy is 32 bytes in base64url without padding (rules/witness.py entropy_ok): 43 of
 *  its characters always decode to 32 bytes, whatever the last one's spare bits. */
export const entropyOk = (text) => typeof text === "string" && /^[A-Za-z0-9_-]{43}$/.test(text);

/** What Python's `str(value)[:20]` shows of a seq a payload names, in a problem's words. */
const named = (value) => (value === undefined || value === null ? "None" : typeof value === "string" ? value
  : typeof value === "boolean" ? (value ? "True" : "False") : JSON.stringify(value)).slice(0, 20);

/** Python's truth of a payload value (`if p.get("dice_log")`): empty lists, objects and text are false. */
export const truthy = (v) => (Array.isArray(v) ? v.length > 0 : v && typeof v === "object" ? Object.keys(v).length > 0 : !!v);

/** A problem as the page prints it: the event's seq, then rules/witness.py's reason in the same words. */
export function said({ seq, why }) {
  if (why.startsWith("a ")) return `#${seq} is ${why}.`;
  if (why.startsWith("its ")) return `#${seq}'s ${why.slice(4)}.`;
  return `#${seq} ${why}.`;
}

/** What is wrong with an event naming the seqs `listed` among those of the log's events of its kind (`noun`)
 *  to `roll` before it (`stored`): all and only them, in seq order (rules/witness.py _names_exactly).
 *  `why`: what leaving one out lets the host do. */
function namesExactly(stored, listed, noun, roll, why) {
  if (Array.isArray(listed) && JSON.stringify(listed) === JSON.stringify(stored)) return "";
  const left = stored.filter((seq) => !Array.isArray(listed) || !listed.includes(seq));
  if (left.length) return `leaves out the ${noun}${left.length > 1 ? "s" : ""} ${left.map((s) => `#${s}`).join(", ")} stored before it: ${why}`;
  return `names ${noun}s to roll #${roll} that the log does not hold before it`;
}

/** The witnessed rolls this page has seen, in seq order: rules/witness.py's `problems`, check for check and
 *  in the same words, on the events this page reads. `sha256Hex(text)` hashes the UTF-8 of text. */
export class WitnessBook {
  constructor(sha256Hex) {
    this.sha256Hex = sha256Hex;
    // pending seq -> {actor, session, witnesses, came: [[seq, member, entropy]], by: {seq: username}, resolved, ...}
    this.rolls = new Map();
    // Whose rolls wait for witnesses, as far as this page read the log from its start ("off" until then).
    this.mode = "off";
    // Roles by member id (a username is no part of the chain, and a host could rename its GM's account),
    // the characters' owners, and who was a GM at any point of the session now read (GM at its start, or
    // made one in it): under "gm" her rolls wait for witnesses to its end, whatever her role now.
    this.seats = new Seats();
    this.marked = new Map(); // session -> whether its witnessed rolls commit before they reveal
    this.markedFrom = null; // the earliest session_started carrying the marker: every later one must too
    // The first seq this page read: a roll before it is outside its window (the table reads the log from where
    // it opened; the verification page from #1). A roll named at or after it was read here, or never stored.
    this.from = null;
    this.lastSealed = null; // the last seq read sealed: a decision may be sealed from this member
  }

  /** The roll a pending seq names, once seen (null before). */
  roll(seq) { return (Number.isInteger(seq) && this.rolls.get(seq)) || null; }

  /** Whether `seq` names a roll before the first event this page read: nothing here can say what it was. */
  _before(seq) { return Number.isInteger(seq) && seq >= 1 && this.from !== null && seq < this.from; }

  /**
   * Read one event (in seq order, once its hash is checked); the problems it shows, as `[{seq, why}]`
   * (`said` words each): mostly at its own seq, a roll never decided at its pending event's.
   */
  async see(ev) {
    if (this.from === null && Number.isInteger(ev.seq)) this.from = ev.seq;
    const { change } = this.seats.see(ev);
    if (ev.hidden) {
      this.lastSealed = ev.seq;
      return [];
    }
    const p = ev.payload && typeof ev.payload === "object" ? ev.payload : {};
    const out = [];
    const bad = (why, seq = ev.seq) => { if (why) out.push({ seq, why }); };
    const kind = ev.type;
    if (kind === "campaign_created") { // its actor is the GM
      this.mode = "witnessed_rolls" in p ? p.witnessed_rolls : "off";
      if (!MODES.includes(this.mode)) bad(`names no setting of whose rolls are witnessed (${MODES.join(", ")})`);
    } else if (kind === "member_joined" || kind === "member_role_changed") {
      // Inside a session a GM made a player for one roll would escape its witnesses (rules/witness.py steps_down).
      if (change && ev.session != null && this.mode === "gm" && change.was === GM && change.role !== GM) {
        bad("changes who is a GM inside a session where the GM's rolls are witnessed: as a player her rolls would "
          + "escape their witnesses");
      }
    } else if (kind === "campaign_configured" && ("witnessed_rolls" in p || "witnessed_rolls" in changes(p))) {
      // The server writes the key only with a change, and only between sessions (rules/witness.py).
      if (ev.session != null) {
        bad("changes whose rolls are witnessed inside a session, where rolls could escape their witnesses: it "
          + "changes between sessions only");
      }
      this.mode = p.witnessed_rolls;
      // Its line of the log reads `changed`; every check here reads the setting: they must agree.
      const to = changes(p).witnessed_rolls;
      if (!MODES.includes(this.mode) || !to || typeof to !== "object" || Array.isArray(to) || to.to !== this.mode) {
        bad(`sets whose rolls are witnessed otherwise than its line of the log says, or to no setting (${MODES.join(", ")})`);
      }
    } else if (kind === "session_started") {
      this.marked.set(p.session, p[COMMITS_MARK] === true);
      if (p[COMMITS_MARK] === true) this.markedFrom ??= ev.seq;
      else if (this.markedFrom !== null) {
        bad(`starts a session whose witnessed rolls reveal without committing first, after #${this.markedFrom} began `
          + "committing: a downgrade, the last witness could aim the dice");
      }
    } else if (kind === "session_ended") {
      for (const [seq, known] of this.rolls) {
        // A decision sealed from this member may be any event sealed from her since the roll: the GM's export says.
        const blind = !Number.isInteger(seq) || (this.lastSealed !== null && this.lastSealed > seq);
        if (known.resolved === null && known.session === ev.session && !known.named && !blind) {
          known.named = true;
          bad(`a witnessed roll never decided before its session ended (#${ev.seq})`, seq);
        }
      }
    }
    if (kind === PENDING) {
      this.rolls.set(ev.seq, this._new(p.witnesses, ev.actor_id, ev.session));
      if (!witnessListOk(p.witnesses, ev.actor_id)) {
        bad("a witnessed roll whose witnesses are not member ids in ascending order, its sender not among them: no "
          + "contribution could be checked against them");
      }
    } else if (kind === CALL) {
      const known = this.rolls.get(p.command_of);
      // No pending event read: it is sealed from this member, and the call is what she knows of it.
      if (!known) this.rolls.set(p.command_of, this._new(p.witnesses, ev.actor_id, ev.session));
      else if (JSON.stringify(known.witnesses) !== JSON.stringify(p.witnesses ?? null)) {
        bad(`calls other witnesses than roll #${p.command_of} lists`);
      }
    } else if (kind === COMMITTED) {
      bad(this._commitment(ev, p));
    } else if (kind === CLOSED) {
      bad(this._close(ev, p));
    } else if (kind === CONTRIBUTION) {
      bad(await this._contribution(ev, p));
    } else if (isResolution(p)) {
      bad(await this._resolution(ev, p));
    } else if (truthy(p.dice_log) && ev.session != null && "command_id" in p) {
      bad(this._unwaited(ev, p));
    }
    return out;
  }

  /** Why a roll inside a session stored without the pending step should have waited ("" if not): its
   *  sender's rolls wait (her role, or under "gm" a GM at any point of the session), or under "gm" the
   *  character it is for is a GM's, whoever sent it (rules/witness.py _unwaited). */
  _unwaited(ev, p) {
    const { seats, mode } = this;
    if (mode === "everyone" || (mode === "gm" && (seats.roles.get(ev.actor_id) === GM || seats.gmThis.has(ev.actor_id)))) {
      return `a roll by a member whose rolls this campaign witnesses (${mode}), stored without waiting for `
        + "witnesses: its sender could have chosen its dice";
    }
    if (mode === "gm" && seats.gms(characterOf(p))) {
      return `a roll for a character of a GM's (an NPC, or one a GM owns), whose rolls this campaign witnesses `
        + `(${mode}), stored without waiting for witnesses: its sender could have chosen its dice`;
    }
    return "";
  }

  // `commits`: its session commits before it reveals; `committed`: [[seq, member, commitment]] in seq order;
  // `closed`: its close's seq, and `closedSet`: member -> [seq, commitment] the close holds.
  _new(witnesses, actor, session) {
    return { actor, session, witnesses: Array.isArray(witnesses) ? witnesses : null, came: [], by: {}, resolved: null,
      payload: null, commits: this.marked.get(session) === true, committed: [], closed: null,
      closedSet: new Map(), named: false };
  }

  /** Whether a roll is checked as commit-then-reveal: its session says so, or a commitment or close to it came. */
  _twoPhase(known) { return known.commits || known.committed.length > 0 || known.closed !== null; }

  /** A witness's command to a roll: its signed action, the roll it names, and that roll (null: none waits). */
  _signedRoll(p) {
    const action = p.action && typeof p.action === "object" && !Array.isArray(p.action) ? p.action : {};
    return { action, roll: action.roll, known: this.roll(action.roll) };
  }

  /** What every witness's command to a roll must be (rules/witness.py): of the roll she signed, to a
   *  waiting roll that lists her. "" also for a roll before this page's window, which it can't judge. */
  _witnessProblem(ev, p, roll, known, what) {
    if (p.roll !== roll) return `a ${what} whose roll is not the one its member signed`;
    if (!known) return this._before(roll) ? "" : `a ${what} to #${named(roll)}, which is not a roll waiting for witnesses`;
    if (known.resolved !== null) return `a ${what} to roll #${roll} after it was decided in #${known.resolved}`;
    if (known.witnesses && !known.witnesses.includes(ev.actor_id)) return `a ${what} by a member roll #${roll} does not list as its witness`;
    return "";
  }

  _commitment(ev, p) {
    const { action, roll, known } = this._signedRoll(p);
    if (!isCommitment(action.commitment)) return "a commitment that is not a SHA-256 digest in hex";
    const why = this._witnessProblem(ev, p, roll, known, "commitment");
    if (why || !known) return why;
    if (known.closed !== null) return `a commitment to roll #${roll} after its commitments were closed in #${known.closed}`;
    if (known.committed.some(([, member]) => member === ev.actor_id)) return `a second commitment of this member to roll #${roll}`;
    known.committed.push([ev.seq, ev.actor_id, action.commitment]);
    return "";
  }

  _close(ev, p) {
    const roll = p.command_of;
    const known = this.roll(roll);
    if (!known) return this._before(roll) ? "" : `closes the commitments to #${named(roll)}, which is no roll waiting for witnesses`;
    if (known.resolved !== null) return `closes the commitments to roll #${roll} after it was decided in #${known.resolved}`;
    if (known.closed !== null) return `closes the commitments to roll #${roll} a second time (first in #${known.closed})`;
    known.closed = ev.seq;
    const listed = Array.isArray(p.committed) ? p.committed : null;
    for (const [seq, member, text] of known.committed) if (listed && listed.includes(seq)) known.closedSet.set(member, [seq, text]);
    return namesExactly(known.committed.map(([seq]) => seq), p.committed, "commitment", roll,
      "the host chose whose entropy could count");
  }

  async _contribution(ev, p) {
    const { action, roll, known } = this._signedRoll(p);
    if (!entropyOk(action.entropy)) return "a contribution whose entropy is not 32 bytes in base64url";
    const why = this._witnessProblem(ev, p, roll, known, "contribution");
    if (why || !known) return why;
    if (known.came.some(([, member]) => member === ev.actor_id)) return `a second contribution of this member to roll #${roll}`;
    if (this._twoPhase(known)) {
      if (known.closed === null) {
        return `reveals its entropy to roll #${roll} before its commitments were closed: a witness who saw it could choose hers after`;
      }
      const mine = known.closedSet.get(ev.actor_id);
      if (!mine) return `a reveal by a member with no commitment in roll #${roll}'s closed set (#${known.closed})`;
      if (await this.sha256Hex(commitmentText(roll, ev.actor_id, action.entropy)) !== mine[1]) {
        return `a reveal that does not match its commitment #${mine[0]}`;
      }
    }
    known.came.push([ev.seq, ev.actor_id, action.entropy]);
    known.by[ev.seq] = ev.actor;
    return "";
  }

  async _resolution(ev, p) {
    const roll = p.command_of;
    const known = this.roll(roll);
    if (!known) return this._before(roll) ? "" : `decides #${named(roll)} as a witnessed roll, but it is no roll waiting for witnesses`;
    if (known.resolved !== null) return `decides roll #${roll} a second time (first in #${known.resolved})`;
    known.resolved = ev.seq;
    known.payload = p;
    if (this._twoPhase(known) && known.closed === null && !(Array.isArray(known.witnesses) && known.witnesses.length === 0)) {
      return `decides roll #${roll} before its commitments were closed`;
    }
    if (p.dice_scheme !== DICE_V4) return `a witnessed roll's dice not of scheme ${DICE_V4}`;
    const came = known.came.map(([seq]) => seq);
    const why = namesExactly(came, p.witnessed_by, "contribution", roll, "the host chose which to use");
    if (why) return why;
    if (p.witness_digest !== await this.sha256Hex(digestText(known.came))) {
      return "its witness digest is not the digest of the contributions it names";
    }
    if ((p.unwitnessed === true) !== (came.length === 0)) return "says unwitnessed with contributions, or witnessed with none";
    return "";
  }

  /** Who witnessed the roll decided at `seq` (usernames), or null if it is no witnessed roll seen here. */
  witnessesOf(payload) {
    if (!isResolution(payload)) return null;
    const known = this.roll(payload.command_of);
    const listed = Array.isArray(payload.witnessed_by) ? payload.witnessed_by : [];
    return listed.map((seq) => known?.by[seq] || `#${seq}`);
  }
}
