// Mundo das Trevas Lite at the table: d10 pools of 1 + attribute + specialization +
// modifiers; 7-9 is a success, 10 two; difficulty 1-3; opposed tests, races to N
// successes round by round, and projects that accumulate successes.

import { h, need, againstField, opponentField, pricedOption, firstOpen, oddsLine, hadOdds, die, diceGroup, pointsBlock, formatOdds, plural, article } from "../ui.js";
import { HEALTH_ACTIONS, healthTrack, healthStat, healthTools } from "../health.js";

export const name = "mdt";
// The declared actions this module lays out itself (a sheet button, a GM tool, a choice on a roll):
// the page builds a form from the declaration alone for any other (docs/table.md).
export const handles = ["test", "opposed_test", "start_contest", "contest_round", "end_contest", "start_project", "project_roll", "abandon_project", "say_yes", "buy_advance", "award_points", ...HEALTH_ACTIONS];

const GROUPS = [
  ["Mental", ["intelligence", "wits", "resolve"]],
  ["Physical", ["strength", "dexterity", "stamina"]],
  ["Social", ["presence", "manipulation", "composure"]],
];
const ATTRS = GROUPS.flatMap(([, a]) => a);
// Fights of several sides (fight.js; rules/mdt/opposed.py): every side simply rolls the attribute the
// GM names ("Ambos rolam o mesmo atributo", mundo-das-trevas-lite-testes.pt.txt:24).
export const fights = { choice: { race: "roll", opposed: "roll" }, attributes: ATTRS };
const LABEL = { intelligence: "Intelligence", wits: "Wits", resolve: "Resolve", strength: "Strength", dexterity: "Dexterity",
  stamina: "Stamina", presence: "Presence", manipulation: "Manipulation", composure: "Composure" };
const PT = { intelligence: "Inteligência", wits: "Raciocínio", resolve: "Determinação", strength: "Força", dexterity: "Destreza",
  stamina: "Vigor", presence: "Presença", manipulation: "Manipulação", composure: "Autocontrole" };
// English at the table; the Portuguese names (the rule text's) are in docs/rules.md and the titles.
const DIFFICULTY = [[1, "Dramatic (1)", "Dramático"], [2, "Dangerous (2)", "Perigoso"], [3, "Desperate (3)", "Desesperado"]];
const OUTCOME = { exceptional: "Exceptional success", success: "Success", failure: "Failure", dramatic_failure: "Dramatic failure",
  win: "Win", loss: "Loss", tie: "Tie", continue: "Goes on", complete: "Complete" };
const TONE = { exceptional: "good crit", success: "good", win: "good", complete: "good", failure: "bad", loss: "bad",
  dramatic_failure: "bad crit", tie: "neutral", continue: "neutral" };

const testOdds = (o) => oddsLine(o, [["success", "success"], ["exceptional", "exceptional"], ["dramatic_failure", "dramatic failure"]]);
const raceOdds = (o) => oddsLine(o, [["win", "win"], ["loss", "loss"], ["continue", "goes on"]]);

function specOptions(state) {
  return [{ value: "", label: "none" }, ...Object.entries(state.sheet.specializations || {}).map(([n, r]) => ({ value: n, label: `${n} +${r}` }))];
}

// --- the sheet ---------------------------------------------------------------------------

export function renderSheet(state, ctx) {
  const s = state.sheet;
  const dots = (n) => h("span", { class: "dots", "aria-hidden": "true" }, "●".repeat(n) + "○".repeat(Math.max(0, 5 - n)));
  const grid = h("div", { class: "mdt-grid", role: "group", "aria-label": "Attributes: each button starts a test" },
    GROUPS.map(([group]) => h("h3", null, group)),
    [0, 1, 2].flatMap((row) => GROUPS.map(([, attrs]) => {
      const a = attrs[row];
      return ctx.button(`test:${a}`, [h("span", { class: "name" }, LABEL[a]), " ", h("span", { class: "val" }, dots(s.attributes[a]), h("b", null, s.attributes[a])),
        h("span", { class: "sr-only" }, `: test (${plural(1 + s.attributes[a], "die", "dice")})`)], { title: `${PT[a]} · ${plural(1 + s.attributes[a], "die", "dice")}` });
    })));
  const specs = Object.entries(s.specializations || {});
  const c = state.contest;
  // The character by name: every member reads this sheet, its player or not.
  const who = ctx.char?.name || "The character";
  const contest = c ? h("div", { class: "box contest" },
    h("h3", null, `Race: ${c.label || "contest"} (first to ${c.target})`),
    h("div", { class: "race" },
      h("span", null, who), h("progress", { max: c.target, value: Math.min(c.mine, c.target), "aria-label": `${who}'s successes` }), h("b", null, `${c.mine}/${c.target}`),
      h("span", null, c.opponent_name || "Them"), h("progress", { max: c.target, value: Math.min(c.theirs, c.target),
        "aria-label": c.opponent_name ? `${c.opponent_name}'s successes` : "their successes" }), h("b", null, `${c.theirs}/${c.target}`)),
    h("p", { class: "small muted" }, `Round ${c.round} · ${LABEL[c.attribute]}${c.specialization ? ` + ${c.specialization}` : ""} vs ${plural(c.vs_pool, "die", "dice")}`),
    h("div", { class: "buttons" }, ctx.button("contest_round", "Next round"), ctx.button("end_contest", "End it"))) : null;
  const projects = Object.values(state.projects || {});
  return h("div", { class: "sheet-mdt" },
    s.concept ? h("p", { class: "aspect" }, h("span", { class: "label" }, "Concept "), s.concept) : null,
    grid,
    h("div", { class: "stats" }, h("span", { class: "label" }, "Specializations"),
      specs.length ? h("ul", { class: "chips" }, specs.map(([n, r]) => h("li", null, `${n} +${r}`))) : h("span", { class: "muted small" }, "none")),
    healthStat(track(state)),
    contest,
    projects.length ? h("div", { class: "box" }, h("h3", null, "Projects"),
      projects.map((p) => h("div", { class: "race" },
        ctx.button(`project:${p.name}`, [h("span", { class: "sr-only" }, "Roll for the project "), p.name]),
        h("progress", { max: p.target, value: p.progress, "aria-label": `${p.name}: ${p.progress} of ${p.target}` }),
        h("b", null, `${p.progress}/${p.target}`)))) : null,
    pointsBlock(state.points, "Points"));
}

// --- actions -------------------------------------------------------------------------------

function testSpec(state, attribute, ctx) {
  const rating = state.sheet.attributes[attribute];
  return {
    id: `test:${attribute}`, type: "test", group: "Tests", label: `${LABEL[attribute]} ${rating}`, title: `${LABEL[attribute]} test (${PT[attribute]})`,
    rolls: true, preview: true, requestable: true,
    help: `1 + ${LABEL[attribute]} ${rating} d10s, + specialization and modifiers. 7–9 is a success, 10 two; 0 dice or fewer is a Luck Test.`,
    fields: [
      { name: "difficulty", label: "Difficulty", kind: "select", numeric: true, value: ctx.last("test", "difficulty", 1),
        options: DIFFICULTY.map(([v, l]) => ({ value: v, label: l })) },
      Object.keys(state.sheet.specializations || {}).length ? { name: "specialization", label: "Specialization", kind: "select", value: "", options: specOptions(state) } : null,
      { name: "modifier", label: "Modifier (dice)", kind: "number", value: 0 },
    ].filter(Boolean),
    build: (v) => ({ type: "test", attribute, difficulty: v.difficulty || 1, modifier: v.modifier || 0, ...(v.specialization ? { specialization: v.specialization } : {}) }),
    odds: testOdds,
  };
}

// The opponent's side of an opposed test or race: a character at the table (its pool from its sheet,
// the same attribute) or the dice the player names (and who they are, in words).
function theirSide(v, dice = "their dice", ctx = null) {
  if (v.against === "character") {
    const named = ctx?.opponents.find((o) => o.value === v.vs_character)?.label; // the log line says whom
    return { vs_character: need(v, "vs_character", "the opponent"), ...(v.vs_specialization ? { vs_specialization: v.vs_specialization } : {}),
      ...(named ? { opponent: named } : {}) };
  }
  return { vs_pool: need(v, "vs_pool", dice), ...(v.opponent ? { opponent: v.opponent } : {}) };
}

export function actions(state, ctx) {
  // The GM acts for any character from its sheet: a form names the character, never "you".
  const name = ctx.char.name;
  const list = ATTRS.map((a) => testSpec(state, a, ctx));
  const attrOptions = ATTRS.map((a) => ({ value: a, label: `${LABEL[a]} (${state.sheet.attributes[a]})` }));
  list.push({
    id: "opposed_test", type: "opposed_test", group: "Other tests", label: "Opposed test", title: "Opposed test",
    rolls: true, preview: true, requestable: true,
    fields: [
      { name: "attribute", label: "Attribute", kind: "select", options: attrOptions, value: ctx.last("opposed_test", "attribute", "wits") },
      Object.keys(state.sheet.specializations || {}).length ? { name: "specialization", label: "Specialization", kind: "select", value: "", options: specOptions(state) } : null,
      { name: "modifier", label: "Modifier", kind: "number", value: 0 },
      againstField(ctx, "numbers", "their dice, as I say"),
      // Named from the table: they roll the same attribute from their own sheet (rules/contests.py).
      opponentField(ctx, (v) => v.against === "character"),
      { name: "vs_specialization", label: "Their specialization", kind: "text", optional: true, show: (v) => v.against === "character" },
      { name: "vs_pool", label: "Their dice", kind: "number", value: ctx.last("opposed_test", "vs_pool", 4), show: (v) => v.against !== "character" },
      { name: "opponent", label: "Opponent", kind: "text", optional: true, placeholder: "the guard", show: (v) => v.against !== "character" },
      { name: "tie_goes_to", label: "A tie goes to", kind: "select", value: "none",
        options: [{ value: "none", label: "nobody" }, { value: "character", label: name }, { value: "opponent", label: "them" }] },
    ].filter(Boolean),
    build: (v) => ({ type: "opposed_test", attribute: v.attribute, modifier: v.modifier || 0, ...theirSide(v, "their dice", ctx),
      tie_goes_to: v.tie_goes_to, ...(v.specialization ? { specialization: v.specialization } : {}) }),
    odds: (o) => oddsLine(o, [["win", "win"], ["tie", "tie"], ["loss", "loss"], ["dramatic_failure", "dramatic failure"]]),
  });
  if (state.contest) {
    list.push({ id: "contest_round", type: "contest_round", group: "Contest", label: "Next round", title: `${state.contest.label || "Race"}: next round`,
      rolls: true, preview: true, requestable: true, submit: "Roll the round",
      fields: [{ name: "modifier", label: "Modifier", kind: "number", value: 0 },
        { name: "vs_modifier", label: "Their modifier", kind: "number", value: 0 }],
      build: (v) => ({ type: "contest_round", ...(v.modifier ? { modifier: v.modifier } : {}), ...(v.vs_modifier ? { vs_modifier: v.vs_modifier } : {}) }),
      odds: raceOdds });
    list.push({ id: "end_contest", type: "end_contest", group: "Contest", label: "End the race", title: "End the race",
      fields: [{ name: "reason", label: "Why", kind: "text", optional: true, placeholder: "conceded" }],
      build: (v) => ({ type: "end_contest", ...(v.reason ? { reason: v.reason } : {}) }) });
  }
  for (const p of Object.values(state.projects || {})) {
    list.push({ id: `project:${p.name}`, type: "project_roll", group: "Projects", label: `${p.name} ${p.progress}/${p.target}`,
      title: `Project: ${p.name} (${p.progress}/${p.target})`, rolls: true, preview: true, requestable: true,
      help: `${LABEL[p.attribute]}${p.specialization ? ` + ${p.specialization}` : ""}; one roll per ${p.interval || "interval"}.`,
      fields: [{ name: "modifier", label: "Modifier", kind: "number", value: 0 }],
      build: (v) => ({ type: "project_roll", project: p.name, ...(v.modifier ? { modifier: v.modifier } : {}) }),
      odds: (o) => oddsLine(o, [["complete", "complete"], ["dramatic_failure", "dramatic failure"]]) });
  }
  // Offered with a project to abandon, and naming the sheet's projects: its declaration alone
  // (a project's name as text) was offered to a character with none.
  const projects = Object.values(state.projects || {});
  if (projects.length) {
    list.push({ id: "abandon_project", type: "abandon_project", group: "Projects", label: "Abandon a project", title: "Abandon a project",
      fields: [{ name: "project", label: "Project", kind: "select", value: projects[0].name,
        options: projects.map((p) => ({ value: p.name, label: `${p.name} (${p.progress}/${p.target})` })) },
      { name: "reason", label: "Reason", kind: "text", optional: true }],
      build: (v) => ({ type: "abandon_project", project: v.project, ...(v.reason ? { reason: v.reason } : {}) }) });
  }
  const avail = state.points.earned - state.points.spent;
  const opts = state.sheet.options || {};
  // Priced by the server (ctx.advances, rules/mdt/actions.py advances): each choice says its cost,
  // and one the points don't cover (or a rating at its maximum) can't be picked.
  const prices = ctx.advances || {};
  const raise = ATTRS.map((a) => pricedOption(a, `${LABEL[a]} (${state.sheet.attributes[a]})`, prices.attribute?.[a], avail));
  const specs = [...Object.entries(state.sheet.specializations || {}).map(([n, r]) => pricedOption(n, `${n} +${r}`, prices.specialization?.[n], avail)),
    pricedOption("", "a new one", prices.specialization?.[""], avail)];
  list.push({
    id: "buy_advance", type: "buy_advance", group: "Advance", label: `Buy an advance (${avail} pts)`, title: "Buy an advance",
    help: `Attribute to N costs ${opts.attribute_cost ?? 2}×N; specialization to N costs ${opts.specialization_cost ?? 1}×N.`,
    fields: [
      { name: "kind", label: "Raise", kind: "select", value: "attribute", options: [{ value: "attribute", label: "an attribute" }, { value: "specialization", label: "a specialization" }] },
      { name: "attribute", label: "Attribute", kind: "select", options: raise, value: firstOpen(raise), show: (v) => v.kind === "attribute" },
      { name: "specialization", label: "Specialization", kind: "select", options: specs, value: firstOpen(specs), show: (v) => v.kind === "specialization" },
      { name: "new_specialization", declared: "specialization", label: "New specialization", kind: "text", optional: true,
        show: (v) => v.kind === "specialization" && !v.specialization },
    ],
    build: (v) => {
      if (v.kind === "attribute") return { type: "buy_advance", attribute: v.attribute };
      const named = v.specialization || v.new_specialization;
      if (!named) throw new Error("Name the specialization.");
      return { type: "buy_advance", specialization: named };
    },
  });
  return list;
}

// The health track house rule: MdT's has the setting's base + Stamina boxes (rules/mdt/settings.py).
const track = (state) => healthTrack(state, state.sheet.attributes.stamina);

export function gmTools(state, ctx) {
  const attrOptions = ATTRS.map((a) => ({ value: a, label: `${LABEL[a]} (${state.sheet.attributes[a]})` }));
  const list = [];
  if (!state.contest) {
    list.push({ id: "start_contest", type: "start_contest", label: "Start a race", title: "Start a race to N successes",
      fields: [
        { name: "attribute", label: "Their attribute", kind: "select", options: attrOptions, value: "dexterity" },
        Object.keys(state.sheet.specializations || {}).length ? { name: "specialization", label: "Specialization", kind: "select", value: "", options: specOptions(state) } : null,
        againstField(ctx, "numbers", "dice, as I say"),
        opponentField(ctx, (v) => v.against === "character"),
        { name: "vs_specialization", label: "Their specialization", kind: "text", optional: true, show: (v) => v.against === "character" },
        { name: "vs_pool", label: "Opponent's dice", kind: "number", value: 4, show: (v) => v.against !== "character" },
        // Their name, as the players' opposed test asks it (theirSide: a character's own when named from the table).
        { name: "opponent", label: "Opponent", kind: "text", optional: true, placeholder: "the guard", show: (v) => v.against !== "character" },
        { name: "target", label: "Successes to win", kind: "number", value: 5 },
        { name: "label", label: "What", kind: "text", optional: true, placeholder: "the chase" },
      ].filter(Boolean),
      build: (v) => ({ type: "start_contest", attribute: v.attribute, ...theirSide(v, "the opponent's dice", ctx), target: need(v, "target", "the target"),
        ...(v.specialization ? { specialization: v.specialization } : {}), ...(v.label ? { label: v.label } : {}) }) });
  }
  list.push({ id: "start_project", type: "start_project", label: "Start a project", title: "Start a project",
    fields: [
      { name: "name", label: "Project", kind: "text", placeholder: "restore the car" },
      { name: "target", label: "Successes needed", kind: "number", value: 10 },
      { name: "attribute", label: "Attribute", kind: "select", options: attrOptions, value: "intelligence" },
      { name: "interval", label: "Each roll takes", kind: "text", optional: true, placeholder: "a day" },
      { name: "reset", label: "A dramatic failure loses all progress", kind: "checkbox", value: false },
    ],
    build: (v) => {
      if (!v.name) throw new Error("Name the project.");
      return { type: "start_project", name: v.name, target: need(v, "target", "the successes needed"), attribute: v.attribute,
        ...(v.interval ? { interval: v.interval } : {}), ...(v.reset ? { reset_on_dramatic_failure: true } : {}) };
    } });
  list.push({ id: "say_yes", type: "say_yes", label: "Say yes", title: "Say yes: a success with no dice",
    fields: [{ name: "goal", label: "Goal", kind: "text", optional: true }],
    build: (v) => ({ type: "say_yes", ...(v.goal ? { goal: v.goal } : {}) }) });
  list.push({ id: "award_points", type: "award_points", label: "Award points", title: "Award points",
    fields: [{ name: "points", label: "Points", kind: "number", value: 2 },
      { name: "reason", label: "Reason", kind: "text", optional: true }],
    build: (v) => ({ type: "award_points", points: need(v, "points", "the points"), ...(v.reason ? { reason: v.reason } : {}) }) });
  list.push(...healthTools(track(state)));
  return list;
}

// --- the log -----------------------------------------------------------------------------------

export function describeAction(action) {
  switch (action.type) {
    case "test": return `${article(`${LABEL[action.attribute] || action.attribute} test`)}, difficulty ${action.difficulty || 1}`;
    case "opposed_test": return `an opposed ${LABEL[action.attribute] || action.attribute} test vs ${plural(action.vs_pool, "die", "dice")}`;
    case "contest_round": return "the next round of the race";
    case "project_roll": return `a roll for ${action.project}`;
    default: return action.type.replaceAll("_", " ");
  }
}

export function oddsText(type, odds) {
  if (type === "test") return testOdds(odds);
  if (type === "contest_round") return raceOdds(odds);
  return formatOdds(odds);
}

function chips(roll, cls = "") {
  return (roll.dice || []).map((d) => die(d.face, `${cls} ${d.successes === 2 ? "two" : d.successes === 1 ? "hit" : ""} ${d.face === 1 ? "one" : ""}`,
    d.successes === 2 ? "two successes" : d.successes === 1 ? "a success" : d.face === 1 ? "a 1" : ""));
}

// Each line's sentence is its event's declared one (rules/mdt/evolve.py, ctx.said()), which names the
// character (every member reads it, its player or not), never "you"; the module adds what only the
// table shows beside it: the dice, the outcome, the odds it had.
export function describe(ev, ctx) {
  const p = ev.payload;
  const who = ctx?.charName || ctx?.char?.name || "the character";
  switch (ev.type) {
    case "test_rolled":
      return {
        text: ctx.said(),
        dice: [diceGroup("", chips(p))],
        outcome: { label: OUTCOME[p.outcome] || p.outcome, tone: TONE[p.outcome] },
        detail: [hadOdds(p.odds), `exceptional at ${p.exceptional_at}`].join(" · "),
      };
    case "opposed_test_rolled":
      return {
        text: ctx.said(),
        dice: [diceGroup(who, chips(p.roll)), diceGroup(p.opponent || "them", chips(p.opponent_roll, "theirs"))],
        outcome: { label: `${OUTCOME[p.outcome] || p.outcome}${p.dramatic_failure ? " · dramatic failure" : ""}`, tone: TONE[p.outcome] },
        detail: hadOdds(p.odds, "win", "to win"),
      };
    case "contest_started": return { text: ctx.said(), tone: "gm" };
    case "contest_round_rolled":
      return {
        text: ctx.said(),
        dice: [diceGroup(who, chips(p.roll)), diceGroup(p.opponent_name || "them", chips(p.opponent_roll, "theirs"))],
        outcome: { label: OUTCOME[p.outcome] || p.outcome, tone: TONE[p.outcome] },
        detail: [hadOdds(p.odds, "win", "to win it this round"), p.dramatic_failure ? "dramatic failure" : ""].filter(Boolean).join(" · "),
      };
    case "contest_ended": return { text: ctx.said(), detail: p.reason || "" };
    case "project_started": return { text: ctx.said(), tone: "gm" };
    case "project_rolled":
      return {
        text: ctx.said(),
        dice: [diceGroup("", chips(p.roll))],
        outcome: { label: OUTCOME[p.outcome] || p.outcome, tone: TONE[p.outcome] },
        detail: [p.lost_progress ? "dramatic failure: progress lost" : p.dramatic_failure ? "dramatic failure" : "", hadOdds(p.odds, "complete", "to complete")].filter(Boolean).join(" · "),
      };
    case "project_abandoned": return { text: ctx.said(), detail: p.reason || "" };
    case "yes_said": return { text: ctx.said(), outcome: { label: "Success", tone: "good" }, tone: "gm" };
    case "points_awarded": return { text: ctx.said(), detail: p.reason || "", tone: "gm" };
    case "advance_bought": return { text: ctx.said() };
    default: return null;
  }
}

export function followUps(ev, state, ctx) {
  if (!ctx.canAct) return [];
  if ((ev.type === "contest_round_rolled" || ev.type === "contest_started") && state.contest && ctx.latest(ev, ["contest_round_rolled", "contest_started", "contest_ended"])) {
    return [ctx.act(`Next round (${state.contest.mine}–${state.contest.theirs} of ${state.contest.target})`, { type: "contest_round" }, { class: "primary" }),
      ctx.odds({ type: "contest_round" }, raceOdds),
      ctx.act("End the race", { type: "end_contest" }, { class: "secondary", ask: "End the race before anyone reaches the target?" })];
  }
  if (ev.type === "project_rolled" || ev.type === "project_started") {
    const name = ev.payload.project || ev.payload.name;
    const project = Object.values(state.projects || {}).find((p) => p.name === name);
    if (!project) return [];
    const seqs = ctx.laterEvents(ev).filter((e) => (e.type === "project_rolled" || e.type === "project_started") && (e.payload.project || e.payload.name) === name);
    if (seqs.length) return [];
    return [ctx.act(`Roll for ${name} (${project.progress}/${project.target})`, { type: "project_roll", project: name }, { class: "secondary" }),
      ctx.odds({ type: "project_roll", project: name }, (o) => oddsLine(o, [["complete", "complete"]]))];
  }
  return [];
}
