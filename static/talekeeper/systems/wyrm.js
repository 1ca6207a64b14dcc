// WYRM (Warrior, Rogue & Mage) at the table: d6 + attribute (+2 per helping skill)
// against a DL; exploding 6s where a skill applies; Fate spent with the GM's approval.

import { h, cap, need, opponentField, pricedOption, firstOpen, oddsLine, hadOdds, die, diceGroup, pointsBlock, pips, formatOdds, distributionSummary, plural, article } from "../ui.js";
import { HEALTH_ACTIONS, healthTrack, healthStat, healthTools } from "../health.js";
import { state } from "../state.js";

export const name = "wyrm";
// The declared actions this module lays out itself (a sheet button, a GM tool, a choice on a roll):
// the page builds a form from the declaration alone for any other (docs/table.md).
export const handles = ["check", "spend_fate", "approve_fate", "deny_fate", "automatic_success", "damage", "buy_advance", "award_points", "grant_fate", ...HEALTH_ACTIONS];

const ATTRS = ["warrior", "rogue", "mage"];
// Fights of several sides (fight.js; rules/wyrm/opposed.py): each side picks whom it acts against, and
// every side rolls the attribute the GM names ("both in direct competition", wyrm-srd-rules-mechanics.txt:23).
export const fights = { choice: { opposed: "against" }, attributes: ATTRS };
// What each use of Fate is, in the words its events declare (rules/wyrm/evolve.py FATE_USES).
const uses = () => state.declared.events.fate_requested?.words?.use || {};

// --- the sheet ---------------------------------------------------------------------------

export function renderSheet(state, ctx) {
  const skillsOf = (a) => state.skills.filter((s) => s.attribute === a).map((s) => s.name);
  const attrs = h("table", { class: "attr-table" },
    h("caption", { class: "sr-only" }, "Attributes, the skills that belong to them, and a check button each"),
    h("tbody", null, ATTRS.map((a) => h("tr", null,
      h("th", { scope: "row" }, cap(a)),
      h("td", { class: "num big-num" }, state.attributes[a]),
      h("td", null, ctx.button(`check:${a}`, `${cap(a)} check`, { label: `${cap(a)} check (d6 + ${state.attributes[a]})` }),
        skillsOf(a).length ? h("span", { class: "specs small" }, skillsOf(a).join(", ")) : null)))));
  const last = state.last_roll;
  const pending = state.pending_fate;
  return h("div", { class: "sheet-wyrm" },
    attrs,
    h("div", { class: "stats" },
      h("div", { class: "stat" }, h("span", { class: "label" }, "Fate"), h("span", { class: "value" }, state.fate), pips(state.fate, 0, "Fate")),
      h("div", { class: "stat" }, h("span", { class: "label" }, "Skills"), h("span", null, state.skills.length
        ? state.skills.map((s) => `${s.name} (${cap(s.attribute)})`).join(", ") : "none")),
      healthStat(track(state))),
    pending ? h("p", { class: "warn" }, `Fate request waiting for the GM: ${uses()[pending.use] || pending.use}${pending.roll ? ` (roll ${pending.roll})` : ""}.`) : null,
    last ? h("p", { class: "small last" }, `Last roll this scene (#${last.roll}, ${last.kind}): total ${last.total}`,
      last.kind === "check" ? ` vs DL ${last.dl}, ${last.success ? "success" : "failure"}` : "",
      last.fate_used ? " · Fate used" : state.fate ? " · Fate can still change it" : "") : null,
    pointsBlock(state.points, "Points"));
}

// --- actions -------------------------------------------------------------------------------

const checkOdds = (o) => oddsLine(o, [["success", "success"]]);

// The sheet of the opponent picked from the table, when this page holds it (sheetCtx opponents).
const opponentSheet = (ctx, id) => ctx.opponents?.find((o) => o.value === id)?.state || null;

// An opponent named from the table helps with skills from its own sheet: each opponent whose sheet the
// page holds gets its skills as choices, shown while it is the one picked (the form typed them by name).
function theirSkillFields(ctx) {
  return (ctx.opponents || []).filter((o) => o.state?.skills?.length).map((o) => ({
    name: `their_skills_${o.value}`, label: "Their helping skills", kind: "checks", value: [],
    options: o.state.skills.map((s) => ({ value: s.name, label: `${s.name} (${cap(s.attribute)})` })),
    show: (v) => v.against === "character" && v.vs_character === o.value,
  }));
}

// The DL the GM set last on this page's log: a check she asked for, or one she rolled (her NPCs').
function gmDl(ctx) {
  return ctx.recent?.((ev) => {
    const asked = ev.payload?.asked || ev.payload?.action; // "asked" where members sign
    if (ev.type === "roll_requested" && asked?.type === "check") return asked.dl;
    if (ev.type === "attribute_checked" && ctx.roleOf?.(ev.actor) === "gm" && !ev.payload.opposed) return ev.payload.dl_base;
    return undefined;
  });
}

// Whether rerolling the check's die can turn its failure into a success: the best face (any
// total, when the die explodes) with the check's bonus against its DL. A success has nothing to
// gain from a reroll, and a failure the best face cannot save is a point spent for nothing.
export function rerollCanSave(p) {
  if (p.success) return false;
  if (p.explodes) return true;
  const best = 6 + (p.total - p.die_total);
  return p.ties_succeed ? best >= p.dl : best > p.dl;
}

function checkSpec(state, attribute, ctx) {
  const known = state.skills.map((s) => s.name);
  const own = state.skills.filter((s) => s.attribute === attribute).map((s) => s.name);
  const others = known.filter((k) => !own.includes(k));
  return {
    id: `check:${attribute}`, type: "check", group: "Checks", label: `${cap(attribute)} check`, title: `${cap(attribute)} check`,
    rolls: true, preview: true, requestable: true,
    help: `d6 + ${cap(attribute)} ${state.attributes[attribute]}, +2 per helping skill (6s explode when a skill helps).`,
    fields: [
      { name: "against", label: "Against", kind: "select", value: ctx.last("check", "against", "dl"),
        options: [{ value: "dl", label: "a difficulty level (DL)" }, { value: "vs", label: "an opponent (opposed)" },
          ...(ctx.opponents?.length ? [{ value: "character", label: "a character at the table (opposed)" }] : [])] },
      // Required while shown: the rules have no default DL (the GM sets it), so the form opens at the
      // DL the GM set last (asked for, or rolled against), else this page's last, else empty and
      // required; declared optional only because an opposed check has none.
      { name: "dl", label: "DL", kind: "number", optional: false, value: gmDl(ctx) ?? ctx.last("check", "dl"), show: (v) => v.against === "dl" },
      { name: "vs_attribute", declared: "vs.attribute", label: "Their attribute", kind: "number", value: 2, show: (v) => v.against === "vs" },
      { name: "vs_skills", declared: "vs.skills", label: "Their skills", kind: "number", value: 0, show: (v) => v.against === "vs" },
      // Named from the table: their numbers come from their own sheet (rules/contests.py).
      opponentField(ctx, (v) => v.against === "character"),
      { name: "their_attribute", label: "Attribute they roll", kind: "select", value: attribute,
        options: ATTRS.map((a) => ({ value: a, label: cap(a) })), show: (v) => v.against === "character" },
      // Their skills from their sheet, as choices (one set per opponent, shown when it is picked).
      ...theirSkillFields(ctx),
      // Typed by name (as the check's own, its declaration's "skills") for one whose sheet this page
      // does not hold; the server refuses a skill they don't know.
      { name: "their_skills", declared: "skills", label: "Their helping skills", kind: "text", optional: true, placeholder: "Swords, Brawl",
        hint: "Names from their sheet, at most two.", show: (v) => v.against === "character" && !opponentSheet(ctx, v.vs_character) },
      { name: "vs_static", label: "Static DL (no roll for them)", kind: "checkbox", value: false, show: (v) => v.against !== "dl" },
      known.length ? { name: "skills", label: "Helping skills (+2 each)", kind: "checks", value: [],
        options: [...own, ...others].map((k) => ({ value: k, label: own.includes(k) ? k : `${k} (other)` })) } : null,
      known.length > 1 ? { name: "second", label: "GM allows a second skill", kind: "checkbox", value: false,
        show: (v) => (v.skills || []).length > 1 } : null,
      { name: "modifier", label: "DL modifier", kind: "number", value: 0 },
      { name: "task", label: "Task", kind: "text", optional: true, placeholder: "climb the wall" },
    ].filter(Boolean),
    build: (v) => {
      const a = { type: "check", attribute, skills: v.skills || [] };
      if (v.against === "vs") a.vs = { attribute: need(v, "vs_attribute", "their attribute"), skills: v.vs_skills || 0, static: !!v.vs_static };
      else if (v.against === "character") {
        Object.assign(a, { vs_character: need(v, "vs_character", "the opponent"), vs_attribute: v.their_attribute });
        const theirs = opponentSheet(ctx, v.vs_character) ? v[`their_skills_${v.vs_character}`] || []
          : (v.their_skills || "").split(",").map((t) => t.trim()).filter(Boolean);
        if (theirs.length) a.vs_skills = theirs;
        if (v.vs_static) a.vs_static = true;
      } else a.dl = need(v, "dl", "the DL");
      if (v.modifier) a.modifier = v.modifier;
      if (v.second && a.skills.length > 1) a.gm_allows_second_skill = true;
      if (v.task) a.task = v.task;
      return a;
    },
    odds: checkOdds,
  };
}

export function actions(state, ctx) {
  const list = ATTRS.map((a) => checkSpec(state, a, ctx));
  list.push({
    id: "damage", type: "damage", group: "Other rolls", label: "Damage roll", title: "Damage roll (6s explode)",
    rolls: true, preview: true, requestable: true,
    fields: [
      { name: "dice", label: "Dice", kind: "number", value: ctx.last("damage", "dice", 1) },
      { name: "bonus", label: "Bonus", kind: "number", value: ctx.last("damage", "bonus", 0) },
      { name: "task", label: "What for", kind: "text", optional: true },
    ],
    build: (v) => ({ type: "damage", dice: need(v, "dice", "the dice"), bonus: v.bonus || 0, ...(v.task ? { task: v.task } : {}) }),
    odds: (o) => distributionSummary(o),
  });
  if (state.fate > 0 && !state.pending_fate) {
    // The GM spending Fate (for their own NPC, or a character they act for) answers the request
    // themselves: the form does not send them to "ask the GM".
    list.push({
      id: "spend_fate", type: "spend_fate", group: "Fate", label: "Spend Fate…",
      title: ctx.isGM ? "Spend a Fate point" : "Ask the GM to spend a Fate point",
      help: `Reroll and +2 are offered on ${ctx.char.name}'s last roll in the log. These two need no roll:`,
      fields: [
        { name: "use", label: "To", kind: "select", value: "minor_detail",
          options: [{ value: "minor_detail", label: uses().minor_detail }, { value: "ignore_attack", label: uses().ignore_attack }] },
        { name: "detail", label: "Detail", kind: "text", optional: true, placeholder: "I know this innkeeper" },
      ],
      submit: ctx.isGM ? "Spend Fate" : "Ask the GM",
      build: (v) => {
        if (v.use === "minor_detail" && !v.detail) throw new Error("Say which detail changes.");
        return { type: "spend_fate", use: v.use, ...(v.detail ? { detail: v.detail } : {}) };
      },
    });
  }
  // The campaign's costs, on the sheet as the server reads them (rules/wyrm/settings.py): each choice
  // says its price, and one the points don't cover is marked and can't be picked (the form offered
  // "+1 attribute" for 10 points to a character with 5, and the server refused it only once sent).
  const costs = state.sheet.options.advance_costs;
  const avail = state.points.earned - state.points.spent;
  const advances = [{ value: "attribute", label: "+1 attribute" }, { value: "skill", label: "a new skill" }]
    .map(({ value, label }) => pricedOption(value, label, { cost: costs[value] }, avail));
  list.push({
    id: "buy_advance", type: "buy_advance", group: "Advance", label: `Buy an advance (${avail} pts)`,
    title: "Buy an advance", help: `An attribute +1 costs ${plural(costs.attribute, "point")}, a new skill ${costs.skill}.`,
    fields: [
      { name: "advance", label: "Buy", kind: "select", value: firstOpen(advances), options: advances },
      { name: "attribute", label: "Attribute", kind: "select", options: ATTRS.map((a) => ({ value: a, label: `${cap(a)} (${state.attributes[a]})` })) },
      { name: "skill", label: "Skill name", kind: "text", optional: true, show: (v) => v.advance === "skill" },
    ],
    build: (v) => {
      if (v.advance === "skill") {
        if (!v.skill) throw new Error("Name the skill.");
        return { type: "buy_advance", advance: "skill", skill: v.skill, attribute: v.attribute };
      }
      return { type: "buy_advance", advance: "attribute", attribute: v.attribute };
    },
  });
  return list;
}

// The health track house rule: WYRM's has the setting's base + Warrior boxes (rules/wyrm/settings.py).
const track = (state) => healthTrack(state, state.attributes.warrior);

export function gmTools(state) {
  const list = [
    { id: "grant_fate", type: "grant_fate", label: "Grant Fate", title: "Grant Fate",
      fields: [{ name: "amount", label: "Fate", kind: "number", value: 1 },
        { name: "reason", label: "Reason", kind: "text", optional: true, placeholder: "heroic action" }],
      build: (v) => ({ type: "grant_fate", amount: need(v, "amount", "the Fate"), ...(v.reason ? { reason: v.reason } : {}) }) },
    { id: "award_points", type: "award_points", label: "Award points", title: "Award points",
      fields: [{ name: "points", label: "Points", kind: "number", value: 5 },
        { name: "reason", label: "Reason", kind: "text", optional: true }],
      build: (v) => ({ type: "award_points", points: need(v, "points", "the points"), ...(v.reason ? { reason: v.reason } : {}) }) },
  ];
  if (state.skills.length) {
    list.push({ id: "automatic_success", type: "automatic_success", label: "Automatic success", title: "Automatic success (no roll)",
      fields: [
        { name: "skill", label: "With the skill", kind: "select", options: state.skills.map((s) => ({ value: s.name, label: `${s.name} (${cap(s.attribute)})` })) },
        { name: "task", label: "Task", kind: "text", optional: true }],
      build: (v) => {
        const skill = state.skills.find((s) => s.name === v.skill) || state.skills[0];
        return { type: "automatic_success", attribute: skill.attribute, skill: skill.name, ...(v.task ? { task: v.task } : {}) };
      } });
  }
  list.push(...healthTools(track(state)));
  return list;
}

// --- the log -----------------------------------------------------------------------------------

export function describeAction(action) {
  if (action.type === "check") {
    const against = action.vs ? `an opponent (${action.vs.attribute}${action.vs.skills ? ` +${action.vs.skills} skill` : ""})` : `DL ${action.dl}`;
    return `${article(`${cap(action.attribute)} check`)}${action.skills?.length ? ` with ${action.skills.join(" + ")}` : ""} vs ${against}`;
  }
  if (action.type === "damage") return `a damage roll (${action.dice || 1}d6${action.bonus ? `+${action.bonus}` : ""})`;
  return action.type.replaceAll("_", " ");
}

export function oddsText(type, odds) {
  return type === "check" ? checkOdds(odds) : type === "damage" ? distributionSummary(odds) : formatOdds(odds);
}

function chain(dice, cls = "") {
  return dice.map((d) => die(`${d.face}${d.exploded ? "!" : ""}`, `${cls} ${d.exploded ? "x" : ""}`, d.exploded ? "a 6: rolled again and added" : d.capped ? "capped" : ""));
}

// Each line's sentence is its event's declared one (rules/wyrm/evolve.py, ctx.said()); the module adds
// what only the table shows beside it: the dice, the outcome, the odds it had, the task.
export function describe(ev, ctx) {
  const p = ev.payload;
  switch (ev.type) {
    case "attribute_checked": {
      const opp = p.opposition;
      return {
        text: ctx.said(),
        dice: [diceGroup("", chain(p.dice, "sel")), opp && opp.dice?.length ? diceGroup("them", chain(opp.dice, "theirs")) : null],
        outcome: { label: cap(p.outcome), tone: p.success ? "good" : "bad" },
        detail: [p.task ? `“${p.task}”` : "", `roll #${p.roll}`, hadOdds(p.odds),
          opp ? `opponent ${opp.die_total ?? ""}${opp.static ? `static ${opp.total}` : ` + ${opp.attribute}${opp.skill_bonus ? ` + ${opp.skill_bonus}` : ""} = ${opp.total}`}` : "",
          p.explodes ? "6s explode" : ""].filter(Boolean).join(" · "),
      };
    }
    case "damage_rolled":
      return {
        text: ctx.said(),
        dice: p.dice.map((c, i) => diceGroup(p.dice.length > 1 ? `d${i + 1}` : "", chain(c))),
        outcome: { label: `= ${p.total}`, tone: "total" },
        detail: [p.task ? `“${p.task}”` : "", `roll #${p.roll}`].filter(Boolean).join(" · "),
      };
    case "automatic_success_granted":
      return { text: ctx.said(), outcome: { label: "Success", tone: "good" }, detail: p.task ? `“${p.task}”` : "", tone: "gm" };
    case "fate_requested":
      return { text: ctx.said(), detail: p.detail ? `“${p.detail}”` : "", outcome: { label: "asks the GM", tone: "neutral" } };
    case "fate_spent": {
      if (p.use === "reroll") {
        return { text: ctx.said(),
          dice: [diceGroup("was", chain(p.original_dice, "off")), diceGroup("now", chain(p.new_dice, "sel"))],
          outcome: p.kind === "check" ? { label: cap(p.outcome), tone: p.success ? "good" : "bad" } : { label: `= ${p.total}`, tone: "total" },
          detail: [`${p.fate_left} Fate left`, p.kind === "check" ? `vs DL ${p.dl}, ${hadOdds(p.odds)}` : ""].filter(Boolean).join(" · ") };
      }
      if (p.use === "plus_two") {
        return { text: ctx.said(), outcome: { label: cap(p.outcome), tone: p.success ? "good" : "bad" }, detail: `${p.fate_left} Fate left` };
      }
      return { text: ctx.said(), detail: [p.detail ? `“${p.detail}”` : "", `${p.fate_left} Fate left`].filter(Boolean).join(" · ") };
    }
    case "fate_denied": return { text: ctx.said(), detail: p.reason || "", tone: "gm" };
    case "fate_granted": return { text: ctx.said(), detail: p.reason || "", tone: "gm" };
    case "points_awarded": return { text: ctx.said(), detail: p.reason || "", tone: "gm" };
    case "advance_bought": return { text: ctx.said() };
    default: return null;
  }
}

export function followUps(ev, state, ctx) {
  const p = ev.payload;
  if ((ev.type === "attribute_checked" || ev.type === "damage_rolled") && ctx.canAct) {
    const last = state.last_roll;
    if (!last || last.roll !== p.roll || !ctx.latest(ev, ["attribute_checked", "damage_rolled", "fate_spent"])) return [];
    if (last.fate_used || state.pending_fate) return [];
    if (state.fate < 1) return [ctx.h("span", { class: "muted small" }, "No Fate left to change this roll.")];
    // Choices on a roll reach the GM only for their own NPCs: not "the GM approves", they do.
    const out = [ctx.h("span", { class: "muted small" }, `Spend Fate (${state.fate} left${ctx.isGM ? "" : ", the GM approves"}):`)];
    if (ev.type === "damage_rolled" && p.dice.length > 1) {
      out.push(ctx.form({ title: "Fate reroll", submit: "Reroll (Fate)", fields: [{ name: "die", label: "Die", kind: "select", numeric: true,
        options: p.die_totals.map((t, i) => ({ value: i + 1, label: `die ${i + 1} (${t})` })), value: 1 }],
      build: (v) => ({ type: "spend_fate", use: "reroll", die: v.die }) }));
    } else if (rerollCanSave(p)) {
      out.push(ctx.act("Reroll (Fate)", { type: "spend_fate", use: "reroll" }, { class: "secondary" }));
    }
    // +2 only where it turns this failure into a success (an evening's play-test: it was offered on a
    // success, and on a failure +2 could not save); the server still takes it if asked (docs/table.md).
    const saves = !p.success && (p.ties_succeed ? p.total + 2 >= p.dl : p.total + 2 > p.dl);
    if (ev.type === "attribute_checked" && saves) out.push(ctx.act("+2 (Fate)", { type: "spend_fate", use: "plus_two" }, { class: "secondary" }));
    if (out.length > 1) return out;
    return p.success ? [] : [ctx.h("span", { class: "muted small" }, "No Fate spend can change this roll.")];
  }
  if (ev.type === "fate_requested") {
    // Answered (spent or denied) or withdrawn: the line says which, for everyone.
    const answer = ctx.laterEvents(ev).find((e) => ["fate_spent", "fate_denied", "fate_requested"].includes(e.type));
    if (answer?.type === "fate_spent") return [ctx.h("span", { class: "muted small" }, "approved in ", ctx.h("a", { href: `#seq-${answer.seq}` }, `#${answer.seq}`))];
    if (answer?.type === "fate_denied") return [ctx.h("span", { class: "muted small" }, "denied in ", ctx.h("a", { href: `#seq-${answer.seq}` }, `#${answer.seq}`))];
    if (answer || !state.pending_fate || !ctx.latest(ev, ["fate_requested"])) {
      // Nothing answered it and nothing waits: the scene ended (a request lapses with it) or its roll was voided.
      return [ctx.h("span", { class: "muted small withdrawn" }, "Withdrawn: the GM never answered it, and it no longer waits (its scene ended, or its roll was voided).")];
    }
    if (ctx.isGM) {
      return [ctx.act("Approve", { type: "approve_fate" }, { class: "primary", label: `Approve ${ctx.char?.name}'s Fate request` }),
        ctx.form({ type: "deny_fate", title: "Deny the Fate request", submit: "Deny", fields: [{ name: "reason", label: "Reason (optional)", kind: "text", optional: true }],
          build: (v) => ({ type: "deny_fate", ...(v.reason ? { reason: v.reason } : {}) }) })];
    }
    return [ctx.h("span", { class: "muted small" }, "Waiting for the GM to approve or deny.")];
  }
  return [];
}
