// The action form (the composer): opens under the sheet when an action is clicked, with the fields
// it needs, the exact odds as they change and who sees the dice. The fields' limits are the
// action's declared ones; a declared action the system's table module does not lay out gets a form
// from its declaration alone.
//
// Owns the open form (state.composer: its spec, character and the button that opened it).

import { h, fill, buildForm, cap, words } from "./ui.js";
import { conditionNote, effectsOn } from "./conditions.js";
import { preview, sendCommand } from "./commands.js";
import { playerCount } from "./format.js";
import { inView, notice } from "./result.js";
import { state } from "./state.js";

const composerEl = document.getElementById("composer");

export function startAction(spec, charId, opener) {
  const c = state.chars.get(charId);
  if (!c) return;
  if (spec.immediate) {
    notice("");
    sendCommand({ ...spec.build({}), character: charId }, { show: "card" }).catch((problem) => notice(problem.message));
    return;
  }
  openComposer(spec, charId, opener);
}

// An action form from the declaration alone (kinds as rules/declare.py names them); null when a
// field has a kind a form can't show yet (a group), so no half-working form is offered.
function declaredForm(d) {
  const fields = [];
  for (const f of d.fields || []) {
    const base = { name: f.name, label: f.label || cap(words(f.name)), optional: !f.required, hint: f.help };
    if (f.kind === "integer") fields.push({ ...base, kind: "number", min: f.min, max: f.max, value: f.default ?? (f.required ? f.min : "") });
    else if (f.kind === "text") fields.push({ ...base, kind: "text", maxlength: f.maxLength, value: f.default ?? "" });
    else if (f.kind === "choice") fields.push({ ...base, kind: "select", value: f.default ?? (f.required ? f.choices[0]?.value : ""),
      options: [...(f.required ? [] : [{ value: "", label: "—" }]), ...f.choices] });
    else if (f.kind === "flag") fields.push({ ...base, kind: "checkbox", value: !!f.default });
    else if (f.kind === "list" && f.item?.kind === "choice") fields.push({ ...base, kind: "checks", options: f.item.choices, value: f.default || [] });
    else return null;
  }
  return {
    id: `declared:${d.type}`, type: d.type, group: d.by === "gm" ? "GM tools" : "Actions", gm: d.by === "gm",
    label: d.title, title: d.title, help: d.help, rolls: d.rolls, preview: d.rolls, fields,
    build: (values) => Object.fromEntries([["type", d.type],
      ...fields.map((f) => [f.name, values[f.name]]).filter(([, v]) => v !== null && v !== "" && v !== undefined)]),
  };
}
// Only actions the system's table module does not list in its `handles`: those it offers its own
// way (a sheet button, a choice on a roll such as WYRM's Fate approval, the health track's tools
// from health.js where the system shows the track).
let declaredSpecsCache = null;
export const declaredSpecs = () => (declaredSpecsCache ??= (() => {
  const handled = new Set(state.system.handles || []);
  return Object.values(state.declared.actions || {}).filter((d) => !handled.has(d.type)).map(declaredForm).filter(Boolean);
})());

// The limits of an action's fields come from its declaration (rules/declare.py, served with the
// page): what the server checks is what the form checks as the player types. A system module's
// field names its declared field (``declared: "vs.attribute"`` where the form's name differs) and
// may only narrow the range with what the state says (a combat portion within the dice left).
function declaredField(type, path) {
  let fields = state.declared.actions?.[type]?.fields || [];
  let found = null;
  for (const part of path.split(".")) {
    found = fields.find((f) => f.name === part) || null;
    if (!found) return null;
    fields = found.fields || [];
  }
  return found;
}

export function withDeclaredLimits(spec) {
  if (!spec.type || !spec.fields || !state.declared.actions?.[spec.type]) return spec;
  const fields = spec.fields.map((field) => {
    const d = field && declaredField(spec.type, field.declared || field.name);
    if (!d) return field;
    if (d.kind === "integer" && field.kind === "number") {
      return { ...field, min: Math.max(d.min, field.min ?? d.min), max: Math.min(d.max, field.max ?? d.max),
        optional: field.optional ?? !d.required };
    }
    if (d.kind === "text" && (!field.kind || field.kind === "text")) return { ...field, maxlength: d.maxLength, optional: field.optional ?? !d.required };
    return field;
  });
  return { ...spec, fields };
}

function openComposer(spec, charId, opener) {
  spec = withDeclaredLimits(spec);
  const { chars, members, me, isGM } = state;
  const c = chars.get(charId);
  const asking = isGM && spec.requestable && c.owner !== me.username && members.get(c.owner) !== "gm";
  const full = asking ? {
    ...spec,
    fields: [...(spec.fields || []), { name: "__note", kind: "text", label: `Note for ${c.owner} (when asking)`, optional: true, maxlength: 200 }],
    // One request to every player's character at once (several players, one test): each answers alone.
    extraButtons: [{ name: "ask", label: `Ask ${c.owner} to roll` },
      ...(playerCount(chars.values(), (name) => members.get(name)) > 1 ? [{ name: "ask_all", label: "Ask every player" }] : [])],
    submit: `Roll for ${c.name}`,
  } : spec;
  const form = buildForm(full, {
    visibility: state.lastValues[spec.type]?.visibility,
    preview: (action) => preview({ ...action, character: charId }),
    remember: (values) => { state.lastValues[spec.type] = { ...(state.lastValues[spec.type] || {}), ...values }; },
    // A note is only sent when asking: Enter in the note, or with a note written, asks the player.
    enterButton: asking ? (field, values) => (field.name === "__note" || values.__note ? "ask" : null) : undefined,
    submit: async (action, { button, values }) => {
      if (button === "ask" || button === "ask_all") {
        const { visibility, ...wanted } = action;
        if (visibility) wanted.visibility = visibility;
        const asked = button === "ask_all" ? { characters: "players" } : { character: charId };
        await sendCommand({ type: "request_roll", ...asked, action: wanted, note: values.__note || "" }, { show: "card" });
      } else {
        await sendCommand({ ...action, character: charId }, { show: "card" });
      }
    },
    done: () => closeComposer(true),
    cancel: () => closeComposer(true),
  });
  state.composer = { spec, charId, opener };
  fill(composerEl, 
    h("div", { class: "composer-head" }, h("h3", { id: "composer-title" }, spec.title || spec.label),
      h("span", { class: "muted small" }, c.name)),
    spec.help ? h("p", { class: "muted small" }, spec.help) : null,
    // What the character's conditions change on this roll, before it is sent (the odds include it).
    conditionNote(effectsOn(c.state, state.declared.conditions, spec.type)),
    form);
  composerEl.hidden = false;
  // The form, its odds and its Roll button in view (the dock sticks to the bottom of the screen).
  form.firstInput().focus({ preventScroll: true });
  if (form.firstInput().select) form.firstInput().select();
  if (!inView(composerEl)) composerEl.scrollIntoView({ block: "nearest" });
}

export function closeComposer(returnFocus) {
  if (!state.composer) return;
  const opener = state.composer.opener;
  state.composer = null;
  composerEl.hidden = true;
  fill(composerEl);
  if (returnFocus) {
    const id = opener?.dataset?.action;
    const again = id ? document.querySelector(`#sheet-wrap [data-action="${CSS.escape(id)}"]`) : null;
    (again || opener)?.focus?.({ preventScroll: true }); // focus goes back, the screen stays on the result
  }
}
