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

// The platform's one-line events read as the audit page says them (campaign/audit.py LINES,
// passed as data.lines: state.data.lines); these few are set apart as the frame of the evening, and
// the witnesses' as minor.
const FRAME = new Set(["session_started", "session_ended", "scene_started", "scene_ended", "encounter_started", "turn_advanced", "encounter_ended"]);
const MINOR = new Set(["witness_call", "roll_witnessed"]);

// A sentence whose "#{key}" names an event of the log links to it (the audit says "#12").
function sentence(template, p) {
  const parts = template.split(/#\{(\w+)\}/);
  if (parts.length === 1) return fillTemplate(template, p);
  return parts.map((part, i) => (i % 2 ? h("a", { href: `#seq-${p[part]}` }, `#${p[part] ?? "?"}`) : fillTemplate(part, p)));
}

function describeCore(ev) {
  const p = ev.payload || {};
  const LINES = state.data.lines || {};
  if (Object.hasOwn(LINES, ev.type)) {
    const tone = FRAME.has(ev.type) ? "frame" : MINOR.has(ev.type) ? "minor" : null;
    return { text: sentence(LINES[ev.type], p), ...(tone ? { tone } : {}) };
  }
  switch (ev.type) {
    case "roll":
      return {
        text: `rolled ${p.notation}${p.label ? ` · ${p.label}` : ""}`,
        dice: rollDice(p),
        outcome: { label: `= ${p.total}${p.counts_successes ? (p.total === 1 ? " success" : " successes") : ""}`, tone: "total" },
      };
    case "character_created": { // as campaign/audit.py describe says it
      const text = `created ${p.npc ? "the NPC" : "the character"} ${p.name} for ${p.owner}`;
      return { text: p.limits_overridden ? `${text} (past the creation limits, by the GM)` : text };
    }
    case "event_voided": { // the voided event in the log's words for it, when this page holds it (else its seq alone)
      const target = state.events.get(p.seq);
      const said = target ? textOf(describe(target).text) : "";
      return { text: [`voided `, h("a", { href: `#seq-${p.seq}` }, `#${p.seq}`), said ? ` (${said})` : ""], detail: p.reason ? `Reason: ${p.reason}` : "" };
    }
    case "roll_revealed": {
      const body = p.body || p; // {seq, body: {type, payload, ...}}; older reveals: {seq, type, payload}
      const inner = describe({ ...ev, type: state.nowName(body.type), payload: body.payload || {}, hidden: false });
      return { ...inner, text: [`revealed `, h("a", { href: `#seq-${p.seq}` }, `#${p.seq}`), ": ", inner.text] };
    }
    case "roll_pending": { // a witnessed roll waiting for the other tables' entropy (./witnessing.js)
      const n = (p.witnesses || []).length;
      return { text: `${actionLabel(p.action, ev.character)}: rolling…`, tone: "pending",
        detail: n ? `Waiting for ${n} other table${n === 1 ? "" : "s"} to witness it.` : "" };
    }
    case "roll_requested":
      return { text: `GM asks for ${actionLabel(askedAction(p), ev.character)}`, detail: p.note ? `“${p.note}”` : "" };
    case "sheet_adjusted": // as campaign/audit.py says it: each value's before and after, and why
      return { text: `adjusted the sheet: ${(p.changes || []).map((c) => `${c.path.replace(/^sheet\./, "")} ${c.from} → ${c.to}`).join(", ")}`,
        detail: p.reason ? `“${p.reason}”` : "", tone: "gm" };
    case "turn_order_set": return { text: `set the turn order: ${(p.order || []).map((id) => state.chars.get(id)?.name || `#${id}`).join(", ")}` };
    case "message_posted": // chat: in character it is said, out of character it is (ooc)
      return { text: p.kind === "ic" ? h("q", { class: "said" }, p.text) : [h("span", { class: "ooc-tag" }, "ooc "), p.text], tone: "chat" };
    case "bundle": { // one hidden command's rule events, stored as one (docs/hidden-information.md)
      const parts = (p.events || []).map((e) => describe({ ...ev, type: state.nowName(e.type), payload: e.payload || {}, hidden: false }));
      return { ...(parts[0] || {}), text: parts.flatMap((d, i) => [...(i ? [" · "] : []), ...[].concat(d.text)]) };
    }
    case "refused":
      return { text: `${words((typeof p.action === "object" ? p.action?.type : p.action) || "action")} refused, hidden from the player`, detail: p.message || "", tone: "hidden" };
    default:
      return null;
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
  // ``said()``: the event's declared sentence (rules/<system>/evolve.py), as the audit says it, for a
  // module whose line for the event is that sentence.
  const said = () => fillTemplate(state.declared.events[ev.type]?.description || words(ev.type), ev.payload || {});
  const ctx = { h, char: state.chars.get(ev.character), charName: ev.character_name, said };
  let d = null;
  try {
    d = describeCore(ev) || describeFight(ev, state.chars) || state.system.describe(ev, ctx);
  } catch (problem) {
    console.error("describe failed", ev, problem);
  }
  if (d) return namingOpponent(ev, withConditions(ev, d));
  const p = ev.payload || {};
  const spec = state.declared.events[ev.type];
  return {
    text: spec?.description ? fillTemplate(spec.description, p) : words(ev.type),
    outcome: p.outcome !== undefined ? { label: words(p.outcome), tone: p.success === true ? "good" : p.success === false ? "bad" : "total" } : null,
  };
}
