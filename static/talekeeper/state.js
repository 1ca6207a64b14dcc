// The table's state: one object every table module reads and changes (docs/table.md, "The page's
// modules"). It holds what more than one module needs: who this member is, the events shown, the
// characters and members as the log made them, the session and scene running, the socket and the
// commands in flight on it. What only one module needs (a timer, the result card it shows) stays in
// that module.
//
// Filled once by initState (table.js) before anything is drawn; the modules read it when they run,
// never when they are imported, so importing one draws nothing and needs no page.

import { renamed } from "./format.js";

export const state = {};

// The sibling modules the page sets up at start (table.js): the dice box, the chat, the encounter
// room, the fight panel, the new-character form. Each is an object of functions, filled before the
// first event is shown; until then a module that draws asks none of them.
export const parts = {};

// A platform action's declared field (its kind, limits, default), or {} if it declares none.
export function platformField(type, name) {
  return (state.platform?.actions?.[type]?.fields || []).find((f) => f.name === name) || {};
}

export function initState(data, csrf) {
  const declared = data.declared || { actions: {}, events: {}, renames: {} };
  const RECENT = data.recent || 200; // events shown on load; earlier ones on demand
  const pageHead = Number(data.head); // sheets in `data` include every event up to here
  const lastSeq = Math.max(0, pageHead - RECENT);
  Object.assign(state, {
    data,
    slug: data.slug,
    me: data.me,
    isGM: data.me.role === "gm",
    isSpectator: data.me.role === "spectator",
    csrf,
    RECENT,
    pageHead,
    // The system's declarations (rules/declare.py, also at /api/systems/<name>): actions with
    // their fields and limits, events with their current names and one-line descriptions.
    declared,
    // The platform's declared actions (campaign/actions/declared.py, also at /api/actions): their
    // fields and limits, for the forms the page builds itself.
    platform: data.platform || { actions: {} },
    // An event stored under a former name reads under today's name (the chain is checked on the
    // event exactly as stored, chain.js, before it is read this way).
    ...renamed(declared.renames || {}),
    // Each visibility's words (campaign/models.py VISIBILITY_WORDS): the choices, the badges, their titles.
    VISIBILITIES: new Map((data.visibilities || []).map((v) => [v.value, v])),
    // What the players see of an NPC (campaign/models.py SHOWN_CHOICES): value -> words.
    SHOWN: new Map((data.shown || []).map((s) => [s.value, s.label])),
    // Events that can't be voided (the campaign's frame): campaign/actions/log_entries.py, via the page.
    unvoidable: new Set(data.unvoidable || []),
    system: null, // the rule system's table module (systems/<name>.js), loaded by table.js

    // The log as shown: every event from firstShown to lastSeq, each exactly once.
    lastSeq,
    firstShown: lastSeq + 1,
    loading: true, // until the first "ready": follow-ups are worked out once, at the end of the backlog
    events: new Map(), // seq -> event as shown (revealed payloads merged in)
    charEvents: new Map(), // character id -> [seq, ...] ascending, as shown
    voidedBy: new Map(), // seq -> the event_voided event (when seen)
    revealedSeqs: new Set(),
    lastEncounterSeq: 0, // the newest encounter event shown: only a turn that is still the newest waits

    // The table as the log made it.
    chars: new Map(data.characters.map((c) => [c.id, { ...c }])), // id -> {id, name, owner, state, seq, ...}
    members: new Map(data.members.map((m) => [m.username, m.role])),
    present: new Set(),
    memberHeads: new Map(), // username -> the head their browser verified and reported
    session: data.session,
    scene: data.scene,
    sceneName: data.sceneName || null, // the running scene's, if the GM named it

    // This member's page.
    selected: null, // the character whose sheet is shown
    composer: null, // the open action form: {spec, charId, opener}
    lastValues: {}, // action type -> last values used, "who sees the dice" included (sticky per kind of action)
    pendingCreation: null, // the name of the character this member just asked to create

    // The connection (socket.js) and the commands in flight on it (commands.js).
    socket: null,
    pending: new Map(), // client command id -> {onAck, onError}
    chain: null, // the log's checks (chain.js Chain), set up by logcheck.js
    trust: null, // the members' signatures (trust.js), set up by logcheck.js
  });
  return state;
}

// A member may act for a character: their own player character, or any as the GM (an NPC is the GM's);
// a spectator for none (campaign/actions/access.py, and every verifier: ./senders.js).
export function canAct(c) {
  return !!c && !state.isSpectator && (state.isGM || (!c.npc && c.owner === state.me.username));
}
