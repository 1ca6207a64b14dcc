// The health track house rule at the table (docs/rules.md, rules/health.py): off unless the
// campaign's settings turn it on. WYRM and MdT show it and mark it the same way; only the number
// of boxes is each system's own, so each passes what it adds to the setting's base.

import { h, need } from "./ui.js";

// The actions the track's tools lay out (healthTools): a module that shows the track handles them.
export const HEALTH_ACTIONS = ["mark_harm", "heal_harm"];

// { boxes, harm } of the character's track, or null when the campaign plays without one.
export function healthTrack(state, extraBoxes) {
  const health = state.sheet.options && state.sheet.options.health;
  if (!health || !health.enabled) return null;
  const boxes = Math.max(1, health.base + extraBoxes);
  const harm = Math.min(state.harm || 0, boxes);
  return { boxes, harm };
}

// The sheet's line for the track (nothing without one).
export function healthStat(track) {
  return track ? h("div", { class: "stat" }, h("span", { class: "label" }, "Health (house rule)"),
    h("span", { class: "value" }, `${track.boxes - track.harm}/${track.boxes}`),
    track.harm >= track.boxes ? h("span", { class: "warn" }, " taken out") : null) : null;
}

// The GM's two tools for the track (none without one).
export function healthTools(track) {
  if (!track) return [];
  const fields = [{ name: "amount", label: "Boxes", kind: "number", value: 1 },
    { name: "reason", label: "Reason", kind: "text", optional: true }];
  return HEALTH_ACTIONS.map((type) => ({
    id: type, type, label: type === "mark_harm" ? "Mark harm" : "Heal harm", title: type === "mark_harm" ? "Mark harm" : "Heal harm", fields,
    build: (v) => ({ type, amount: need(v, "amount", "the boxes"), ...(v.reason ? { reason: v.reason } : {}) }) }));
}
