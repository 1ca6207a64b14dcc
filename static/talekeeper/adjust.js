// The GM's hand on a sheet (campaign/actions/adjustments.py, `adjust_sheet`): a form with every
// single value of the character's state (a number, true/false or text), by its path, as it stands;
// what the GM changes is sent with her reason as one `sheet_adjusted` event. The server re-checks
// the adjusted sheet against the system's ranges; the form checks nothing of its own.
import { cap, words } from "./ui.js";
import { platformField } from "./state.js";

// What a roll or a contest leaves behind for the rules to read next (the last roll, a request
// waiting for the GM, a running contest, a counter) is not the sheet: the GM ends or voids those.
const NOT_THE_SHEET = new Set(["rolls", "last_roll", "last_test", "pending_fate", "contest", "projects"]);
const MAX = 20; // rules/common.py MAX_ADJUSTMENTS: at most this many changes in one adjustment

// [path, value] for every scalar in the state: the sheet as made (`sheet.…`: a maximum, a rating)
// and the values play moves (Resolve now, Fate, wounds).
export function adjustable(state) {
  const out = [];
  const walk = (value, path) => {
    if (value === null || Array.isArray(value)) return;
    if (typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key]);
    } else if (["number", "boolean", "string"].includes(typeof value)) out.push([path.join("."), value]);
  };
  for (const [key, value] of Object.entries(state || {})) if (!NOT_THE_SHEET.has(key)) walk(value, [key]);
  return out;
}

const labelOf = (path) => path.split(".").map((part) => cap(words(part))).join(" · ");

export function adjustSpec(c) {
  const values = adjustable(c.state);
  return {
    id: "adjust_sheet", type: "adjust_sheet", group: "GM tools", gm: true, label: "Adjust the sheet",
    title: `Adjust ${c.name}'s sheet`, submit: "Adjust",
    help: "A ruling, a correction or a wound nobody rolled: change the values, say why. The log and the audit show each value's before and after; to undo a mistake, void its event instead.",
    fields: [
      ...values.map(([path, value], i) => ({
        name: `v${i}`, label: labelOf(path), optional: true,
        ...(typeof value === "boolean" ? { kind: "checkbox", value }
          : typeof value === "number" ? { kind: "number", value } : { kind: "text", value, maxlength: 200 }),
      })),
      { name: "reason", label: "Why (the table reads it)", kind: "text", maxlength: platformField("adjust_sheet", "reason").maxLength,
        optional: false, value: "" },
    ],
    build: (v) => {
      const changes = {};
      values.forEach(([path, old], i) => {
        const now = v[`v${i}`];
        if (now !== null && now !== undefined && now !== old) changes[path] = now;
      });
      const count = Object.keys(changes).length;
      if (!count) throw new Error("Change a value first.");
      if (count > MAX) throw new Error(`At most ${MAX} values in one adjustment.`);
      if (!v.reason.trim()) throw new Error("Say why.");
      return { type: "adjust_sheet", changes, reason: v.reason.trim() };
    },
  };
}
