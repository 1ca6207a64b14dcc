// The new-character form: the sheet as fields built from the system's example sheet and its
// declared sheet (labels, choices, limits checked as the player types), rows to add and remove for
// lists and named entries, the same sheet as JSON under "Advanced"; for the GM, the owner, what the
// players see of an NPC, a quick NPC, and "Past the creation limits".
//
// Owns the sheet being written (until it is sent).

import { h, fill, cap, words, limitProblem } from "./ui.js";
import { sendCommand } from "./commands.js";
import { state } from "./state.js";

// Returns { shown() }: shows "What the players see" when the GM's own character (an NPC) is chosen.
export function setUpCharacterForm(form) {
  const { me, declared } = state;
  // The sheet as a form built from the system's example sheet (its shape) and, where the system
  // declares its sheet (rules/declare.py SheetSpec), the declared labels, choices and limits,
  // checked as the player types. Lists (WYRM skills) and named entries (Tale skills, MdT
  // specializations) get rows to add and remove. The JSON under "Advanced" is the same sheet,
  // kept in step both ways, for anything the form does not show.
  const textarea = form.sheet;
  const fieldsEl = document.getElementById("char-fields");
  let sheet = JSON.parse(JSON.stringify(state.data.exampleSheet));
  const declaredSheet = new Map((declared.sheet?.fields || []).map((f) => [f.name, f]));
  const declaredAt = (path) => {
    let field = declaredSheet.get(path[0]);
    for (const key of path.slice(1)) field = field?.fields?.find?.((f) => f.name === key) || (field?.item?.fields || []).find?.((f) => f.name === key) || (typeof key === "number" ? field?.item || field : null);
    return field || null;
  };
  const idFor = (path) => `sheet-${path.join("-").replace(/\W+/g, "_")}`;
  // In a row of a list or of named entries, "name" is the entry's: "Skill", not a second "Name".
  const singular = (text) => text.replace(/ies$/, "y").replace(/s$/, "");
  const labelFor = (path) => declaredAt(path)?.label || (path.length > 2 && path[path.length - 1] === "name"
    ? singular(cap(words(String(path[0])))) : cap(words(String(path[path.length - 1]))));
  const writeJSON = () => { textarea.value = JSON.stringify(sheet, null, 2); };
  const setAt = (path, value) => {
    let obj = sheet;
    for (const k of path.slice(0, -1)) obj = obj[k];
    obj[path[path.length - 1]] = value;
    writeJSON();
  };
  const blank = (value) => (typeof value === "number" ? 0 : typeof value === "string" ? "" : Array.isArray(value) ? []
    : value && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blank(v)])) : value);

  function input(path, value, label = labelFor(path)) {
    const id = idFor(path);
    const d = declaredAt(path);
    const error = h("span", { class: "field-error", id: `${id}-error` });
    let control;
    if (d?.kind === "choice") {
      control = h("select", { id, "aria-describedby": error.id },
        d.choices.map((c) => h("option", { value: c.value, selected: c.value === value }, c.label)));
      control.addEventListener("change", () => setAt(path, control.value));
    } else if (Array.isArray(value)) { // a list of words: comma-separated
      control = h("input", { id, value: value.join(", "), "aria-describedby": error.id });
      control.addEventListener("input", () => setAt(path, control.value.split(",").map((x) => x.trim()).filter(Boolean)));
    } else {
      const number = typeof value === "number";
      control = h("input", { id, type: number ? "number" : "text", value, class: number ? "num" : "", step: number ? 1 : undefined,
        min: d?.min, max: d?.max, maxlength: d?.maxLength, required: number || d?.required ? true : undefined, "aria-describedby": error.id });
      control.addEventListener("input", () => {
        error.textContent = limitProblem(control);
        control.setAttribute("aria-invalid", error.textContent ? "true" : "false");
        setAt(path, number ? (control.value === "" ? null : Number(control.value)) : control.value);
        checkSheet();
      });
    }
    return h("div", { class: "field" }, h("label", { for: id }, label), control, error);
  }

  function rows(path, entries, named) {
    // entries: [[key, value]]; named: the key is a name the player types (an object's entries)
    const list = h("div", { class: "sheet-rows" });
    entries.forEach(([key, value], i) => {
      const at = [...path, key];
      const parts = [];
      if (named) {
        const nameId = `${idFor(at)}-name`;
        const nameError = h("span", { class: "field-error", id: `${nameId}-error` });
        const name = h("input", { id: nameId, class: "entry-name", value: key, required: true, "aria-describedby": nameError.id });
        name.addEventListener("change", () => {
          const obj = path.reduce((o, k) => o[k], sheet);
          const wanted = name.value.trim() || key;
          // A name is one entry's (the rules read names without regard to case): renamed as another,
          // the two would become one and a rating would be lost without a word.
          if (Object.keys(obj).some((k) => k !== key && k.toLowerCase() === wanted.toLowerCase())) {
            nameError.textContent = `Another ${singular(labelFor(path)).toLowerCase()} is named ${wanted}: give this one its own name.`;
            name.setAttribute("aria-invalid", "true");
            name.value = key;
            return;
          }
          const renamed = Object.fromEntries(Object.entries(obj).map(([k, v]) => [k === key ? wanted : k, v]));
          setAt(path, renamed);
          renderFields();
        });
        // "Skill name": Tale's sheet has a characteristic called Skill too (its own word, in the
        // characteristics above), and the two fields said "Skill" alike.
        parts.push(h("div", { class: "field" }, h("label", { for: nameId }, `${singular(labelFor(path))} name`), name, nameError));
      }
      if (value && typeof value === "object" && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) parts.push(input([...at, k], v));
      } else {
        parts.push(input(at, value, named ? "Value" : labelFor(at)));
      }
      parts.push(h("button", { type: "button", class: "small secondary", "aria-label": `Remove ${named ? key : `${labelFor(path)} ${i + 1}`}`, onclick: () => {
        const obj = path.reduce((o, k) => o[k], sheet);
        if (Array.isArray(obj)) obj.splice(i, 1); else delete obj[key];
        writeJSON();
        renderFields();
      } }, "Remove"));
      list.append(h("div", { class: "sheet-row" }, parts));
    });
    const template = entries.length ? entries[0][1] : (named ? 0 : "");
    list.append(h("button", { type: "button", class: "small secondary", onclick: () => {
      const obj = path.reduce((o, k) => o[k], sheet);
      if (Array.isArray(obj)) obj.push(blank(template));
      else { // "New specialization", "New specialization 2": each its own name, saying what it is
        const base = `New ${singular(labelFor(path)).toLowerCase()}`;
        let n = 1;
        const taken = (text) => Object.keys(obj).some((k) => k.toLowerCase() === text.toLowerCase());
        while (taken(n === 1 ? base : `${base} ${n}`)) n += 1;
        obj[n === 1 ? base : `${base} ${n}`] = blank(template);
      }
      writeJSON();
      renderFields();
      list.parentElement?.querySelector(".sheet-row:last-of-type input")?.focus();
    } }, `Add ${named ? "an entry to" : "a row to"} ${labelFor(path)}`));
    return list;
  }

  function renderFields() {
    const parts = [];
    for (const [key, value] of Object.entries(sheet)) {
      const path = [key];
      const isObject = value && typeof value === "object" && !Array.isArray(value);
      // Entries the player names (a declared group without fields: MdT specializations, Tale skills)
      // stay so however many there are: three numbers read as a fixed set of ratings ("New 1").
      const named = declaredAt(path)?.kind === "group" && !declaredAt(path).fields?.length;
      if (typeof value !== "object" || value === null || (Array.isArray(value) && value.every((v) => typeof v !== "object"))) {
        parts.push(input(path, value));
      } else if (Array.isArray(value)) {
        parts.push(h("fieldset", { class: "sheet-group wide" }, h("legend", null, labelFor(path)), rows(path, value.map((v, i) => [i, v]), false)));
      } else if (isObject && !named && Object.values(value).every((v) => typeof v === "number") && Object.keys(value).length > 2) {
        // a fixed set of ratings (attributes, skills): one number each
        parts.push(h("fieldset", { class: "sheet-group" }, h("legend", null, labelFor(path)),
          // Named as the sheet names them ("Warrior", "Intelligence"), not as the key is stored ("warrior").
          Object.entries(value).map(([k, v]) => input([key, k], v, cap(words(k))))));
      } else {
        // named entries the player chooses (specializations, Tale skills)
        parts.push(h("fieldset", { class: "sheet-group wide" }, h("legend", null, labelFor(path)), rows(path, Object.entries(value), true)));
      }
    }
    fill(fieldsEl, ...parts);
    checkSheet();
  }

  const submitButton = form.querySelector("button[type=submit]");
  function checkSheet() {
    const bad = [...fieldsEl.querySelectorAll("input")].some((el) => limitProblem(el));
    submitButton.disabled = bad;
  }

  // What the players see is asked of the GM's own character only: an NPC (a player's is always seen).
  // A quick NPC (the GM's own, "quick": rules/npc.py) needs no sheet: the fields and the JSON step aside.
  const quick = () => (form.quick && form.owner?.value === me.username ? form.quick.value : "");
  const advanced = form.querySelector("details.advanced");
  // What speaks of the fields (the example sheet, its creation limits) steps aside with them.
  const aboutFields = ["char-example-help", "char-override-field"].map((id) => document.getElementById(id)).filter(Boolean);
  const showQuick = () => {
    fieldsEl.hidden = advanced.hidden = !!quick();
    for (const el of aboutFields) el.hidden = !!quick();
    if (quick()) submitButton.disabled = false; else checkSheet();
  };
  const showNpcField = () => {
    const field = document.getElementById("char-shown-field");
    if (field && form.owner) field.hidden = form.owner.value !== me.username;
    showQuick();
  };
  form.owner?.addEventListener("change", showNpcField);
  form.quick?.addEventListener("change", showQuick);

  writeJSON();
  renderFields();
  textarea.addEventListener("input", () => {
    try { sheet = JSON.parse(textarea.value); } catch { return; }
    if (sheet && typeof sheet === "object") renderFields();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const err = document.getElementById("char-error");
    err.textContent = "";
    err.className = "error";
    let sheet;
    try {
      sheet = JSON.parse(textarea.value || "{}");
    } catch (problem) {
      err.textContent = `The sheet is not valid JSON: ${problem.message}`;
      return;
    }
    const action = { type: "create_character", name: form.name.value.trim(), sheet };
    if (form.owner && form.owner.value && form.owner.value !== me.username) action.owner = form.owner.value;
    else if (form.owner) Object.assign(action, { npc: true, shown: form.shown.value }); // the GM's own: an NPC
    if (quick()) { delete action.sheet; action.quick = { template: quick() }; }
    else if (form.override_limits?.checked) action.override_limits = true; // the GM's (a quick NPC is past them anyway)
    state.pendingCreation = action.name;
    try {
      await sendCommand(action);
      err.className = "ok";
      err.textContent = `${action.name} is at the table.`;
      form.name.value = "";
      if (form.override_limits) form.override_limits.checked = false; // each time on purpose
      document.getElementById("new-char").open = false;
    } catch (problem) {
      state.pendingCreation = null;
      err.textContent = problem.message;
    }
  });
  return { shown: showNpcField };
}
