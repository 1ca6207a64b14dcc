// What can be done about an event now, for this member: the buttons and small forms on a line of
// the log ("Roll now" on a request, a Fate approval, the next round of a contest, "End my turn"),
// worked out from the event, the sheet the page holds and what came after. They are redrawn when
// the sheet or the log changes, and the waiting list (alerts.js) follows them.

import { h, fill, buildForm, formatOdds, askFirst } from "./ui.js";
import { setWaiting } from "./alerts.js";
import { preview, sendCommand } from "./commands.js";
import { withDeclaredLimits } from "./composer.js";
import { actionLabel } from "./describe.js";
import { askedAction } from "./format.js";
import { press } from "./press.js";
import { notice } from "./result.js";
import { parts, state } from "./state.js";

const logEl = document.getElementById("log");

function latest(ev, types) {
  const seqs = state.charEvents.get(ev.character) || [];
  for (let i = seqs.length - 1; i >= 0; i -= 1) {
    const other = state.events.get(seqs[i]);
    if (!other || other.voided) continue;
    if (types.includes(other.type)) return other.seq === ev.seq;
  }
  return false;
}

function laterEvents(ev) {
  const seqs = state.charEvents.get(ev.character) || [];
  return seqs.filter((s) => s > ev.seq).map((s) => state.events.get(s)).filter((e) => e && !e.voided);
}

// Buttons and small forms on a roll in the log: they send one action for the event's character.
function followCtx(ev) {
  const { me, isGM, isSpectator } = state;
  const c = state.chars.get(ev.character);
  const withChar = (action) => ({ ...action, character: ev.character });
  const send = async (action) => {
    notice("");
    try {
      await sendCommand(withChar(action), { show: "card" });
    } catch (problem) {
      notice(problem.message);
      throw problem;
    }
  };
  return {
    // Choices on a roll are offered to its player (the GM only for their own NPCs, and for
    // what is theirs to answer, such as approving Fate); the GM acts for anyone from the sheet.
    h, me, isGM, char: c, state: c?.state, canAct: !!c && !isSpectator && c.owner === me.username, latest, laterEvents, send,
    // Another character's state as this page holds it (null until loaded): a contest's opponent.
    stateOf: (id) => state.chars.get(id)?.state || null,
    // a button that sends `action` at once, or (attrs.ask: what can't be taken back) once asked first
    act(label, action, attrs = {}) {
      return h("button", { type: "button", class: `small ${attrs.class || ""}`, title: attrs.title, "aria-label": attrs.label,
        onclick: async (e) => {
          if (attrs.ask) {
            askFirst(e.currentTarget, { question: attrs.ask, yes: `Yes, ${label.toLowerCase()}`, no: "No, keep it going", onYes: () => send(action) });
            return;
          }
          e.target.disabled = true;
          try { await send(action); } catch { e.target.disabled = false; }
        } }, label);
    },
    // a compact form (a totem picker, a reason, combat portions) that sends what it builds
    form(spec) {
      spec = withDeclaredLimits(spec);
      const form = buildForm(spec, { compact: true, noVisibility: !spec.rolls, preview: (a) => preview(withChar(a)),
        submit: async (action) => {
          await sendCommand(withChar(action), { show: "card" });
          form.dataset.sent = "1";
        } });
      return form;
    },
    // live odds of an action, e.g. beside a "Next round" button
    odds(action, fmt) {
      const out = h("span", { class: "muted small odds-inline" }, "…");
      preview(withChar(action)).then((r) => { out.textContent = r.error ? "" : (fmt ? fmt(r.odds) : formatOdds(r.odds)); });
      return out;
    },
  };
}

function requestFollow(ev, ctx) {
  const p = ev.payload;
  const c = state.chars.get(ev.character);
  if (!c) return [];
  // The server's rule (campaign/actions/commands.py _link_request): a request is answered by a later event
  // naming it ("answers") that is not voided; a voided answer opens it again. A hidden answer's
  // payload is sealed, so a hidden roll by the player counts as the answer here.
  // (A sealed event has no character, so it is looked for among all the later ones.)
  const answer = laterEvents(ev).find((e) => e.payload?.answers === ev.seq)
    || [...state.events.values()].find((e) => e.seq > ev.seq && e.hidden && !e.voided && e.actor === c.owner);
  if (answer) return [h("span", { class: "muted small" }, "answered in ", h("a", { href: `#seq-${answer.seq}` }, `#${answer.seq}`))];
  if (c.owner === state.me.username && !state.isSpectator) {
    const asked = askedAction(p);
    const { character, ...wantedAction } = asked;
    const action = { ...wantedAction, request: ev.seq };
    const button = ctx.act(`Roll now: ${actionLabel(asked, ev.character)}`, action, { class: "primary roll-now" });
    button.dataset.rollNow = ev.seq;
    const { system } = state;
    const fmt = (odds) => (system.oddsText ? system.oddsText(asked.type, odds) : formatOdds(odds));
    return [button, asked.type !== "roll" ? ctx.odds(action, fmt) : null];
  }
  return [h("span", { class: "muted small" }, `waiting for ${c.owner}`)];
}

// What can be done about an event now, and the GM's "Apply to …" on a roll that deals damage (fight.js).
export function followNodes(ev) {
  if (ev.hidden || ev.voided || !state.events.has(ev.seq)) return [];
  return [...followNodesOf(ev), ...parts.fight.applyButtons(ev)];
}

function followNodesOf(ev) {
  if (ev.hidden || ev.voided || !state.events.has(ev.seq)) return [];
  if (ev.type === "turn_advanced") return turnFollow(ev);
  if (!ev.character) return [];
  // Choices are worked out from a sheet at least as new as the event: a new event reaches the page
  // before its sheet (pushed with the command's last event, or fetched), and the sheet of before
  // would offer what the event ended (the next round of a race it won, and a request for its odds).
  // The sheet's arrival works them out again (showSheet).
  if (ev.seq > state.pageHead && (state.chars.get(ev.character)?.seq || 0) < ev.seq) return [];
  const ctx = followCtx(ev);
  try {
    if (ev.type === "roll_requested") return requestFollow(ev, ctx).filter(Boolean);
    const { system } = state;
    if (system.followUps && ctx.state) return (system.followUps(ev, ctx.state, ctx) || []).filter(Boolean);
  } catch (problem) {
    console.error("followUps failed", ev, problem);
  }
  return [];
}

// The table waits for this member when an event's follow-ups start with a primary button of
// their own (not inside a form): "Roll now" on a request, the GM's "Approve", "Next round".
const waitsForMe = (nodes) => nodes.some((n) => n instanceof HTMLButtonElement && n.classList.contains("primary"));

export function updateFollow(li, ev) {
  const box = li.querySelector(".ev-follow");
  if (!box) return;
  if (press.holds(box)) {
    press.hold(box, () => updateFollow(li, state.events.get(ev.seq) || ev));
    return;
  }
  const nodes = followNodes(ev);
  setWaiting(ev, waitsForMe(nodes));
  // Keep a form someone is filling in rather than rebuilding it under their hands.
  const active = document.activeElement;
  const hadFocus = box.contains(active);
  if (hadFocus && active.matches("input, select, textarea") && !active.form?.dataset.sent) return;
  // The log was scrolled to its newest line before this box was drawn under it (the sheet it
  // reads may come later): a log that was at its end stays there, the buttons in view.
  const stick = li === logEl.lastElementChild && logEl.scrollHeight - logEl.scrollTop - logEl.clientHeight < 2;
  fill(box, ...nodes);
  box.hidden = !box.childElementCount;
  if (stick) logEl.scrollTop = logEl.scrollHeight;
  if (hadFocus) { // keyboard users keep their place: the next choice, or the log line itself
    const next = box.querySelector("button, input, select");
    if (next) next.focus();
    else { li.tabIndex = -1; li.focus(); }
  }
}

// Encounters (rules/encounter.py): the newest turn is the acting character's player's to end.
function turnFollow(ev) {
  const p = ev.payload || {};
  if (ev.seq !== state.lastEncounterSeq) return [];
  const c = state.chars.get(p.acting);
  if (c && c.owner === state.me.username && !state.isSpectator) {
    return [h("button", { type: "button", class: "small primary", onclick: async (e) => {
      e.target.disabled = true;
      try { await sendCommand({ type: "advance_turn" }); } catch (problem) { notice(problem.message); e.target.disabled = false; }
    } }, `End ${p.name}'s turn`)];
  }
  return state.isGM ? [h("button", { type: "button", class: "small secondary", onclick: () => sendCommand({ type: "advance_turn" }).catch((problem) => notice(problem.message)) }, "Next turn")] : [];
}

export function updateFollowUps(charId) {
  const seqs = (state.charEvents.get(charId) || []).slice(-30);
  for (const seq of seqs) {
    const li = document.getElementById(`seq-${seq}`);
    if (li) updateFollow(li, state.events.get(seq));
  }
}
