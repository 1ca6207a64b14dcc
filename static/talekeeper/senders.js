// Who could send a member's command, as the browser reads it from the log (docs/fair-dice.md, "Who may
// send a command"): the checks of rules/senders.py, run by ./signed.js (the table and the verification
// page), and the fold ./witness.js reads for whose rolls wait for witnesses.
//
// A member's command is a signed command's first event (`command_id`, `action`, `signature`, no
// `command_of`). Its sender could send it when she is a member at that point of the log (the GM who
// created the campaign, or one who joined and was not removed since) and may act for every character its
// action names (`character`, a GM's `characters`): a GM for any, a player for her own player character
// (never an NPC: NPCs are the GM's), a spectator for none. A character's owner and NPC mark are what its
// `character_created` says, and where a signed command made it, what that command says.
//
// Members are named by id; an event from before events carried it, by username (rules/senders.py says
// how). Nothing is named unless the page read the log from its first event.

export const GM = "gm";
export const SPECTATOR = "spectator";
const MEMBERSHIP = new Set(["member_joined", "member_role_changed", "member_removed"]);
const SIGNING_REQUIRED = "signed_commands_required";
const SCHEME_V3 = "talekeeper-hmac-sha256-v3";
export const NOT_A_MEMBER = "a command by someone who is not a member of the campaign at this point of the log (never joined, or removed since): only a member's commands are taken";
export const NOT_AS_SIGNED = "a character whose owner or NPC mark is not what the signed command that made it says: the sender owns what she makes, unless her action gives it to another, and it is an NPC if it says so";

const isId = (v) => Number.isInteger(v);
const nothing = (v) => v === null || v === undefined;

/** The characters an action names to act for: `character`, and each of a GM's `characters`. */
export function namedCharacters(action) {
  const named = isId(action.character) ? [action.character] : [];
  if (Array.isArray(action.characters)) named.push(...action.characters.filter(isId));
  return named;
}

/** The character a command's first event acts for (its action's `character`), or null. */
export const characterOf = (p) => (p?.action && typeof p.action === "object" && isId(p.action.character) ? p.action.character : null);

/** The members and the characters' owners as the log says, event by event (`see`, in seq order). */
export class Seats {
  constructor() {
    this.roles = new Map(); // member id -> role
    this.names = new Map(); // a username as the log or an event's actor named her -> her id
    this.unnamed = new Map(); // a username a membership event named, tied to no id yet -> {role, before signing}
    this.characters = new Map(); // id -> {owner (null: not tied to an id), npc}
    this.session = null; // the session now read, and who was a GM at any point of it
    this.gmThis = new Set();
    this.fromStart = false; // the log's first event was read: who is a member can be said
    this.signing = false; // members sign from here on
  }

  /** Read one event: `{problem, change}`: why its sender could not send it ("" if she could, or it is no
   *  command), and for a membership event `{who, was, role}` (was "gm" inside a session she was a GM in). */
  see(ev) {
    if (!nothing(ev.actor) && !this.names.has(ev.actor)) {
      this.names.set(ev.actor, ev.actor_id ?? null);
      if (this.unnamed.has(ev.actor) && !nothing(ev.actor_id)) { // an older event named her so: it was she
        this._seat(ev.actor_id, this.unnamed.get(ev.actor).role);
        this.unnamed.delete(ev.actor);
      }
    }
    if (!nothing(ev.session) && ev.session !== this.session) {
      this.session = ev.session;
      this.gmThis = new Set([...this.roles].filter(([, role]) => role === GM).map(([member]) => member));
    }
    if (ev.hidden || !ev.payload) return { problem: "", change: null };
    const problem = this._problem(ev);
    return { problem, change: this._fold(ev) };
  }

  /** Whether a character (an id) is a GM's: an NPC, or owned by a member who is a GM, or was one at any
   *  point of the session now read. One the log does not show here is not known to be. */
  gms(character) {
    const known = isId(character) ? this.characters.get(character) : null;
    if (!known) return false;
    return known.npc || (known.owner !== null && (this.roles.get(known.owner) === GM || this.gmThis.has(known.owner)));
  }

  _fold(ev) {
    const p = ev.payload;
    if (ev.type === "campaign_created") { // its actor is the GM
      this.fromStart = true;
      this.signing ||= p.signed_commands === true;
      if (!nothing(ev.actor_id)) this.roles.set(ev.actor_id, GM);
      if (typeof p.gm === "string") this.names.set(p.gm, ev.actor_id ?? null);
    } else if (ev.type === SIGNING_REQUIRED || (ev.type === "session_started" && p.dice_scheme === SCHEME_V3)) {
      this.signing = true;
    } else if (MEMBERSHIP.has(ev.type)) {
      const role = ev.type === "member_removed" ? null : p.role ?? null;
      const who = this._member(ev);
      if (who === null) {
        if (typeof p.username === "string") this.unnamed.set(p.username, { role, before: !this.signing });
        return { who: null, was: null, role };
      }
      const was = !nothing(ev.session) && this.gmThis.has(who) ? GM : this.roles.get(who) ?? null;
      this._seat(who, role);
      // A GM who leaves stays in gmThis: a GM who leaves and rejoins is one still, to the session's end.
      if (!nothing(ev.session) && role === GM) this.gmThis.add(who);
      return { who, was, role };
    } else if (ev.type === "character_created" && isId(ev.character)) {
      this.characters.set(ev.character, this._made(ev, p));
    }
    return null;
  }

  _seat(who, role) {
    if (role === null) this.roles.delete(who);
    else this.roles.set(who, role);
  }

  /** The member a membership event names (rules/senders.py). */
  _member(ev) {
    const p = ev.payload;
    if (isId(p.user_id)) {
      this.names.set(p.username, p.user_id);
      return p.user_id;
    }
    let who;
    if (ev.type === "member_joined" && !nothing(ev.actor_id) && !this.roles.has(ev.actor_id)) {
      who = ev.actor_id; // only a member adds another: an outsider joining joined by the invite link
    } else {
      who = typeof p.username === "string" ? this.names.get(p.username) ?? null : null;
    }
    if (who !== null && typeof p.username === "string") {
      this.names.set(p.username, who);
      this.unnamed.delete(p.username);
    }
    return who;
  }

  /** The owner and NPC mark of the character a `character_created` makes. */
  _made(ev, p) {
    const action = "signature" in p && p.action && typeof p.action === "object" ? p.action : null;
    if (action && nothing(action.owner)) return { owner: ev.actor_id ?? null, npc: action.npc === true }; // her own, as signed
    // Given to a member: the one the log calls so (the name her sender signed), else the payload's.
    const given = action && typeof action.owner === "string" ? this.names.get(action.owner) ?? null : null;
    const owner = given ?? (isId(p.owner_id) ? p.owner_id : typeof p.owner === "string" ? this.names.get(p.owner) ?? null : null);
    return { owner, npc: action ? action.npc === true : p.npc === true };
  }

  _problem(ev) {
    const p = ev.payload;
    const action = p.action;
    if (!this.fromStart || !("signature" in p) || "command_of" in p || !action || typeof action !== "object"
        || Array.isArray(action) || nothing(ev.actor_id)) return "";
    const role = this.roles.get(ev.actor_id);
    if (role === undefined) return [...this.unnamed.values()].some((u) => u.before) ? "" : NOT_A_MEMBER;
    for (const character of namedCharacters(action)) {
      const why = this._mayNotAct(ev.actor_id, role, character);
      if (why) return `a command for character ${character}, which its sender may not act for: ${why}`;
    }
    if (ev.type === "character_created" && isId(ev.character)) {
      const made = this._made(ev, p);
      if (("owner_id" in p && p.owner_id !== made.owner) || (p.npc === true) !== made.npc) return NOT_AS_SIGNED;
    }
    return "";
  }

  /** Why a member of `role` may not act for `character` ("" when she may): as the server's access_character. */
  _mayNotAct(actor, role, character) {
    if (role === GM) return "";
    if (role === SPECTATOR) return "a spectator acts for nobody";
    const known = this.characters.get(character);
    if (!known) return "the log shows no character of hers by that id";
    if (known.npc) return "an NPC is the GM's";
    if (known.owner !== null && known.owner !== actor) return "it is another member's";
    return "";
  }
}
