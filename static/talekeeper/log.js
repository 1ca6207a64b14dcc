// The log: every event shown exactly once, in seq order, each line with its words, dice, badges and
// the GM's tools; what an event changes on the page (a void, a reveal, a new character, members,
// the session); earlier events on demand.
//
// Owns nothing of its own: the events shown are state.events (with charEvents, voidedBy,
// revealedSeqs), the log's window is state.firstShown..state.lastSeq.

import { h, fill, askFirst } from "./ui.js";
import { eventsPage } from "./chain.js";
import { sendCommand } from "./commands.js";
import { describe, visibilityBadge } from "./describe.js";
import { updateFollow, updateFollowUps } from "./follow.js";
import { eventTime } from "./format.js";
import { renderMembers, renderSession } from "./members.js";
import { press } from "./press.js";
import { notice, resultArrived, resultChanged } from "./result.js";
import { applySheet, renderCharacters, scheduleRefresh, scheduleRoster } from "./sheets.js";
import { canAct, parts, platformField, state } from "./state.js";
import { witnessEvent, witnessMarks } from "./witnessing.js";

const logEl = document.getElementById("log");
const liveEl = document.getElementById("log-live");
const olderBtn = document.getElementById("older");

// Encounters (rules/encounter.py): the newest turn is the acting character's player's to end.
const ENCOUNTER_EVENTS = new Set(["encounter_started", "combatant_added", "turn_order_set", "turn_advanced", "encounter_ended"]);

// A witnessed roll's lines change when its decision or this table's contribution arrives (./witnessing.js).
state.redrawEvent = (seq) => {
  const ev = state.events.get(seq);
  const li = document.getElementById(`seq-${seq}`);
  if (ev && li) fillEvent(li, ev);
  resultChanged(seq);
};

function fillEvent(li, ev) {
  const { isGM } = state;
  const d = describe(ev);
  const witnessed = witnessMarks(ev);
  li.className = `event ev-${ev.type}${ev.hidden ? " hidden-roll" : ""}${ev.voided ? " voided" : ""}${d.tone ? ` tone-${d.tone}` : ""}${li.classList.contains("new") ? " new" : ""}`;
  const speaker = ev.character_name || (ev.type === "message_posted" && !ev.hidden ? ev.payload?.character_name : null);
  const who = speaker
    ? [h("strong", { class: "who" }, speaker), ev.actor ? h("span", { class: "actor" }, ev.actor) : null]
    : [h("strong", { class: "who" }, ev.actor || "system")];
  const { shown, title } = eventTime(ev.created_at); // UTC, as everywhere
  const time = h("time", { datetime: ev.created_at, title }, shown);
  const head = h("div", { class: "ev-head" },
    h("span", { class: "seq" }, `#${ev.seq}`), state.trust.mark(ev.seq), h("span", { class: "ev-who" }, who),
    visibilityBadge(ev),
    witnessed?.badge || null,
    state.revealedSeqs.has(ev.seq) ? h("span", { class: "badge revealed" }, "revealed") : null,
    ev.payload?.verifiable === false ? h("span", { class: "badge unverifiable",
      title: "Rolled outside a play session: the server's random numbers, with no seed to check them against" }, "not verifiable") : null,
    ev.voided ? h("span", { class: "badge void" }, "voided") : null,
    h("span", { class: "spacer" }),
    isGM ? gmTools(li, ev) : null,
    time);
  const body = h("div", { class: "ev-body" },
    h("span", { class: "what" }, d.text),
    d.dice && d.dice.length ? h("span", { class: "dice" }, d.dice) : null,
    d.outcome ? h("span", { class: `outcome ${d.outcome.tone || ""}` }, d.outcome.label) : null);
  const voider = state.voidedBy.get(ev.seq);
  fill(li, head, body,
    d.detail && (!Array.isArray(d.detail) || d.detail.length) ? h("p", { class: "ev-detail" }, d.detail) : null,
    witnessed?.note ? h("p", { class: "ev-detail witness-note", role: "note" }, witnessed.note) : null,
    ev.voided ? h("p", { class: "ev-voided" }, voider ? `Voided by ${voider.actor} in #${voider.seq}: ${voider.payload.reason}` : "Voided by the GM.") : null,
    h("div", { class: "ev-follow", hidden: true }));
  if (!state.loading) updateFollow(li, ev);
}

function gmTools(li, ev) {
  const tools = h("span", { class: "ev-tools" });
  if (!ev.voided && !state.unvoidable.has(ev.type)) {
    tools.append(h("button", { type: "button", class: "small ghost", "aria-label": `Void event ${ev.seq}`,
      onclick: () => openVoid(li, ev) }, "Void"));
  }
  if (ev.visibility && ev.visibility !== "public" && ev.visibility !== "whisper" && !state.revealedSeqs.has(ev.seq) && !ev.voided) {
    // A reveal can't be taken back (the dice are everyone's from then on): it asks first.
    tools.append(h("button", { type: "button", class: "small ghost", "aria-label": `Reveal event ${ev.seq} to everyone`,
      onclick: (e) => askFirst(e.currentTarget, {
        question: `Reveal #${ev.seq} to everyone?`, yes: `Yes, reveal #${ev.seq} to everyone`, no: `No, keep #${ev.seq} hidden`,
        onYes: async () => {
          try { await sendCommand({ type: "reveal", seq: ev.seq }); } catch (problem) { notice(problem.message); throw problem; }
        },
      }) }, "Reveal"));
  }
  return tools.childElementCount ? tools : null;
}

function openVoid(li, ev) {
  const open = li.querySelector(".void-form");
  if (open) { open.querySelector("input").focus(); return; }
  const input = h("input", { name: "reason", required: true, maxlength: platformField("void", "reason").maxLength,
    id: `void-reason-${ev.seq}`, placeholder: "e.g. wrong skill" });
  const error = h("span", { class: "error", role: "alert" });
  const form = h("form", { class: "void-form", "aria-label": `Void event ${ev.seq}` },
    h("label", { for: input.id }, `Why void #${ev.seq}?`), input,
    h("button", { type: "submit", class: "small danger" }, `Void #${ev.seq}`),
    h("button", { type: "button", class: "small secondary", onclick: () => form.remove() }, "Cancel"), error);
  form.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); form.remove(); li.querySelector(".ev-tools button")?.focus(); } });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!input.value.trim()) { error.textContent = "Say why."; return; }
    try {
      await sendCommand({ type: "void", seq: ev.seq, reason: input.value.trim() });
      form.remove();
    } catch (problem) { error.textContent = problem.message; }
  });
  li.append(form);
  input.focus();
}

function register(ev, prepend) {
  const { charEvents } = state;
  state.events.set(ev.seq, ev);
  if (ev.type === "roll_revealed" && ev.payload?.seq) state.revealedSeqs.add(ev.payload.seq);
  if (ev.type === "event_voided" && ev.payload?.seq) state.voidedBy.set(ev.payload.seq, ev);
  if (ev.character) {
    if (!charEvents.has(ev.character)) charEvents.set(ev.character, []);
    const list = charEvents.get(ev.character);
    if (prepend) list.unshift(ev.seq); else list.push(ev.seq);
  }
}

function place(li, prepend, mine = false) {
  if (prepend) { logEl.prepend(li); return; }
  const nearBottom = logEl.scrollHeight - logEl.scrollTop - logEl.clientHeight < 120;
  logEl.append(li);
  if (!nearBottom && !mine) return;
  // What you just did is always in the log's view (once a button held down there is let go).
  const scroll = () => { logEl.scrollTop = logEl.scrollHeight; };
  press.whenFree(scroll, scroll);
}

// sheets: the sheets this event changed, as the server pushed them with it (for this viewer); undefined when
// the server could not read them: then the page fetches what it needs.
export function showEvent(ev, sheets) {
  const { pageHead } = state;
  register(ev, false);
  witnessEvent(ev);
  const li = h("li", { id: `seq-${ev.seq}`, dataset: { seq: ev.seq, type: ev.type }, class: ev.seq > pageHead ? "new" : "" });
  fillEvent(li, ev);
  place(li, false, ev.seq > pageHead && ev.actor === state.me.username);
  // Only what happens now is announced: the backlog loaded with the page (up to pageHead) is not.
  if (ev.seq > pageHead) liveEl.textContent = [li.querySelector(".ev-who"), li.querySelector(".what"), li.querySelector(".outcome")]
    .filter(Boolean).map((el) => [...el.childNodes].map((n) => n.textContent).join(" ")).join(": ");
  afterEvent(ev, sheets);
  resultArrived(ev.seq);
}

function markVoided(seq) {
  const target = state.events.get(seq);
  if (!target) return;
  target.voided = true;
  fillEvent(document.getElementById(`seq-${seq}`), target);
  resultChanged(seq);
}

function afterEvent(ev, sheets) {
  const { chars, events, members, loading, isGM, me } = state;
  const p = ev.payload || {};
  if (ENCOUNTER_EVENTS.has(ev.type)) {
    const previous = state.lastEncounterSeq;
    state.lastEncounterSeq = ev.seq;
    const li = document.getElementById(`seq-${previous}`);
    if (li && !loading) updateFollow(li, events.get(previous));
    if (!loading) updateFollow(document.getElementById(`seq-${ev.seq}`), ev);
  }
  parts.encounter(ev);
  parts.fight(ev);
  const appliedLine = p.applies && !loading && document.getElementById(`seq-${p.applies}`);
  if (appliedLine && events.has(p.applies)) updateFollow(appliedLine, events.get(p.applies)); // "applied to …" now
  const fresh = ev.seq > state.pageHead; // the page's sheets already include everything up to pageHead
  const pushed = Array.isArray(sheets);
  switch (ev.type) {
    case "event_voided": markVoided(p.seq); break;
    case "roll_revealed": {
      const target = events.get(p.seq);
      if (target) {
        const body = p.body || p;
        // Its character too: the stub named none, and the reveal is about the same character (its own).
        const shown = { ...target, hidden: false, type: body.type ? state.nowName(body.type) : target.type, payload: body.payload || target.payload,
          character: body.character ?? ev.character ?? null, character_name: ev.character_name ?? target.character_name ?? null };
        events.set(p.seq, shown);
        fillEvent(document.getElementById(`seq-${p.seq}`), shown);
        // A sealed void revealed (with the roll it voided, campaign/actions/log_entries.py): the roll is struck through.
        if (shown.type === "event_voided" && shown.payload?.seq) {
          state.voidedBy.set(shown.payload.seq, shown);
          markVoided(shown.payload.seq);
        }
      }
      break;
    }
    case "character_created":
      if (!chars.has(ev.character)) {
        chars.set(ev.character, { id: ev.character, name: p.name, owner: p.owner, npc: !!p.npc, shown: p.shown || "full",
          state: null, seq: 0, since: ev.seq });
        if (!pushed) scheduleRefresh(ev.character);
        if (state.pendingCreation && state.pendingCreation === p.name && ev.actor === me.username) {
          state.pendingCreation = null;
          state.selected = ev.character;
        }
        if (state.selected === null && canAct(chars.get(ev.character))) state.selected = ev.character;
        renderCharacters();
      }
      break;
    case "npc_shown": { // what the players see of an NPC from now on (docs/rules.md, platform 10)
      // Hiding one is sealed for the players (their page learns of it from the characters' list, below).
      const c = chars.get(ev.character) || { id: ev.character, name: p.name, owner: ev.actor, state: null, seq: 0, since: ev.seq };
      Object.assign(c, { npc: true, shown: p.shown });
      if (p.shown !== "full" && !isGM) Object.assign(c, { state: null, seq: 0 }); // the GM keeps its sheet from now on
      chars.set(ev.character, c);
      if (p.shown === "full" && !pushed) scheduleRefresh(ev.character); // pushed: the sheet came with it
      renderCharacters();
      break;
    }
    case "member_joined":
    case "member_role_changed":
      members.set(p.username, p.role);
      renderMembers();
      break;
    case "member_removed":
      members.delete(p.username);
      renderMembers();
      break;
    case "session_started": Object.assign(state, { session: p.session, scene: null }); renderSession(); break;
    case "session_ended": Object.assign(state, { session: null, scene: null }); renderSession(); break;
    case "scene_started": Object.assign(state, { scene: p.scene, sceneName: typeof p.name === "string" && p.name ? p.name : null }); renderSession(); break;
    case "scene_ended": Object.assign(state, { scene: null, sceneName: null }); renderSession(); break;
  }
  // A sealed event names no character: a request its actor was asked for may be answered by it.
  if (ev.hidden && !ev.character && !loading) for (const c of chars.values()) if (c.owner === ev.actor) updateFollowUps(c.id);
  // A sealed GM-only event may be the GM making an NPC the players know by name, or hiding one
  // again: the stub does not say (it must not). So the page asks for the characters it would
  // list on a reload, after every such event, whatever it was.
  if (ev.hidden && ev.visibility === "gm" && fresh) scheduleRoster();
  if (pushed) { // the sheets came with the event: nothing to fetch
    if (fresh) for (const body of sheets) applySheet(body);
    else if (ev.character && !loading) updateFollowUps(ev.character);
    return;
  }
  if (fresh && /^(session|scene)_(started|ended)$/.test(ev.type)) {
    for (const id of chars.keys()) scheduleRefresh(id); // scene ends lapse scene-scoped things
  }
  if (ev.character) {
    if (fresh) scheduleRefresh(ev.character);
    else if (!loading) updateFollowUps(ev.character);
  }
}

// "Show earlier events": the page before the first shown, RECENT at a time.
export function setUpOlder() {
  olderBtn.addEventListener("click", async () => {
    const { events, voidedBy } = state;
    const after = Math.max(0, state.firstShown - 1 - state.RECENT);
    olderBtn.disabled = true;
    try {
      const page = (await eventsPage(state.slug, after, state.firstShown - 1 - after)).events;
      state.chain.older(page);
      const height = logEl.scrollHeight;
      for (const ev of page.reverse().map(state.asNow)) {
        if (events.has(ev.seq)) continue;
        register(ev, true);
        const li = h("li", { id: `seq-${ev.seq}`, dataset: { seq: ev.seq, type: ev.type } });
        fillEvent(li, ev);
        place(li, true);
      }
      for (const ev of page) { // a void shown before its event was: now it can say which event it took back
        const voider = voidedBy.get(ev.seq);
        const li = voider && document.getElementById(`seq-${voider.seq}`);
        if (li) fillEvent(li, events.get(voider.seq));
      }
      logEl.scrollTop += logEl.scrollHeight - height; // keep what you were reading in place
      state.firstShown = after + 1;
      showOlder();
    } catch {
      notice("The earlier events could not be loaded: try again.");
    } finally {
      olderBtn.disabled = false;
    }
  });
}

// The button is offered once the log is live, while earlier events exist.
export const showOlder = () => { olderBtn.hidden = state.firstShown <= 1; };
