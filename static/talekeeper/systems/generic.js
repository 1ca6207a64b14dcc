// The fallback for a rule system with no table module yet: its sheet as JSON, no
// action buttons (the dice box and the API still work), events named by type.
// Copy tote.js or mdt.js to systems/<name>.js to give a fifth system its own table.

import { h } from "../ui.js";

export const name = "generic";
// No action laid out here: every declared action gets a form from its declaration.
export const handles = [];

export function renderSheet(state) {
  return h("pre", { class: "state" }, JSON.stringify(state, null, 1));
}

export function actions() {
  return [];
}

export function describe() {
  return null;
}

export function followUps() {
  return [];
}
