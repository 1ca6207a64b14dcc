// Tales from the Torn Earth (tote) at the table. The interface every system module
// exports (docs/table.md): renderSheet, actions, gmTools, describe, followUps,
// describeAction, oddsText.

import { h, cap, need, pricedOption, firstOpen, oddsLine, hadOdds, die, diceGroup, signed, pointsBlock, pips, formatOdds, article } from "../ui.js";

export const name = "tote";
// The declared actions this module lays out itself (a sheet button, a GM tool, a choice on a roll):
// the page builds a form from the declaration alone for any other (docs/table.md).
export const handles = ["skill_test", "effect_test", "spend_resolve", "invoke_aspect", "buy_advance", "award_points", "grant_resolve", "gm_invoke_aspect", "mark_injury", "heal_injury", "end_tale"];

const BUBBLES = [
  { value: "auto", label: "column bubble, else row" },
  { value: "column", label: "column bubble first" },
  { value: "row", label: "row bubble first" },
  { value: "none", label: "no bubble" },
];

function skillsInOrder(state) {
  return state.sheet.grid.skills.flat();
}

function blocked(state) {
  const track = state.sheet.options.injury_track;
  return [...new Set(track.slice(0, state.injuries).filter(Boolean))].sort();
}

// --- the sheet ---------------------------------------------------------------------------

export function renderSheet(state, ctx) {
  const s = state.sheet;
  const g = s.grid;
  const bubble = (filled, where) => h("span", {
    class: `bubble${filled ? " filled" : ""}`, role: "img",
    "aria-label": `${where} experience bubble ${filled ? "filled" : "empty"}`, title: `${where} bubble: ${filled ? "filled" : "empty"}`,
  });
  const totem = (t) => h("span", { class: "totem" }, t, " ", h("b", { class: "tv" }, s.totems[t]));
  const grid = h("table", { class: "tote-grid" },
    h("caption", { class: "sr-only" }, "Skills: rows are what the hero does, columns how; each shows its rating"),
    h("thead", null, h("tr", null, h("td"), g.columns.map((t, i) => h("th", { scope: "col" }, totem(t), bubble(state.bubbles.columns[i], `${t} column`))))),
    h("tbody", null, g.rows.map((rowTotem, r) => h("tr", null,
      h("th", { scope: "row" }, totem(rowTotem), bubble(state.bubbles.rows[r], `${rowTotem} row`)),
      g.skills[r].map((skill) => {
        const specs = s.specializations[skill] || [];
        return h("td", null, ctx.button(`skill:${skill}`, [h("span", { class: "skill-name" }, skill), " ", h("b", { class: "rating" }, s.skills[skill]),
          h("span", { class: "sr-only" }, ": test")], { class: "cell" }),
        specs.length ? h("span", { class: "specs small" }, specs.map((x) => `${x.name} +${x.bonus}`).join(", ")) : null);
      })))));

  const track = s.options.injury_track;
  const injuries = h("div", { class: "injuries" },
    h("span", { class: "label" }, "Injuries"),
    h("ol", { class: "track", "aria-label": `Injury track: ${state.injuries} of ${track.length} filled` },
      track.map((n, i) => h("li", { class: i < state.injuries ? "filled" : "", title: n ? `blocks ${n}` : "taken out" },
        n ? String(n) : "✕", h("span", { class: "sr-only" }, i < state.injuries ? " filled" : " empty")))),
    h("span", { class: "small muted" }, state.taken_out ? "Taken out: heal before testing"
      : blocked(state).length ? `can't select ${blocked(state).join(", ")}` : "unhurt"));

  const resolveMax = s.options.resolve_max;
  const last = state.last_test;
  return h("div", { class: "sheet-tote" },
    s.aspect ? h("p", { class: "aspect" }, h("span", { class: "label" }, "Aspect "), `“${s.aspect}”`,
      state.aspect_invoked ? h("span", { class: "badge" }, "invoked this scene") : null) : null,
    state.gm_penalty ? h("p", { class: "warn" }, `The GM invoked the aspect: ${signed(state.gm_penalty)} on the next skill test.`) : null,
    state.taken_out ? h("p", { class: "warn" }, "Taken out: the injury track is full.") : null,
    h("div", { class: "stats" },
      h("div", { class: "stat" }, h("span", { class: "label" }, "Resolve"),
        h("span", { class: "value" }, `${state.resolve} / ${resolveMax}`), pips(state.resolve, resolveMax, "Resolve"),
        state.scene_resolve ? h("span", { class: "badge good" }, `+${state.scene_resolve} free (aspect)`) : null),
      injuries),
    grid,
    last ? h("p", { class: "small last" }, `Last test this scene: ${last.skill} ${last.total} vs T${last.target}: `,
      last.success ? (last.rescued ? "success (Resolve)" : "success") : "failure", last.critical ? ", critical" : "") : null,
    pointsBlock(state.points, "XP"));
}

// --- actions -------------------------------------------------------------------------------

const successOdds = (o) => oddsLine(o, [["success", "success"], ["critical", "critical"]]);

function skillSpec(state, skill, ctx) {
  const specs = state.sheet.specializations[skill] || [];
  const penalty = state.gm_penalty ? ` The GM's ${signed(state.gm_penalty)} applies.` : "";
  const b = blocked(state);
  return {
    id: `skill:${skill}`, type: "skill_test", group: "Skill tests", label: `${skill} ${state.sheet.skills[skill]}`,
    title: `${skill} test`, rolls: true, preview: true, requestable: true,
    help: `${state.sheet.skills[skill]} skill ${state.sheet.skills[skill] === 1 ? "die" : "dice"} (best allowed) + the Paragon die.${b.length ? ` Injuries block ${b.join(", ")}.` : ""}${penalty}`,
    fields: [
      { name: "target", label: "Target number (T)", kind: "number", value: ctx.last("skill_test", "target", 10) },
      specs.length ? { name: "specialization", label: "Specialization", kind: "select", value: "",
        options: [{ value: "", label: "none" }, ...specs.map((x) => ({ value: x.name, label: `${x.name} +${x.bonus}` }))] } : null,
      { name: "modifier", label: "Modifier", kind: "number", value: 0 },
      { name: "bubble", label: "A critical fills", kind: "select", options: BUBBLES, value: ctx.last("skill_test", "bubble", "auto") },
    ].filter(Boolean),
    build: (v) => {
      const action = { type: "skill_test", skill, target: need(v, "target", "the target number"), modifier: v.modifier || 0, bubble: v.bubble || "auto" };
      if (v.specialization) action.specialization = v.specialization;
      return action;
    },
    odds: successOdds,
  };
}

export function actions(state, ctx) {
  const list = skillsInOrder(state).map((skill) => skillSpec(state, skill, ctx));
  list.push({
    id: "effect_test", type: "effect_test", group: "Other rolls", label: "Effect test", title: "Effect test (plain d6s)",
    rolls: true, preview: true, requestable: true,
    fields: [
      { name: "dice", label: "Dice", kind: "number", value: ctx.last("effect_test", "dice", 2) },
      { name: "modifier", label: "Modifier", kind: "number", value: 0 },
      { name: "target", label: "Target (optional)", kind: "number", optional: true, value: "" },
      { name: "label", label: "What for", kind: "text", optional: true, placeholder: "damage, distance…" },
    ],
    build: (v) => {
      const a = { type: "effect_test", dice: need(v, "dice", "the number of dice"), modifier: v.modifier || 0 };
      if (v.target) a.target = v.target;
      if (v.label) a.label = v.label;
      return a;
    },
    odds: (o) => (o.success ? oddsLine(o, [["success", "success"]]) : formatOdds(o)),
  });
  if (state.sheet.aspect && !state.aspect_invoked) {
    list.push({ id: "invoke_aspect", type: "invoke_aspect", group: "Resolve", label: "Invoke aspect",
      title: "Once a scene: one free Resolve point", immediate: true, build: () => ({ type: "invoke_aspect" }) });
  }
  const last = state.last_test;
  if (last && !last.success && !last.rescued && state.resolve + state.scene_resolve > 0) {
    list.push({ ...spendSpec(state), id: "spend_resolve", group: "Resolve", label: "Spend Resolve" });
  }
  list.push(advanceSpec(state, ctx));
  return list;
}

function spendSpec(state) {
  const last = state.last_test;
  const options = Object.entries(state.sheet.totems).map(([t, value]) => {
    const total = last.total + value;
    const own = last.totems.includes(t);
    return { value: t, total, own, label: `${t} +${value} → ${total}${own ? " (skill totem)" : ""}${total < last.target ? ": short" : ""}`, disabled: total < last.target };
  });
  const best = options.filter((o) => !o.disabled).sort((a, b) => b.own - a.own || a.total - b.total)[0];
  return {
    type: "spend_resolve", title: `Spend Resolve on ${last.skill} (${last.total} vs T${last.target})`, submit: "Spend Resolve",
    help: state.scene_resolve ? "The aspect's free point is spent first." : `${state.resolve} Resolve left.`,
    fields: [{ name: "totem", label: "Add a totem", kind: "select", options, value: best?.value }],
    build: (v) => ({ type: "spend_resolve", totem: v.totem }),
    usable: !!best,
  };
}

function advanceSpec(state, ctx) {
  const s = state.sheet;
  const costs = s.options.advance_costs;
  const avail = state.points.earned - state.points.spent;
  // Priced by the server (ctx.advances, rules/tote/actions.py advances): each choice says its cost in
  // XP, and one the XP don't cover (or a rating at its highest) can't be picked.
  const prices = ctx.advances || {};
  const xp = ["XP", "XP"];
  const skills = skillsInOrder(state);
  const raise = skills.map((k) => pricedOption(k, `${k} (${s.skills[k]})`, prices.skill?.[k], avail, xp));
  const totems = Object.entries(s.totems).map(([t, n]) => pricedOption(t, `${t} (${n})`, prices.totem?.[t], avail, xp));
  // A specialization of the skill picked: one choice per skill, shown while it is the one picked.
  const specsOf = (k) => [...(s.specializations?.[k] || []).map((sp) => pricedOption(sp.name, `${sp.name} +${sp.bonus}`,
    prices.specialization?.[k]?.[sp.name], avail, xp)), pricedOption("", "a new one", prices.specialization?.[k]?.[""], avail, xp)];
  const specField = (i) => `specialization_${i}`;
  return {
    id: "buy_advance", type: "buy_advance", group: "Advance", label: `Buy an advance (${avail} XP)`, title: "Buy an advance",
    help: `Costs: skill to N = ${costs.skill}×N XP, totem to N = ${costs.totem}×N, specialization to +N = ${costs.specialization}×N.`,
    fields: [
      { name: "advance", label: "Raise", kind: "select", value: "skill", options: [
        { value: "skill", label: "a skill" }, { value: "totem", label: "a totem" }, { value: "specialization", label: "a specialization" }] },
      { name: "skill", label: "Skill", kind: "select", show: (v) => v.advance === "skill", options: raise, value: firstOpen(raise) },
      { name: "totem", label: "Totem", kind: "select", show: (v) => v.advance === "totem", options: totems, value: firstOpen(totems) },
      { name: "spec_skill", label: "Specialization of", kind: "select", show: (v) => v.advance === "specialization",
        options: skills.map((k) => ({ value: k, label: k })) },
      ...skills.map((k, i) => {
        const options = specsOf(k);
        return { name: specField(i), label: "Specialization", kind: "select", options, value: firstOpen(options),
          show: (v) => v.advance === "specialization" && v.spec_skill === k };
      }),
      { name: "specialization", label: "New specialization", kind: "text", optional: true,
        show: (v) => v.advance === "specialization" && !v[specField(skills.indexOf(v.spec_skill))] },
    ],
    build: (v) => {
      if (v.advance === "totem") return { type: "buy_advance", advance: "totem", totem: v.totem };
      if (v.advance === "specialization") {
        const named = v[specField(skills.indexOf(v.spec_skill))] || v.specialization;
        if (!named) throw new Error("Name the specialization.");
        return { type: "buy_advance", advance: "specialization", skill: v.spec_skill, specialization: named };
      }
      return { type: "buy_advance", advance: "skill", skill: v.skill };
    },
  };
}

export function gmTools(state) {
  const list = [];
  if (state.sheet.aspect && !state.gm_penalty) {
    list.push({ id: "gm_invoke_aspect", type: "gm_invoke_aspect", label: "Invoke their aspect (−2)", immediate: true,
      title: "−2 on this hero's next skill test", build: () => ({ type: "gm_invoke_aspect" }) });
  }
  list.push({ id: "grant_resolve", type: "grant_resolve", label: "Grant Resolve", title: "Grant Resolve",
    fields: [{ name: "amount", label: "Amount", kind: "number", value: 1 },
      { name: "reason", label: "Reason", kind: "text", optional: true }],
    build: (v) => ({ type: "grant_resolve", amount: need(v, "amount", "the amount"), reason: v.reason || "" }) });
  list.push({ id: "mark_injury", type: "mark_injury", label: "Mark injury", title: "Mark injuries",
    fields: [{ name: "count", label: "Injuries", kind: "number", value: 1 }],
    build: (v) => ({ type: "mark_injury", count: need(v, "count", "how many") }) });
  if (state.injuries) {
    list.push({ id: "heal_injury", type: "heal_injury", label: "Heal injury", title: "Heal injuries",
      fields: [{ name: "count", label: "Injuries", kind: "number", value: 1 }],
      build: (v) => ({ type: "heal_injury", count: need(v, "count", "how many") }) });
  }
  list.push({ id: "award_points", type: "award_points", label: "Award XP", title: "Award XP",
    fields: [{ name: "points", label: "XP", kind: "number", value: 1 },
      { name: "reason", label: "Reason", kind: "text", optional: true }],
    build: (v) => ({ type: "award_points", points: need(v, "points", "the XP"), reason: v.reason || "" }) });
  list.push({ id: "end_tale", type: "end_tale", label: "End the Tale", title: "End the Tale: filled bubbles become XP",
    submit: "End the Tale", fields: [], build: () => ({ type: "end_tale" }) });
  return list;
}

// --- the log -----------------------------------------------------------------------------------

export function describeAction(action) {
  switch (action.type) {
    case "skill_test": return `${article(`${action.skill} test`)} vs T${action.target}${action.modifier ? ` (${signed(action.modifier)})` : ""}`;
    case "effect_test": return `an effect test (${action.dice}d6${action.target ? ` vs ${action.target}` : ""})`;
    default: return action.type.replaceAll("_", " ");
  }
}

export function oddsText(type, odds) {
  return type === "skill_test" ? successOdds(odds) : formatOdds(odds);
}

// Each line's sentence is its event's declared one (rules/tote/evolve.py, ctx.said()); the module adds
// what only the table shows beside it: the dice, the outcome, the odds it had.
export function describe(ev, ctx) {
  const p = ev.payload;
  switch (ev.type) {
    case "skill_tested": {
      const chips = p.dice.filter((d) => d.die === "skill").map((d) =>
        die(d.face, `${d.selected ? "sel" : ""} ${d.blocked ? "blocked" : ""} ${d.face === 1 ? "one" : ""}`, d.why));
      const paragon = p.dice.filter((d) => d.die === "paragon").map((d) => die(d.face, `paragon ${d.face === 1 ? "one" : ""}`, d.why));
      return {
        text: ctx.said(),
        dice: [diceGroup(p.rating ? "skill" : "", chips), diceGroup("Paragon", paragon)],
        outcome: { label: `${cap(p.outcome)}${p.critical ? " · critical!" : ""}`, tone: `${p.success ? "good" : "bad"}${p.critical ? " crit" : ""}` },
        detail: [hadOdds(p.odds), p.blocked.length ? `injuries block ${p.blocked.join(", ")}` : "",
          p.critical ? `Critical: ${p.bubble_note}` : ""].filter(Boolean).join(" · "),
      };
    }
    case "resolve_spent":
      return {
        text: ctx.said(),
        outcome: { label: "Success", tone: "good" },
        detail: `${p.source === "aspect" ? "the aspect's free point" : `${p.resolve_left} Resolve left`}${p.skill_totem ? "" : ` · ${p.totem} is not one of ${p.skill}'s totems: the table judges`}`,
      };
    case "aspect_invoked": return { text: ctx.said() };
    case "aspect_invoked_by_gm": return { text: ctx.said(), tone: "gm" };
    case "resolve_granted": return { text: ctx.said(), detail: p.reason || "", tone: "gm" };
    case "injury_marked":
      return { text: ctx.said(), outcome: p.taken_out ? { label: "Taken out", tone: "bad" } : null,
        detail: p.blocked.length ? `can't select ${p.blocked.join(", ")}` : "", tone: "gm" };
    case "injury_healed": return { text: ctx.said(), tone: "gm" };
    case "effect_tested": {
      const chips = p.dice.map((d) => die(d.face, d.counted ? "" : "off"));
      return {
        text: ctx.said(),
        dice: [diceGroup("", chips)],
        outcome: p.outcome === "rolled" ? { label: `= ${p.total}`, tone: "total" } : { label: cap(p.outcome), tone: p.success ? "good" : "bad" },
        detail: p.target ? hadOdds(p.odds) : "",
      };
    }
    case "points_awarded": return { text: ctx.said(), detail: p.reason || "", tone: "gm" };
    case "tale_ended": return { text: ctx.said(), tone: "gm" };
    case "advance_bought": return { text: ctx.said() };
    default: return null;
  }
}

export function followUps(ev, state, ctx) {
  if (ev.type !== "skill_tested" || !ctx.canAct || !ctx.latest(ev, ["skill_tested"])) return [];
  const last = state.last_test;
  if (!last || last.success || last.rescued || last.total !== ev.payload.total || last.skill !== ev.payload.skill) return [];
  if (state.resolve + state.scene_resolve > 0) {
    const spec = spendSpec(state);
    if (!spec.usable) return [ctx.h("span", { class: "muted small" }, "No totem is big enough to reach the target: Resolve can't help.")];
    return [ctx.form({ ...spec, title: "Spend Resolve" })];
  }
  if (state.sheet.aspect && !state.aspect_invoked) {
    return [ctx.act("Invoke your aspect for a free Resolve point", { type: "invoke_aspect" })];
  }
  return [ctx.h("span", { class: "muted small" }, "No Resolve left to rescue this test.")];
}
