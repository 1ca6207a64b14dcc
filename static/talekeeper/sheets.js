// The characters and their sheets: the tabs, the sheet shown (as its projection holds it, with the
// buttons of the actions this member may take), and keeping each sheet current: pushed with its
// event, or fetched (again, after a pause, when the server could not answer).
//
// Owns the fetches in flight (their timers and tokens) and the characters' list as last read.

import { h, fill } from "./ui.js";
import { adjustSpec } from "./adjust.js";
import { conditionsBlock } from "./conditions.js";
import { closeComposer, declaredSpecs, startAction } from "./composer.js";
import { updateFollowUps } from "./follow.js";
import { orderCharacters } from "./format.js";
import { renderResult } from "./result.js";
import { canAct, parts, state } from "./state.js";

const refreshTimers = new Map();
const refreshTokens = new Map();

export function scheduleRefresh(id) {
  clearTimeout(refreshTimers.get(id));
  refreshTimers.set(id, setTimeout(() => refreshCharacter(id), 30));
}

// A sheet fetch the server could not answer (503 while its database pool is drained by a
// reconnect storm or an outage, 429, or no network) is tried again after a jittered pause,
// a few times: otherwise the page would keep showing a stale sheet until the next event.
const SHEET_RETRIES = 6;

async function refreshCharacter(id, attempt = 0) {
  const token = (refreshTokens.get(id) || 0) + 1;
  refreshTokens.set(id, token);
  let body;
  try {
    const res = await fetch(`/api/campaigns/${state.slug}/characters/${id}`, { credentials: "same-origin" });
    if (!res.ok) {
      if (res.status === 503 || res.status === 429) retryRefresh(id, token, attempt, res.headers.get("Retry-After"));
      return;
    }
    body = await res.json();
  } catch {
    retryRefresh(id, token, attempt, null);
    return;
  }
  if (refreshTokens.get(id) !== token) return; // a newer refresh or a pushed sheet came meanwhile
  showSheet(body);
}

function retryRefresh(id, token, attempt, retryAfter) {
  if (attempt >= SHEET_RETRIES) return;
  // Retry-After (seconds, at most 5) or 1 s, growing per attempt, spread so pages that failed
  // together do not come back together.
  const base = Math.min(Number(retryAfter) || 1, 5) * 1000 * (attempt + 1);
  const wait = base * (0.5 + Math.random());
  refreshTimers.set(id, setTimeout(() => {
    if (refreshTokens.get(id) === token) refreshCharacter(id, attempt + 1); // nothing newer came meanwhile
  }, wait));
}

// The characters this member may know of (GET .../characters: the list the page starts from), after
// a sealed event that may have changed it. Sheets are fetched as for any new character.
let rosterTimer = null;
let rosterToken = 0;
let rosterHead = 0; // the newest list applied: an older answer arriving late changes nothing
let rosterMissed = false; // the list could not be read: the next connection's "ready" asks again

// A connection is ready: the list is asked for again if it could not be read before.
export function rosterAgainIfMissed() {
  if (rosterMissed) scheduleRoster();
}

export function scheduleRoster() {
  clearTimeout(rosterTimer);
  rosterTimer = setTimeout(refreshRoster, 30); // once for a batch of events (a backlog)
}

async function refreshRoster(attempt = 0) {
  const token = ++rosterToken;
  let body;
  try {
    const res = await fetch(`/api/campaigns/${state.slug}/characters`, { credentials: "same-origin" });
    if (!res.ok) {
      if ((res.status === 503 || res.status === 429) && attempt < SHEET_RETRIES) {
        rosterTimer = setTimeout(() => { if (rosterToken === token) refreshRoster(attempt + 1); }, 1000 * (attempt + 1) * (0.5 + Math.random()));
      } else rosterMissed = true;
      return;
    }
    body = await res.json();
  } catch {
    rosterMissed = true; // no network: the sealed event that asked is shown already, so ask on the reconnect
    return;
  }
  if (token !== rosterToken) return;
  rosterMissed = false;
  if (body.head < rosterHead) return;
  rosterHead = body.head;
  const { chars, isGM } = state;
  const listed = new Map(body.characters.map((c) => [c.id, c]));
  let changed = false;
  for (const [id, c] of chars) {
    // Gone from the list: the GM hid it. Not yet in it: made after the list was read (its event came first).
    if (!listed.has(id) && (c.since || 0) <= body.head) { chars.delete(id); changed = true; }
  }
  for (const entry of listed.values()) {
    const c = chars.get(entry.id);
    if (c) {
      if (c.shown !== entry.shown) changed = true;
      Object.assign(c, { name: entry.name, owner: entry.owner, npc: entry.npc, shown: entry.shown });
      if (!isGM && c.npc && c.shown !== "full") Object.assign(c, { state: null, seq: 0 });
      continue;
    }
    chars.set(entry.id, { ...entry, state: null, seq: 0, since: body.head });
    if (isGM || !entry.npc || entry.shown === "full") scheduleRefresh(entry.id);
    changed = true;
  }
  if (changed) renderCharacters();
}

// A sheet the server pushed with an event: the same body as GET .../characters/<id>, for this viewer.
export function applySheet(body) {
  const id = body.character;
  if ((state.chars.get(id)?.seq || 0) > body.seq) return; // the page already shows a newer sheet
  clearTimeout(refreshTimers.get(id));
  refreshTokens.set(id, (refreshTokens.get(id) || 0) + 1); // a fetch still on its way is older: drop it
  showSheet(body);
}

function showSheet(body) {
  const id = body.character;
  const c = state.chars.get(id) || { id };
  const first = !c.state; // the selected character's forms may offer choices from this sheet (sheetCtx opponents)
  Object.assign(c, { name: body.name, owner: body.owner, state: body.state, seq: body.seq, advances: body.advances });
  state.chars.set(id, c);
  // A contest's other side reads this sheet (a Tale combat round's limits take its penalty dice off):
  // the forms of whoever faces it are laid out again too.
  const facing = [...state.chars.values()].filter((o) => o.id !== id && o.state?.contest?.opponent === id).map((o) => o.id);
  if (id === state.selected || first || facing.includes(state.selected)) renderHero();
  updateFollowUps(id);
  for (const other of facing) updateFollowUps(other);
  parts.encounter?.charactersChanged?.(); // the turn order names each combatant's conditions
}

export function orderedCharacters() {
  return orderCharacters(state.chars.values(), state.me.username);
}

export function renderCharacters() {
  parts.encounter.charactersChanged?.();
  parts.fight.charactersChanged?.();
  const { me } = state;
  const tabs = document.getElementById("char-tabs");
  const list = orderedCharacters();
  if (state.selected === null || !state.chars.has(state.selected)) {
    state.selected = (list.find((c) => canAct(c) && !state.isGM) || list[0])?.id ?? null;
  }
  // An NPC's tab says so: the GM's read "Ghoul (you)", every one of them, and the players' "Ghoul · gm".
  fill(tabs, ...list.map((c) => h("button", {
    type: "button", role: "tab", id: `tab-${c.id}`, "aria-selected": c.id === state.selected ? "true" : "false", "aria-controls": "sheet-wrap",
    tabindex: c.id === state.selected ? 0 : -1, class: c.owner === me.username ? "mine" : "",
    onclick: () => selectCharacter(c.id),
  }, c.name, h("span", { class: "tab-owner" }, c.npc ? " · NPC" : c.owner === me.username ? " (you)" : ` · ${c.owner}`))));
  // the dice box's "For" and the GM's owner list follow the characters and members
  parts.diceBox.renderFor(list.filter(canAct));
  parts.chat.renderOptions();
  renderHero();
}

export function selectCharacter(id, focusTab = false) {
  if (!state.chars.has(id)) return;
  if (state.selected !== id) closeComposer(false);
  state.selected = id;
  for (const tab of document.querySelectorAll("#char-tabs [role=tab]")) {
    const on = tab.id === `tab-${id}`;
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
    if (on && focusTab) tab.focus();
  }
  renderHero();
  renderResult();
}

export function stepCharacter(step, focusTab = false) {
  const list = orderedCharacters();
  if (!list.length) return;
  const at = list.findIndex((c) => c.id === state.selected);
  let next = step === -Infinity ? 0 : step === Infinity ? list.length - 1 : (at + step + list.length) % list.length;
  selectCharacter(list[next].id, focusTab);
}

// Left and right, Home and End move between the tabs (the ARIA tabs pattern).
export function setUpTabs() {
  document.getElementById("char-tabs").addEventListener("keydown", (e) => {
    if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return;
    e.preventDefault();
    stepCharacter(e.key === "ArrowLeft" ? -1 : e.key === "ArrowRight" ? 1 : e.key === "Home" ? -Infinity : Infinity, true);
  });
}

function sheetCtx(c, specs, placed) {
  const { me, isGM, chars, events, members, lastValues } = state;
  return {
    h, me, isGM, char: c, canAct: canAct(c),
    // What each advance costs now, priced by the server's rules with the sheet (campaign/sheets.py
    // sheet_body, RuleSystem.advances): the buy-advance forms show these, never a price of their own.
    advances: c.advances || null,
    // Whom this member may name as an opponent: any other character for the GM; a player, the
    // players' characters and NPCs shown in full (campaign/actions/contests.py refuses the rest).
    // ``state``: the opponent's sheet as this page holds it (null until loaded), for a form that offers
    // choices from it (WYRM: their helping skills).
    opponents: [...chars.values()].filter((o) => o.id !== c.id && (isGM || !o.npc || o.shown === "full"))
      .map((o) => ({ value: o.id, label: o.name, state: o.state || null })),
    last: (type, name, fallback) => lastValues[type]?.[name] ?? fallback,
    // A character's state as this page holds it (null until loaded, or one this member may not read).
    stateOf: (id) => chars.get(id)?.state || null,
    // The first value `pick(event)` gives, newest event first (of those this page holds and may read).
    recent(pick) {
      for (const seq of [...events.keys()].sort((a, b) => b - a)) {
        const ev = events.get(seq);
        if (ev.hidden || ev.voided) continue;
        const value = pick(ev);
        if (value !== undefined && value !== null) return value;
      }
      return undefined;
    },
    roleOf: (username) => members.get(username),
    // a button in the sheet that starts action `id` (plain text for those who can't act)
    button(id, content, attrs = {}) {
      const spec = specs.get(id);
      if (!spec) return h("span", { class: `static ${attrs.class || ""}` }, content);
      placed.add(id);
      return h("button", { type: "button", class: `act ${attrs.class || ""}`, dataset: { action: id },
        title: attrs.title || spec.title, "aria-label": attrs.label, onclick: (e) => startAction(spec, c.id, e.currentTarget) }, content);
    },
  };
}

function renderHero() {
  const { isGM, isSpectator, me, system, SHOWN } = state;
  const sheetEl = document.getElementById("sheet");
  const actionsEl = document.getElementById("actions");
  const c = state.chars.get(state.selected);
  const focused = document.activeElement?.closest?.("#sheet-wrap") ? document.activeElement.dataset.action : null;
  document.getElementById("hero-title").textContent = c ? c.name : "Characters";
  document.getElementById("sheet-wrap").setAttribute("aria-labelledby", c ? `tab-${c.id}` : "hero-title");
  if (!c) {
    fill(sheetEl, h("p", { class: "muted" }, isSpectator ? "No characters yet." : "No characters yet: create one with the “New character” form."));
    fill(actionsEl);
    return;
  }
  if (!c.state) {
    // An NPC shown by name only has no sheet for the players (campaign/actions/access.py says the same).
    const kept = c.npc && c.shown !== "full" && !isGM;
    fill(sheetEl, h("p", { class: "muted" }, kept ? `The GM keeps ${c.name}'s sheet to themselves.` : "Loading the sheet…"));
    fill(actionsEl);
    return;
  }
  const specs = new Map();
  const placed = new Set();
  const ctx = sheetCtx(c, specs, placed);
  if (canAct(c)) {
    for (const spec of system.actions(c.state, ctx) || []) specs.set(spec.id, { group: "Actions", ...spec });
    if (isGM && system.gmTools) for (const spec of system.gmTools(c.state, ctx) || []) specs.set(spec.id, { group: "GM tools", gm: true, ...spec });
    // Declared actions the system's table module does not lay out get a form built from their
    // declaration alone (rules/declare.py): a new action is playable as soon as it is declared.
    const offered = new Set([...specs.values()].map((spec) => spec.type));
    // Removing a condition is a button beside each one on the sheet (conditions.js), not a form
    // offered with none to remove.
    offered.add("remove_condition");
    for (const spec of declaredSpecs()) if (!offered.has(spec.type) && (!spec.gm || isGM)) specs.set(spec.id, spec);
    if (isGM && c.npc) specs.set("show_npc", showNpcSpec(c));
    if (isGM) specs.set("adjust_sheet", adjustSpec(c));
  }
  let sheet;
  try {
    sheet = system.renderSheet(c.state, ctx);
  } catch (problem) {
    console.error("renderSheet failed", problem);
    sheet = h("pre", { class: "state" }, JSON.stringify(c.state, null, 1));
  }
  const owner = h("p", { class: "muted small owner-line" },
    isGM && c.npc ? `Your NPC · ${SHOWN.get(c.shown) || c.shown}` : c.owner === me.username ? "Your character" : `Played by ${c.owner}`,
    canAct(c) ? "" : " · you can read this sheet");
  // Conditions in every system, above the system's own sheet; the GM removes one with a click.
  const conditions = conditionsBlock(c.state, {
    word: state.declared.actions?.apply_condition?.fields?.find((f) => f.name === "modifier")?.label,
    remove: isGM && canAct(c) ? (name, button) => startAction({ id: "remove_condition", type: "remove_condition", immediate: true,
      build: () => ({ type: "remove_condition", name }) }, c.id, button) : null,
  });
  fill(sheetEl, owner, conditions, sheet);
  const groups = new Map();
  for (const spec of specs.values()) {
    if (placed.has(spec.id)) continue;
    if (!groups.has(spec.group)) groups.set(spec.group, []);
    groups.get(spec.group).push(spec);
  }
  fill(actionsEl, ...[...groups].map(([group, list]) => h("div", { class: `action-group${list[0].gm ? " gm" : ""}` },
    h("h3", { class: "h4" }, group),
    h("div", { class: "buttons" }, list.map((spec) => h("button", {
      type: "button", class: `act ${spec.gm ? "gm" : ""}`, dataset: { action: spec.id }, title: spec.title,
      onclick: (e) => startAction(spec, c.id, e.currentTarget),
    }, spec.label))))));
  // number keys 1..9 start the first nine actions, in the order they appear
  let n = 0;
  for (const button of document.querySelectorAll("#sheet-wrap button[data-action]")) {
    if (n >= 9) break;
    n += 1;
    button.dataset.key = n;
    button.append(h("kbd", { class: "key", "aria-hidden": "true" }, String(n)));
    button.setAttribute("aria-keyshortcuts", String(n));
  }
  if (focused) document.querySelector(`#sheet-wrap [data-action="${CSS.escape(focused)}"]`)?.focus();
  if (state.composer && state.composer.charId === c.id) {
    const fresh = specs.get(state.composer.spec.id);
    if (!fresh) closeComposer(false);
  }
}

// The GM's choice of what the players see of an NPC from now on: the platform's show_npc
// (campaign/actions/npcs.py), offered the ways it is not shown now.
function showNpcSpec(c) {
  const { SHOWN } = state;
  const options = [...SHOWN].filter(([value]) => value !== c.shown).map(([value, label]) => ({ value, label }));
  return {
    id: "show_npc", type: "show_npc", group: "GM tools", gm: true, label: "What the players see",
    title: `What the players see of ${c.name}`, submit: "Change it",
    help: `Now: ${SHOWN.get(c.shown) || c.shown}. Shown fully, the players read its sheet from its creation on; its hidden rolls stay hidden until you reveal them.`,
    fields: [{ name: "shown", label: "The players see", kind: "select", value: options[0]?.value, options }],
    build: (v) => ({ type: "show_npc", shown: v.shown }),
  };
}
