// Small helpers shared by the table page and the per-system modules:
// building elements, formatting odds and dice, and the action form (fields,
// live odds from the preview API, who sees the dice, submit / cancel).
//
// No framework: h() builds an element, forms are plain <form>s.

let uid = 0;
export function nextId(prefix = "f") {
  uid += 1;
  return `${prefix}-${uid}`;
}

// h("button", {class: "x", onclick: fn, disabled: true}, "text", child, [more])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
      else if (key === "class") el.className = value;
      else if (key === "text") el.textContent = value;
      else if (key === "dataset") Object.assign(el.dataset, value);
      else if (["value", "checked", "selected", "disabled", "hidden", "open"].includes(key)) el[key] = value;
      else el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false || child === "") continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export const cap = (s) => (s ? String(s).charAt(0).toUpperCase() + String(s).slice(1) : "");
export const plural = (n, one, many) => `${n} ${n === 1 ? one : many || one + "s"}`;
// article("Intelligence test") -> "an Intelligence test" (by the first letter: good enough for our words)
export const article = (phrase) => `${/^[aeiou]/i.test(phrase) ? "an" : "a"} ${phrase}`;
export const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0");
export const words = (s) => String(s || "").replaceAll("_", " ");

// --- odds -------------------------------------------------------------------------

// 0.5642 -> "56.4%"; never "0.0%" for something possible, never "100.0%" for something uncertain.
export function pct(p) {
  if (p <= 0) return "0%";
  if (p >= 1) return "100%";
  const v = p * 100;
  if (v < 0.05) return "<0.1%";
  if (v > 99.95) return ">99.9%";
  return `${v.toFixed(1)}%`;
}

const oddsFloat = (entry) => (entry && typeof entry === "object" ? Number(entry.float) : Number(entry));

// oddsLine(odds, [["success", "success"], ["critical", "critical"]]) -> "56.4% success, 7.0% critical"
export function oddsLine(odds, parts) {
  if (!odds) return "";
  return parts
    .filter(([key]) => odds[key] !== undefined)
    .map(([key, label]) => `${pct(oddsFloat(odds[key]))} ${label ?? words(key)}`)
    .join(", ");
}

export function isDistribution(odds) {
  const keys = Object.keys(odds || {});
  return keys.length > 0 && keys.every((k) => /^-?\d+$/.test(k));
}

// For a table of totals: "average 7.8, 52.3% for 8 or more"
export function distributionSummary(odds) {
  const rows = Object.entries(odds)
    .map(([k, v]) => [Number(k), oddsFloat(v)])
    .sort((a, b) => a[0] - b[0]);
  if (!rows.length) return "";
  const mean = rows.reduce((s, [k, p]) => s + k * p, 0);
  let acc = 0;
  let median = rows[rows.length - 1][0];
  for (const [k, p] of rows) {
    acc += p;
    if (acc >= 0.5) { median = k; break; }
  }
  const atLeast = rows.filter(([k]) => k >= median).reduce((s, [, p]) => s + p, 0);
  return `average ${mean.toFixed(1)}, ${pct(atLeast)} for ${median} or more`;
}

export function formatOdds(odds) {
  if (!odds || !Object.keys(odds).length) return "";
  if (isDistribution(odds)) return distributionSummary(odds);
  return Object.entries(odds).map(([k, v]) => `${pct(oddsFloat(v))} ${words(k)}`).join(", ");
}

// "had 56.4% to succeed": the odds stored in a rolling event, for the log.
export function hadOdds(odds, key = "success", verb = "to succeed") {
  if (!odds || odds[key] === undefined) return "";
  return `had ${pct(oddsFloat(odds[key]))} ${verb}`;
}

// --- dice -------------------------------------------------------------------------

// die(5, "sel") -> <span class="die sel">5</span>; title explains it to hover and screen readers.
export function die(face, cls = "", title = "") {
  return h("span", { class: `die ${cls}`.trim(), title: title || undefined }, String(face));
}

export function diceGroup(label, dice) {
  return h("span", { class: "dice-group" }, label ? h("span", { class: "dice-label" }, label) : null, dice);
}

// --- the action form ---------------------------------------------------------------
//
// spec = {
//   title, fields: [field...], build(values) -> action, preview: bool,
//   odds(odds, values) -> text, rolls: bool (offer "who sees the dice"), submit: "Roll",
//   extraButtons: [{name, label}],
// }
// field = {name, label, kind: number|text|select|checkbox|checks, min, max, value, optional,
//          options: [{value, label, disabled}], numeric (select values are numbers),
//          hint, show(values) -> bool, placeholder, maxlength}
//
// opts = {preview(action) -> Promise<{odds}|{error}>, submit(action, {button, values}) -> Promise,
//         cancel(), compact, remember(values), enterButton(field, values) -> name of the button
//         Enter presses from that field (null: the first one)}

// [value, how a member picks it]: campaign/models.py VISIBILITY_WORDS, given by the page (useVisibilities).
let VISIBILITY = [["public", "Everyone"]];

export function useVisibilities(visibilities) {
  VISIBILITY = visibilities.filter((v) => v.choose).map((v) => [v.value, v.choose]);
}

export function readValues(form, spec) {
  const values = {};
  for (const field of spec.fields || []) {
    const els = form.querySelectorAll(`[name="${CSS.escape(field.name)}"]`);
    if (!els.length) continue;
    if (field.kind === "checkbox") values[field.name] = els[0].checked;
    else if (field.kind === "checks") values[field.name] = [...els].filter((e) => e.checked).map((e) => e.value);
    else {
      const raw = els[0].value;
      if (field.kind === "number" || field.numeric) values[field.name] = raw === "" ? null : Number(raw);
      else values[field.name] = raw;
    }
  }
  const vis = form.querySelector('[name="visibility"]');
  if (vis) values.visibility = vis.value;
  return values;
}

function fieldElement(field, formId) {
  const id = `${formId}-${field.name}`;
  const hintId = field.hint ? `${id}-hint` : undefined;
  const wrap = h("div", { class: `field field-${field.kind || "text"}`, dataset: { field: field.name } });
  if (field.kind === "checkbox") {
    wrap.append(h("label", { class: "check", for: id },
      h("input", { type: "checkbox", id, name: field.name, checked: !!field.value, "aria-describedby": hintId }),
      " ", field.label));
  } else if (field.kind === "checks") {
    const box = h("fieldset", { class: "checks" }, h("legend", null, field.label));
    for (const option of field.options || []) {
      const oid = `${id}-${String(option.value).replace(/\W+/g, "_")}`;
      box.append(h("label", { class: "check", for: oid },
        h("input", { type: "checkbox", id: oid, name: field.name, value: option.value,
          checked: (field.value || []).includes(option.value) }), " ", option.label ?? option.value));
    }
    wrap.append(box);
  } else if (field.kind === "select") {
    const select = h("select", { id, name: field.name, "aria-describedby": hintId });
    for (const option of field.options || []) {
      select.append(h("option", { value: option.value, disabled: option.disabled,
        selected: String(option.value) === String(field.value ?? "") }, option.label ?? option.value));
    }
    wrap.append(h("label", { for: id }, field.label), select);
  } else {
    const number = field.kind === "number";
    wrap.append(h("label", { for: id }, field.label), h("input", {
      id, name: field.name, type: number ? "number" : "text", inputmode: number ? "numeric" : undefined,
      min: field.min, max: field.max, step: number ? 1 : undefined, maxlength: field.maxlength,
      value: field.value ?? "", required: !field.optional && number, placeholder: field.placeholder,
      "aria-describedby": hintId, class: number ? "num" : undefined,
    }));
  }
  if (field.hint) wrap.append(h("span", { class: "hint muted small", id: hintId }, field.hint));
  // What is wrong with the value, said as it is typed (limitProblem); linked to the control.
  const control = wrap.querySelector("input:not([type=checkbox]), select");
  if (control) {
    const errorId = `${id}-error`;
    control.setAttribute("aria-describedby", [hintId, errorId].filter(Boolean).join(" "));
    wrap.append(h("span", { class: "field-error", id: errorId }));
  }
  return wrap;
}

// The limit a control's value breaks, in words (empty: none). The limits are the field's
// (min, max, maxlength, required), which come from the action's declaration when it has one.
export function limitProblem(input) {
  if (!input || input.tagName !== "INPUT" || input.type === "checkbox") return "";
  const v = input.validity;
  if (input.type === "number") {
    const range = input.min !== "" && input.max !== "" ? `a whole number from ${input.min} to ${input.max}`
      : input.min !== "" ? `a whole number of at least ${input.min}` : input.max !== "" ? `a whole number up to ${input.max}` : "a whole number";
    if (v.badInput || v.stepMismatch || v.rangeUnderflow || v.rangeOverflow) return `Must be ${range}.`;
    if (v.valueMissing) return `Required: ${range}.`;
    return "";
  }
  const max = Number(input.getAttribute("maxlength") || 0);
  if (max && input.value.length > max) return `At most ${max} characters (${input.value.length} now).`;
  if (v.valueMissing) return "Required.";
  return "";
}

export function buildForm(spec, opts = {}) {
  const formId = nextId("af");
  const fields = (spec.fields || []).map((f) => [f, fieldElement(f, formId)]);
  const oddsOut = h("output", { class: "odds-text", id: `${formId}-odds`, "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const submit = h("button", { type: "submit", name: "go", class: "primary" }, spec.submit || (spec.rolls ? "Roll" : "Do it"));
  const buttons = h("div", { class: "buttons" }, submit,
    (spec.extraButtons || []).map((b) => h("button", { type: "submit", name: b.name, class: "secondary" }, b.label)),
    opts.cancel ? h("button", { type: "button", class: "secondary", onclick: () => opts.cancel() }, "Cancel") : null);
  const form = h("form", { class: `action-form${opts.compact ? " compact" : ""}`, id: formId, novalidate: true,
    "aria-label": spec.title },
  h("div", { class: "fields" }, fields.map(([, el]) => el)),
  spec.rolls && !opts.noVisibility ? h("div", { class: "field field-select visibility" },
    h("label", { for: `${formId}-visibility` }, "Who sees the dice"),
    h("select", { id: `${formId}-visibility`, name: "visibility" },
      VISIBILITY.map(([v, l]) => h("option", { value: v, selected: v === (opts.visibility || "public") }, l)))) : null,
  spec.preview ? h("p", { class: "odds" }, h("span", { class: "muted" }, "Odds: "), oddsOut) : null,
  error, buttons);

  let previewToken = 0;
  let timer = null;
  const values = () => readValues(form, spec);
  const checkLimits = () => {
    let bad = false;
    for (const [, el] of fields) {
      const input = el.querySelector("input:not([type=checkbox])");
      const problem = el.hidden ? "" : limitProblem(input);
      const out = el.querySelector(".field-error");
      if (out && out.textContent !== problem) out.textContent = problem;
      if (input) input.setAttribute("aria-invalid", problem ? "true" : "false");
      bad ||= !!problem;
    }
    // Nothing out of limits is sent: the buttons wait until every field is within them.
    for (const b of buttons.querySelectorAll("button[type=submit]")) b.disabled = bad || !!b.dataset.offline;
    form.dataset.invalid = bad ? "1" : "";
    return bad;
  };
  const refresh = () => {
    const v = values();
    for (const [field, el] of fields) el.hidden = field.show ? !field.show(v) : false;
    if (checkLimits()) {
      clearTimeout(timer);
      previewToken += 1; // a preview on its way is for values no longer there
      if (spec.preview) { oddsOut.textContent = "Fix the fields marked above."; oddsOut.dataset.state = "error"; }
      return;
    }
    if (!spec.preview || !opts.preview) return;
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const token = ++previewToken;
      let action;
      try {
        action = spec.build(values());
      } catch (problem) {
        oddsOut.textContent = problem.message;
        return;
      }
      oddsOut.textContent = "…";
      const result = await opts.preview(action);
      if (token !== previewToken) return; // a newer preview is on its way
      if (result.error) {
        oddsOut.textContent = result.error;
        oddsOut.dataset.state = "error";
      } else {
        oddsOut.textContent = spec.odds ? spec.odds(result.odds, values()) : formatOdds(result.odds);
        oddsOut.dataset.state = "ok";
      }
    }, 90);
  };
  form.addEventListener("input", refresh);
  form.addEventListener("change", refresh);
  form.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && opts.cancel) { e.preventDefault(); opts.cancel(); }
    if (e.key === "Enter" && opts.enterButton && e.target.matches("input, select")) {
      const name = opts.enterButton(e.target, values());
      const button = name && form.querySelector(`button[name="${CSS.escape(name)}"]`);
      if (button) { e.preventDefault(); form.requestSubmit(button); return; }
    }
    // Enter rolls from any field, selects and checkboxes included (browsers only do it for text inputs).
    if (e.key === "Enter" && (e.target.tagName === "SELECT" || e.target.type === "checkbox")) {
      e.preventDefault();
      form.requestSubmit(submit);
    }
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (e.submitter?.disabled) return; // e.g. Enter while the table is offline
    if (checkLimits()) { error.textContent = "Some fields are outside their limits."; return; }
    error.textContent = "";
    const v = values();
    let action;
    try {
      action = spec.build(v);
    } catch (problem) {
      error.textContent = problem.message;
      return;
    }
    if (v.visibility && v.visibility !== "public") action.visibility = v.visibility;
    const button = e.submitter?.name || "go";
    for (const b of form.querySelectorAll("button")) b.disabled = true;
    try {
      if (opts.remember) opts.remember(v);
      await opts.submit(action, { button, values: v });
      if (opts.done) opts.done();
    } catch (problem) {
      error.textContent = problem.message || String(problem);
    } finally {
      for (const b of form.querySelectorAll("button")) b.disabled = false;
      if (form.isConnected) checkLimits();
    }
  });
  refresh();
  form.refreshOdds = refresh;
  form.firstInput = () => form.querySelector(".field:not([hidden]) input, .field:not([hidden]) select") || submit;
  return form;
}

// An opposed test or contest may name its opponent from the table instead of its numbers: the server
// reads them from that character's own sheet (campaign/actions/contests.py, rules/contests.py).
// ``ctx.opponents``: the characters this member may name ([{value: id, label: name}]). Null when none.
export function opponentField(ctx, show) {
  if (!ctx.opponents?.length) return null;
  return { name: "vs_character", label: "Opponent at the table", kind: "select", numeric: true, value: ctx.opponents[0].value,
    options: ctx.opponents, show };
}

// "Against" for a form that offers both: numbers typed in, or a character at the table (opponentField).
export function againstField(ctx, value, numbers) {
  if (!ctx.opponents?.length) return null;
  return { name: "against", label: "Against", kind: "select", value,
    options: [{ value: "numbers", label: numbers }, { value: "character", label: "a character at the table" }] };
}

// A buy-advance choice with its price, as the server prices it (the sheet's ``advances``,
// RuleSystem.advances; WYRM's flat costs on its sheet): the price in its label, and one the points
// don't cover, or the rules refuse (a rating at its maximum), marked and disabled. No price: as is.
export function pricedOption(value, label, price, available, unit = ["point", "points"]) {
  const cost = (n) => plural(n, ...unit);
  if (!price) return { value, label };
  if (price.refused) return { value, label: `${label} (${price.refused.replace(/\.$/, "")})`, disabled: true };
  return price.cost > available ? { value, label: `${label} (needs ${cost(price.cost)}, has ${available})`, disabled: true }
    : { value, label: `${label} (${cost(price.cost)})` };
}

// The first choice that can be taken (else the first): what a priced select starts on.
export const firstOpen = (options) => (options.find((o) => !o.disabled) || options[0])?.value;

// A required number: build() throws a message the form shows instead of sending.
export function need(values, name, label) {
  const v = values[name];
  if (v === null || v === undefined || v === "" || Number.isNaN(v)) throw new Error(`Fill in ${label}.`);
  return v;
}

// --- pieces of sheets -----------------------------------------------------------------

// "XP 5 earned · 2 spent · 3 available"
export function pointsBlock(points, unit = "Points") {
  const earned = points?.earned ?? 0;
  const spent = points?.spent ?? 0;
  return h("div", { class: "points" }, h("span", { class: "label" }, unit),
    h("span", null, h("b", null, earned), " earned"), h("span", null, h("b", null, spent), " spent"),
    h("span", { class: "avail" }, h("b", null, earned - spent), " available"));
}

// ●●●○○ with a text alternative
export function pips(n, max, label) {
  const count = Math.max(n, max || 0);
  return h("span", { class: "pips", role: "img", "aria-label": `${label}: ${n}${max ? ` of ${max}` : ""}` },
    Array.from({ length: Math.min(count, 20) }, (_, i) => h("span", { class: i < n ? "pip on" : "pip" })));
}

export function stat(label, value, extra) {
  return h("div", { class: "stat" }, h("span", { class: "label" }, label), h("span", { class: "value" }, value), extra || null);
}

// An irreversible step (a reveal, ending the encounter) asks first, in place: the button gives way to
// "Reveal #12 to everyone? Yes No", a group named by its question, focus on Yes. No or Escape puts the
// button back and focus on it. No dialog: the table goes on around the question, and a test clicks it
// like any other button. `onYes` may throw: the button comes back (its caller says why).
export function askFirst(button, { question, yes, no, onYes }) {
  const box = h("span", { class: "ask-first", role: "group", "aria-label": question });
  const back = () => {
    box.remove();
    button.hidden = false;
    button.focus();
  };
  const yesButton = h("button", { type: "button", class: "small danger", "aria-label": yes, onclick: async () => {
    yesButton.disabled = true;
    try { await onYes(); } catch { /* said by onYes */ }
    back();
  } }, "Yes");
  box.append(h("span", { class: "small" }, question), " ", yesButton, " ",
    h("button", { type: "button", class: "small secondary", "aria-label": no, onclick: back }, "No"));
  box.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); back(); } });
  button.hidden = true;
  button.after(box);
  yesButton.focus();
}

// el.replaceChildren that skips null/false children (and flattens arrays) like h() does
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}
