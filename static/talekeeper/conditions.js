// Conditions with a duration on a character (rules/conditions.py, docs/table.md "Conditions"): what
// is left of each, and its modifier where the system's rules read one (in the words of the system's
// own declaration of `apply_condition`). The sheet shows them in every system; the encounter's turn
// order names them beside each combatant; the GM removes one with a click. No page needed
// (tests/js/conditions.test.mjs).

import { h, plural } from "./ui.js";

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
