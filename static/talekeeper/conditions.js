// Conditions with a duration on a character (rules/conditions.py, docs/table.md "Conditions"): what
// is left of each, and its modifier where the system's rules read one (in the words of the system's
// own declaration of `apply_condition`). The sheet shows them in every system; the encounter's turn
// order names them beside each combatant; the GM removes one with a click. No page needed
// (tests/js/conditions.test.mjs).

import { h, plural, signed } from "./ui.js";

export const conditionsOf = (state) => (state && Array.isArray(state.conditions) ? state.conditions : []);

// "1 round left", "this scene", "until removed"
export function left(c) {
  if (c.duration === "rounds") return `${plural(c.rounds_left, "round")} left`;
  return c.duration === "scene" ? "this scene" : "until removed";
}

// "Blinded (DL modifier +2, 1 round left)"; `word`: the system's name for the modifier.
export function conditionText(c, word = "modifier") {
  const signed = c.modifier > 0 ? `+${c.modifier}` : String(c.modifier);
  return `${c.name} (${c.modifier ? `${word} ${signed}, ` : ""}${left(c)})`;
}

// The sheet's block (null without conditions); `remove(name)` given: a Remove button on each.
export function conditionsBlock(state, { word, remove } = {}) {
  const list = conditionsOf(state);
  if (!list.length) return null;
  return h("div", { class: "conditions", role: "group", "aria-label": "Conditions" },
    h("span", { class: "label" }, "Conditions"),
    h("ul", { class: "condition-list" }, list.map((c) => h("li", { dataset: { condition: c.name } },
      h("span", { class: "condition" }, conditionText(c, word)),
      remove ? h("button", { type: "button", class: "small ghost gm", "aria-label": `Remove ${c.name}`,
        title: `Remove ${c.name} now`, onclick: (e) => remove(c.name, e.currentTarget) }, "Remove") : null))));
}

// The encounter's short form beside a combatant: " · Blinded (1 round left), Inspired (this scene)".
export function conditionsInline(state) {
  const list = conditionsOf(state);
  return list.length ? h("span", { class: "small conditions-inline" }, ` · ${list.map((c) => `${c.name} (${left(c)})`).join(", ")}`) : null;
}

// A modifier's effect in the system's words (its declared `conditions.effect`, rules/base.py
// ConditionsRead): "−1 die", "+2 to the DL"; as rules/conditions.py effect_words says it.
export function effectWords(template, modifier) {
  const n = Math.abs(modifier);
  return template.replaceAll("{signed}", signed(modifier)).replaceAll("{n}", String(n)).replaceAll("{dice}", n === 1 ? "die" : "dice");
}

// What the character's conditions change on an action of `type` ("Staggered: −1 die" each), when the
// rules read them there (`read`: the system's declared `conditions`); every one with a modifier when
// `type` is left out (a fight's round reads them all). [] for none.
export function effectsOn(state, read, type) {
  if (!read || (type && !read.reads.includes(type))) return [];
  return conditionsOf(state).filter((c) => c.modifier).map((c) => `${c.name}: ${effectWords(read.effect, c.modifier)}`);
}

// A recorded roll's conditions (its payload's `conditions`, or those of its opposition), in words.
export function effectsRecorded(payload, read) {
  if (!read || !payload) return [];
  const own = Array.isArray(payload.conditions) ? payload.conditions : [];
  const said = own.filter((c) => c && c.modifier).map((c) => `${c.name}: ${effectWords(read.effect, c.modifier)}`);
  // WYRM's passive side (docs/rules.md, Conditions 5): its conditions take their modifier off the DL.
  const passive = Number(payload.opposition?.conditions) || 0;
  if (passive) said.push(`their conditions: ${effectWords(read.effect, -passive)}`);
  // An MdT opponent's (Conditions 8): dice on its own pool.
  const theirs = Number(payload.vs_conditions) || 0;
  if (theirs) said.push(`their conditions: ${effectWords(read.effect, theirs)}`);
  return said;
}

// The note a form shows before a roll: "Conditions: Staggered: −1 die" (null for none).
export const conditionNote = (effects) => (effects.length
  ? h("p", { class: "small condition-effects", role: "note" }, `Conditions: ${effects.join(", ")}`) : null);
