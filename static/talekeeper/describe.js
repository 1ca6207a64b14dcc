// Describing events: each event's line in words ("rolled 2d6+1", "voided #12 (…)"), its dice as
// chips, its outcome and its visibility badge. The platform's events here; a fight's in fight.js;
// the rule system's in its systems/<name>.js; any other by its declared description (rules/declare.py).

import { h, words, die, diceGroup } from "./ui.js";
import { short } from "./chain.js";
import { describeFight } from "./fight.js";
import { effectsRecorded } from "./conditions.js";
import { askedAction, fillTemplate, termText, textOf } from "./format.js";
import { state } from "./state.js";

export function visibilityBadge(ev) {
  if (!ev.visibility || ev.visibility === "public") return null;
  if (ev.visibility === "whisper") {
    const to = (ev.payload?.to || []).map((r) => r.username);
    return h("span", { class: "badge vis whisper", title: "A whisper: only its sender, the members it names and the GM read it" },
      to.length ? `whisper to ${to.join(", ")}` : "whisper");
  }
  // A GM's decision some members read too names them in its payload (stored "gm"; "shared" before):
  // only those who read it see whom (campaign/visibility/readers.py). A sealed one is any GM-only event.
  const names = ev.hidden ? [] : (ev.payload?.shared_with || []).map((r) => r.username);
  // A player's action on her own secret roll names her alone: to its readers, a secret roll.
  if (ev.visibility === "gm" && names.length === 1 && names[0] === ev.actor) {
    const secret = state.VISIBILITIES.get("secret");
    return h("span", { class: "badge vis", title: secret?.means }, secret?.badge || "secret");
  }
  if ((ev.visibility === "gm" || ev.visibility === "shared") && names.length) {
    return h("span", { class: "badge vis", title: state.VISIBILITIES.get("shared")?.means }, `shared with ${names.join(", ")}`);
  }
  const words = state.VISIBILITIES.get(ev.visibility) || { means: ev.visibility, badge: ev.visibility };
  return h("span", { class: "badge vis", title: words.means }, words.badge);
}

export function actionLabel(action, charId) {
  if (!action) return "";
  if (action.type === "roll") return `roll ${action.notation}${action.label ? ` (${action.label})` : ""}`;
  const { system } = state;
  return (system.describeAction && system.describeAction(action, state.chars.get(charId)?.state)) || words(action.type);
}

function rollDice(p) {
  const groups = [];
  for (const term of p.terms || []) {
    if (term.constant !== undefined) { groups.push(h("span", { class: "const" }, termText(term, term.constant))); continue; }
    const chips = (term.dice || []).map((d) => {
      if (term.fate) return die(d.face > 0 ? "+" : d.face < 0 ? "−" : "0", "", `Fate die: ${d.face}`);
      const cls = [d.kept === false ? "off" : "", d.exploded ? "x" : "", d.success ? "hit" : ""].join(" ");
      const title = d.kept === false ? "dropped" : d.exploded ? "exploded: rolled again" : d.success ? "a success" : "";
      return die(`${d.face}${d.exploded ? "!" : ""}`, cls, title);
    });
    groups.push(diceGroup(termText(term, term.text.replace(/^[+*-]+/, "")).replace(/^\+/, ""), chips));
  }
  return groups;
}

// The platform's sentences are the audit page's (campaign/platform_events.py, via campaign/audit.py
// LINES, passed as data.lines: state.data.lines); these few are set apart as the frame of the evening,
// and the witnesses' as minor.
const FRAME = new Set(["session_started", "session_ended", "scene_started", "scene_ended", "encounter_started", "turn_advanced", "encounter_ended"]);
const MINOR = new Set(["witness_call", "roll_committed", "commitments_closed", "roll_witnessed"]);

// A sentence whose "#{key}" names an event of the log links to it (the audit says "#12"): the sentence
// filled as the audit fills it, then each such "#12" in it, in order, a link.
function sentence(template, p, words) {
  const text = fillTemplate(template, p, words);
  const refs = [...template.matchAll(/#\{(\w+)\}/g)].map((m) => p[m[1]]).filter((seq) => Number.isInteger(seq));
  if (!refs.length) return text;
  const parts = [];
  let rest = text;
  for (const seq of refs) {
    const at = rest.indexOf(`#${seq}`);
    if (at < 0) continue;
    parts.push(rest.slice(0, at), h("a", { href: `#seq-${seq}` }, `#${seq}`));
    rest = rest.slice(at + `#${seq}`.length);
  }
  return [...parts, rest].filter((part) => part !== "");
}

// The platform's events: each line says its declared sentence (`said`, with the values its template
// names that are not in the payload, worked out as campaign/audit.py _worked_out does), and beside it
// what only the table shows: the dice, the outcome, a link, the reason.
function describeCore(ev, said) {
  const p = ev.payload || {};
  switch (ev.type) {
    case "roll":
      return {
        text: said(),
        dice: rollDice(p),
        outcome: { label: `= ${p.total}${p.counts_successes ? (p.total === 1 ? " success" : " successes") : ""}`, tone: "total" },
      };
    case "event_voided": { // the voided event in the log's words for it, when this page holds it (else its seq alone)
      const target = state.events.get(p.seq);
      return { text: said({ voided: target ? textOf(describe(target).text) : "" }), detail: p.reason ? `Reason: ${p.reason}` : "" };
    }
    case "roll_revealed": {
      const body = p.body || p; // {seq, body: {type, payload, ...}}; older reveals: {seq, type, payload}
      const inner = describe({ ...ev, type: state.nowName(body.type), payload: body.payload || {}, hidden: false });
      return { ...inner, text: said({ revealed: textOf(inner.text) }) };
    }
    case "roll_pending": { // a witnessed roll waiting for the other tables' entropy (./witnessing.js)
      const n = (p.witnesses || []).length;
      return { text: `${actionLabel(p.action, ev.character)}: rolling…`, tone: "pending",
        detail: n ? `Waiting for ${n} other table${n === 1 ? "" : "s"} to commit to random bytes, then to reveal them.` : "" };
    }
    case "roll_requested":
      return { text: said({ wanted: actionLabel(askedAction(p), ev.character) }), detail: p.note ? `“${p.note}”` : "" };
    case "sheet_adjusted": // each value's before and after (rules/common.py), and why
      return { text: said(), detail: p.reason ? `“${p.reason}”` : "", tone: "gm" };
    case "turn_order_set": return { text: said(), detail: (p.order || []).map((id) => state.chars.get(id)?.name || `#${id}`).join(", ") };
    case "message_posted": // chat shows the message itself: in character it is said, out of character it is (ooc)
      return { text: p.kind === "ic" ? h("q", { class: "said" }, p.text) : [h("span", { class: "ooc-tag" }, "ooc "), p.text], tone: "chat" };
    case "bundle": { // one hidden command's rule events, stored as one (docs/hidden-information.md)
      const parts = (p.events || []).map((e) => describe({ ...ev, type: state.nowName(e.type), payload: e.payload || {}, hidden: false }));
      return { ...(parts[0] || {}), text: parts.flatMap((d, i) => [...(i ? [" · "] : []), ...[].concat(d.text)]) };
    }
    case "refused":
      return { text: said(), detail: p.message || "", tone: "hidden" };
    default: {
      if (!Object.hasOwn(state.data.lines || {}, ev.type)) return null;
      const tone = FRAME.has(ev.type) ? "frame" : MINOR.has(ev.type) ? "minor" : null;
      return { text: said(), ...(tone ? { tone } : {}) };
    }
  }
}

// A line of a contest or an opposed roll says whom it was against, in every system: the character
// the action named (`vs_character`), the contest's opponent, the other side it changed (`sides`), or
// the opponent's name in words (MdT). A character this page does not know (an NPC the GM hides) stays
// unnamed, as the rest of the page leaves it.
function opponentName(ev) {
  const p = ev.payload || {};
  const id = p.action?.vs_character ?? p.contest?.opponent ?? (p.sides ? Number(Object.keys(p.sides)[0]) : null);
  return (id != null && id !== ev.character ? state.chars.get(id)?.name : null) || p.opponent_name || null;
}
function namingOpponent(ev, d) {
  const name = opponentName(ev);
  if (!name || textOf(d.text).includes(name)) return d;
  return { ...d, text: [].concat(d.text, ` (against ${name})`) };
}

// A roll that read conditions names them and what they changed ("Staggered: −1 die"), in every system.
function withConditions(ev, d) {
  const said = effectsRecorded(ev.payload, state.declared.conditions);
  if (!said.length) return d;
  const note = `Conditions: ${said.join(", ")}`;
  return { ...d, detail: d.detail ? [].concat(d.detail, " · ", note) : note };
}

export function describe(ev) {
  // A sealed stub says who, when and who may read it (campaign/visibility/filter.py SEALED_KEYS), never
  // what: not even that it was a roll (it may be an NPC the GM made). A whisper's visibility says it.
  if (ev.hidden && ev.visibility === "whisper") return { text: "whispered to someone", tone: "hidden" };
  if (ev.hidden) {
    const sealed = ev.payload?.commitment;
    return { text: "did something in secret", tone: "hidden", detail: sealed ? `sealed: ${short(sealed)}…` : "" };
  }
  // ``said(values)``: the event's declared sentence (campaign/platform_events.py for the platform's,
  // rules/<system>/evolve.py for a system's), filled as the audit fills it (format.js fillTemplate):
  // every line's text. ``values``: those its template names that are not in the payload.
  const p = ev.payload || {};
  const said = (values = {}) => {
    const spec = state.declared.events[ev.type];
    const template = state.data.lines?.[ev.type] ?? spec?.description;
    if (!template) return words(ev.type);
    return sentence(template, { character_name: ev.character_name, ...p, ...values }, spec?.words || {});
  };
  const ctx = { h, char: state.chars.get(ev.character), charName: ev.character_name, said };
  let d = null;
  try {
    d = describeCore(ev, said) || describeFight(ev, state.chars, said) || state.system.describe(ev, ctx);
  } catch (problem) {
    console.error("describe failed", ev, problem);
  }
  if (d) return namingOpponent(ev, withConditions(ev, d));
  return {
    text: said(),
    outcome: p.outcome !== undefined ? { label: words(p.outcome), tone: p.success === true ? "good" : p.success === false ? "bad" : "total" } : null,
  };
}
