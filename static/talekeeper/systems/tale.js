// Tale RPG at the table: pools of d6 summed; straight rolls against a target or rolled
// challenge dice; iterated contests (hiding, chases) and combat with attack/defence
// portions, round by round; damage spread over primary + Skill, recovered by rest.

import { h, cap, need, againstField, opponentField, pricedOption, firstOpen, oddsLine, hadOdds, die, diceGroup, signed, pointsBlock, formatOdds, words, plural, article } from "../ui.js";
import { conditionsOf } from "../conditions.js";

export const name = "tale";
// The declared actions this module lays out itself (a sheet button, a GM tool, a choice on a roll):
// the page builds a form from the declaration alone for any other (docs/table.md).
export const handles = ["straight_roll", "start_contest", "iterated_round", "end_contest", "start_combat", "combat_round", "assign_damage", "take_damage", "hide", "rest", "buy_advance", "award_points", "impose_penalty"];

const CHARS = ["brawn", "deft", "clever", "skill", "wisecrack"];
// Fights of several sides (fight.js; rules/tale/opposed.py): a combat side portions its dice, an iterated
// contest's side picks whom it rolls against; each side's pool is read from its sheet.
export const fights = { choice: { combat: "portions", iterated: "against" }, attributes: null };
const BUILT_IN = { Jump: ["deft", "skill"], Hide: ["clever", "deft"], "Spot Hidden": ["clever", "skill"] };
const PLACES = { open_space: 10, light_undergrowth: 6, heavy_undergrowth: 4, heavy_forest: 2 };
const DIFFICULTY = [["trivial", 2], ["almost trivial", 3], ["very easy", 4], ["easy", 5], ["normal", 6], ["hard", 7],
  ["difficult", 8], ["very difficult", 9], ["extremely difficult", 10]];

const current = (state, c) => Math.max(0, state.sheet.characteristics[c] - (state.damage[c] || 0));
// A contest started with no "What" has an empty label (hiding and combat get one from the rules): its
// lines then say "the contest", not ", round 1".
const named = (p) => p.label || "the contest";
const damageTargets = (state) => (state.sheet.primary === "skill" ? ["skill"] : [state.sheet.primary, "skill"]);

function skills(state) {
  const list = Object.entries(state.sheet.skills || {}).map(([n, s]) => ({ name: n, pair: s.characteristics, dice: s.dice || 0 }));
  for (const [n, pair] of Object.entries(BUILT_IN)) {
    if (!list.some((s) => s.name.toLowerCase() === n.toLowerCase())) list.push({ name: n, pair, dice: 0, builtIn: true });
  }
  return list.map((s) => ({ ...s, pool: current(state, s.pair[0]) + current(state, s.pair[1]) + s.dice }));
}

// A state's conditions' penalty dice (docs/rules.md, Conditions 1): 0 for a state this page lacks.
const penaltyDice = (state) => Math.max(0, conditionsOf(state).reduce((sum, c) => sum + (c.modifier || 0), 0));

// What each side may portion out this combat round, as the server reads it (rules/tale/odds.py
// `available`): its dice less its exhaustion penalties and its conditions' penalty dice, the
// opponent's from its sheet when it is a character at the table (Conditions 7; dice given as numbers
// have no sheet). `ctx.char` is the contest's character.
function available(contest, ctx) {
  const pen = { mine: penaltyDice(ctx.char?.state), theirs: contest.opponent ? penaltyDice(ctx.stateOf?.(contest.opponent)) : 0 };
  for (const p of contest.penalties || []) pen[p.side] += p.dice;
  return { mine: Math.max(0, contest.mine - pen.mine), theirs: Math.max(0, contest.theirs - pen.theirs) };
}

// --- the sheet ---------------------------------------------------------------------------

export function renderSheet(state, ctx) {
  const s = state.sheet;
  const role = (c) => (c === s.primary ? " (primary)" : c === s.secondary ? " (secondary)" : "");
  const chars = h("table", { class: "attr-table" },
    h("caption", { class: "sr-only" }, "Characteristics: rating, damage and the dice each gives now"),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "Characteristic"), h("th", { scope: "col", class: "num" }, "D"),
      h("th", { scope: "col", class: "num" }, "Dmg"), h("th", { scope: "col", class: "num" }, "Now"))),
    h("tbody", null, CHARS.map((c) => h("tr", null,
      h("th", { scope: "row" }, cap(c), h("span", { class: "muted small" }, role(c))),
      h("td", { class: "num" }, s.characteristics[c]),
      h("td", { class: "num" }, state.damage[c] ? h("b", { class: "bad-text" }, `−${state.damage[c]}`) : "–"),
      h("td", { class: "num" }, h("b", null, `${current(state, c)}D`))))));
  const skillRows = h("table", { class: "attr-table" },
    h("caption", { class: "sr-only" }, "Skills and their pools; each button rolls it"),
    h("tbody", null, skills(state).map((sk) => h("tr", null,
      h("td", null, ctx.button(`roll:${sk.name}`, [sk.name, " ", h("b", null, `${sk.pool}D`), h("span", { class: "sr-only" }, `: roll ${plural(sk.pool, "die", "dice")}`)])),
      h("td", { class: "muted small" }, `${cap(sk.pair[0])} + ${cap(sk.pair[1])}${sk.dice ? ` + ${sk.dice}D` : ""}`)))));
  const c = state.contest;
  let contest = null;
  if (c) {
    const av = available(c, ctx);
    // The character by name: every member reads this sheet, its player or not.
    const who = ctx.char?.name || "The character";
    contest = h("div", { class: "box contest" },
      h("h3", null, c.label ? `${cap(c.kind)}: ${c.label}` : `${cap(c.kind)} contest`),
      h("div", { class: "race" },
        h("span", null, who), h("progress", { max: Math.max(c.start_mine, 1), value: c.mine, "aria-label": `${who}'s dice` }), h("b", null, `${c.mine}D`),
        h("span", null, "Them"), h("progress", { max: Math.max(c.start_theirs, 1), value: c.theirs, "aria-label": "their dice" }), h("b", null, `${c.theirs}D`)),
      h("p", { class: "small muted" }, `Round ${c.round}${c.rounds_left !== null && c.rounds_left !== undefined ? ` · ${c.rounds_left} left` : ""}`,
        c.kind === "combat" ? ` · damage taken ${c.damage_taken}, dealt ${c.damage_dealt} · available ${av.mine}D vs ${av.theirs}D` : "",
        (c.penalties || []).length ? ` · penalties: ${c.penalties.map((p) => `${p.side === "mine" ? who : "them"} −${p.dice}D (${p.why})`).join(", ")}` : ""),
      h("div", { class: "buttons" },
        ctx.button(c.kind === "combat" ? "combat_round" : "iterated_round", c.kind === "combat" ? "Fight a round" : "Next round"),
        ctx.button("end_contest", "End it")));
  }
  return h("div", { class: "sheet-tale" },
    s.archetype ? h("p", { class: "aspect" }, h("span", { class: "label" }, "Archetype "), s.archetype) : null,
    state.unassigned_damage ? h("p", { class: "warn" }, `${state.unassigned_damage}D of damage to spread over ${damageTargets(state).join(" and ")}. `,
      ctx.button("assign_damage", "Spread damage")) : null,
    contest,
    chars,
    h("h3", { class: "h4" }, "Skills"),
    skillRows,
    pointsBlock(state.points, "Points"));
}

// --- actions -------------------------------------------------------------------------------

const successOdds = (o) => oddsLine(o, [["success", "success"]]);
const challengeFields = (ctx, type) => [
  { name: "against", label: "Against", kind: "select", value: ctx.last(type, "against", "target"),
    options: [{ value: "target", label: "a target number" }, { value: "dice", label: "challenge dice (rolled)" }] },
  { name: "target", label: "Target", kind: "number", value: ctx.last(type, "target", 14), show: (v) => v.against !== "dice" },
  { name: "vs_pool", label: "Challenge dice", kind: "select", numeric: true, value: ctx.last(type, "vs_pool", 6), show: (v) => v.against === "dice",
    options: DIFFICULTY.map(([n, d]) => ({ value: d, label: `${d}D ${n}` })) },
  { name: "average", label: "Use the average (no roll for the challenge)", kind: "checkbox", value: false, show: (v) => v.against === "dice" },
  { name: "on_tie", label: "A tie", kind: "select", value: "failure", show: (v) => v.against === "dice" && !v.average,
    options: [{ value: "failure", label: "fails" }, { value: "success", label: "succeeds" }] },
];
const challenge = (v) => (v.against === "dice"
  ? { vs_pool: need(v, "vs_pool", "the challenge dice"), ...(v.average ? { average: true } : {}), ...(v.on_tie === "success" ? { on_tie: "success" } : {}) }
  : { target: need(v, "target", "the target") });

function rollSpec(state, sk, ctx) {
  return {
    id: `roll:${sk.name}`, type: "straight_roll", group: "Straight rolls", label: `${sk.name} ${sk.pool}D`, title: `${sk.name}: straight roll`,
    rolls: true, preview: true, requestable: true,
    help: `${sk.pool}D: ${cap(sk.pair[0])} ${current(state, sk.pair[0])} + ${cap(sk.pair[1])} ${current(state, sk.pair[1])}${sk.dice ? ` + ${sk.dice}D skill` : ""}, summed.`,
    fields: challengeFields(ctx, "straight_roll"),
    build: (v) => ({ type: "straight_roll", skill: sk.name, ...challenge(v) }),
    odds: successOdds,
  };
}

export function actions(state, ctx) {
  // The GM acts for any character from its sheet: a form names the character, never "you".
  const name = ctx.char.name;
  const s = state.sheet;
  const list = skills(state).map((sk) => rollSpec(state, sk, ctx));
  const pairOptions = CHARS.map((c) => ({ value: c, label: `${cap(c)} (${current(state, c)}D)` }));
  list.push({
    id: "roll:pair", type: "straight_roll", group: "Straight rolls", label: "Two characteristics", title: "Straight roll: two characteristics",
    rolls: true, preview: true, requestable: true,
    fields: [
      { name: "a", label: "First", kind: "select", options: pairOptions, value: s.primary },
      { name: "b", label: "Second", kind: "select", options: pairOptions, value: s.secondary },
      ...challengeFields(ctx, "straight_roll"),
    ],
    build: (v) => {
      if (v.a === v.b) throw new Error("Pick two different characteristics.");
      return { type: "straight_roll", characteristics: [v.a, v.b], ...challenge(v) };
    },
    odds: successOdds,
  });
  const c = state.contest;
  if (!c) {
    list.push({
      id: "hide", type: "hide", group: "Contests", label: "Hide", title: "Hide (then maybe an iterated contest)",
      rolls: true, preview: true, requestable: true,
      fields: [
        { name: "place", label: "Where", kind: "select", value: "light_undergrowth",
          options: Object.entries(PLACES).map(([p, d]) => ({ value: p, label: `${words(p)} (${d}D)` })) },
        { name: "seeker_pool", label: "Seeker's dice (optional)", kind: "number", optional: true, value: "" },
        { name: "rounds", label: "Rounds to hold out", kind: "number", optional: true, value: "" },
      ],
      build: (v) => ({ type: "hide", place: v.place, ...(v.seeker_pool ? { seeker_pool: v.seeker_pool } : {}), ...(v.rounds ? { rounds: v.rounds } : {}) }),
      odds: successOdds,
    });
    list.push({
      id: "start_contest", type: "start_contest", group: "Contests", label: "Start a contest", title: "Start an iterated contest",
      help: "Both sides roll each round; the loser's dice are knocked out high to low.",
      fields: [
        { name: "skill", label: "Pool", kind: "select", value: "",
          options: [{ value: "", label: `${cap(s.primary)} + ${cap(s.secondary)}` }, ...skills(state).map((sk) => ({ value: sk.name, label: `${sk.name} (${sk.pool}D)` }))] },
        againstField(ctx, "numbers", "their dice, as I say"),
        // Named from the table: their pool comes from their own sheet, for the same skill (rules/contests.py).
        opponentField(ctx, (v) => v.against === "character"),
        { name: "vs_skill", declared: "skill", label: "Their skill", kind: "text", optional: true, placeholder: "the same", show: (v) => v.against === "character" },
        { name: "vs_pool", label: "Their dice", kind: "number", value: 6, show: (v) => v.against !== "character" },
        { name: "rounds", label: "Round limit", kind: "number", optional: true, value: "" },
        { name: "at_time_out", label: "At the limit", kind: "select", value: "none", show: (v) => !!v.rounds,
          options: [{ value: "none", label: "nobody wins" }, { value: "mine", label: `${name} wins` }, { value: "theirs", label: "they win" }] },
        { name: "label", label: "What", kind: "text", optional: true, placeholder: "the chase" },
      ].filter(Boolean),
      build: (v) => ({ type: "start_contest", ...(v.against === "character"
        ? { vs_character: need(v, "vs_character", "the opponent"), ...(v.vs_skill ? { vs_skill: v.vs_skill } : {}) }
        : { vs_pool: need(v, "vs_pool", "their dice") }), ...(v.skill ? { skill: v.skill } : {}),
        ...(v.rounds ? { rounds: v.rounds, at_time_out: v.at_time_out } : {}), ...(v.label ? { label: v.label } : {}) }),
    });
    list.push({
      id: "start_combat", type: "start_combat", group: "Contests", label: "Start a combat", title: "Start a combat",
      help: `${name}'s pool: ${damageTargets(state).map(cap).join(" + ")}${s.secondary !== "skill" ? `, + ${cap(s.secondary)} if the GM allows` : ""}.`,
      fields: [
        againstField(ctx, "numbers", "their dice, as I say"),
        opponentField(ctx, (v) => v.against === "character"),
        { name: "their_pool", label: "Their dice", kind: "number", value: 6, show: (v) => v.against !== "character" },
        // A secondary that is Skill is in the pool already (docs/rules.md, Tale reading 22): nothing to add.
        ...(s.secondary !== "skill" ? [{ name: "with_secondary", label: `Add ${cap(s.secondary)} (secondary)`, kind: "checkbox", value: false }] : []),
        { name: "label", label: "Opponent", kind: "text", optional: true, placeholder: "the bandit", show: (v) => v.against !== "character" },
      ].filter(Boolean),
      build: (v) => {
        // A character at the table: its pool from its sheet, and its name for the combat's.
        const named = v.against === "character" ? ctx.opponents.find((o) => o.value === v.vs_character)?.label : null;
        const label = named || v.label;
        return { type: "start_combat", ...(v.against === "character" ? { vs_character: need(v, "vs_character", "the opponent") }
          : { their_pool: need(v, "their_pool", "their dice") }), ...(v.with_secondary ? { with_secondary: true } : {}),
          ...(label ? { label } : {}) };
      },
    });
  } else if (c.kind === "combat") {
    list.push({ ...combatSpec(c, ctx), id: "combat_round", group: "Contest", label: "Fight a round" });
  } else {
    list.push({ id: "iterated_round", type: "iterated_round", group: "Contest", label: "Next round", title: `${c.label}: next round`,
      rolls: true, preview: true, requestable: true, fields: [], submit: "Roll the round",
      build: () => ({ type: "iterated_round" }), odds: (o) => oddsLine(o, [["win", "win"], ["tie", "tie"], ["lose", "lose"]]) });
  }
  if (c) {
    list.push({ id: "end_contest", type: "end_contest", group: "Contest", label: "End the contest", title: `End ${c.label}`,
      fields: [
        { name: "winner", label: "Winner", kind: "select", value: "none",
          options: [{ value: "none", label: "nobody (undecided)" }, { value: "mine", label: name }, { value: "theirs", label: "them" }] },
        { name: "reason", label: "Why", kind: "text", optional: true }],
      build: (v) => ({ type: "end_contest", winner: v.winner, ...(v.reason ? { reason: v.reason } : {}) }) });
  }
  if (state.unassigned_damage) list.push({ ...assignSpec(state), id: "assign_damage", group: "Damage", label: "Spread damage" });
  if (!c && !state.unassigned_damage && Object.values(state.damage).some(Boolean)) {
    list.push({ id: "rest", type: "rest", group: "Damage", label: "Rest", title: "Full rest: 1D back per damaged characteristic per day",
      fields: [{ name: "days", label: "Days", kind: "number", value: 1 }],
      build: (v) => ({ type: "rest", days: need(v, "days", "the days") }) });
  }
  // Priced by the server (ctx.advances, rules/tale/actions.py advances): each choice says its cost,
  // and one the points don't cover (or at its maximum) can't be picked. A new skill's price may
  // depend on its two characteristics (setting skill_die_cost), so each pair says its own.
  const avail = state.points.earned - state.points.spent;
  const prices = ctx.advances || {};
  const raise = CHARS.map((ch) => pricedOption(ch, `${cap(ch)} ${s.characteristics[ch]}D`, prices.characteristic?.[ch], avail));
  const known = Object.keys(prices.skill || { ...s.skills, ...BUILT_IN });
  const skillChoices = [...known.map((k) => pricedOption(k, `${k} +${s.skills?.[k]?.dice ?? 0}D`, prices.skill?.[k], avail)),
    { value: "", label: "a new skill" }];
  const pairs = CHARS.flatMap((a, i) => CHARS.slice(i + 1).map((b) => pricedOption(`${a}+${b}`, `${cap(a)} + ${cap(b)}`,
    prices.new_skill?.[`${a}+${b}`], avail)));
  list.push({
    id: "buy_advance", type: "buy_advance", group: "Advance", label: `Buy an advance (${avail} pts)`,
    title: "Buy an advance", help: "A characteristic to N D costs N points; a skill to +N D costs half, rounded up.",
    fields: [
      { name: "kind", label: "Raise", kind: "select", value: "characteristic",
        options: [{ value: "characteristic", label: "a characteristic" }, { value: "skill", label: "a skill" }] },
      { name: "characteristic", label: "Characteristic", kind: "select", show: (v) => v.kind === "characteristic", options: raise, value: firstOpen(raise) },
      { name: "skill", label: "Skill", kind: "select", show: (v) => v.kind === "skill", options: skillChoices, value: firstOpen(skillChoices) },
      { name: "new_skill", declared: "skill", label: "New skill", kind: "text", optional: true, show: (v) => v.kind === "skill" && !v.skill },
      { name: "pair", label: "Based on", kind: "select", options: pairs, value: firstOpen(pairs), show: (v) => v.kind === "skill" && !v.skill },
    ],
    build: (v) => {
      if (v.kind === "characteristic") return { type: "buy_advance", characteristic: v.characteristic };
      if (v.skill) return { type: "buy_advance", skill: v.skill };
      if (!v.new_skill) throw new Error("Name the skill.");
      return { type: "buy_advance", skill: v.new_skill, characteristics: v.pair.split("+") };
    },
  });
  return list;
}

function combatSpec(c, ctx) {
  const av = available(c, ctx);
  const half = (n) => Math.floor(n / 2);
  return {
    type: "combat_round", title: `${c.label}: a combat round`, rolls: true, preview: true, submit: "Fight",
    help: `Split ${ctx.char.name}'s ${av.mine}D and their ${av.theirs}D into attack and defence; the rest does nothing.`,
    fields: [
      { name: "attack", label: "Attack", kind: "number", max: av.mine, value: ctx.last?.("combat_round", "attack", null) ?? Math.ceil(av.mine / 2) },
      { name: "defence", label: "Defence", kind: "number", max: av.mine, value: half(av.mine) },
      { name: "their_attack", label: "Their attack", kind: "number", max: av.theirs, value: Math.ceil(av.theirs / 2) },
      { name: "their_defence", label: "Their defence", kind: "number", max: av.theirs, value: half(av.theirs) },
    ],
    build: (v) => {
      const a = { type: "combat_round", attack: v.attack || 0, defence: v.defence || 0, their_attack: v.their_attack || 0, their_defence: v.their_defence || 0 };
      if (a.attack + a.defence > av.mine) throw new Error(`Attack + defence can't pass ${av.mine}D.`);
      if (a.their_attack + a.their_defence > av.theirs) throw new Error(`Their attack + defence can't pass ${av.theirs}D.`);
      return a;
    },
    odds: (o) => [oddsLine(o, [["my_hit", `${ctx.char.name} hits`]]), oddsLine(o, [["their_hit", "they hit"]])].filter(Boolean).join(", "),
  };
}

// ``live`` gives the character's state at submit time: more damage may arrive while the form is open.
function assignSpec(state, live = () => state) {
  const targets = damageTargets(state);
  const owed = state.unassigned_damage;
  return {
    type: "assign_damage", title: `Spread ${owed}D of damage`, submit: "Spread it",
    help: `Exactly ${owed}D over ${targets.join(" and ")}.`,
    fields: targets.map((t, i) => ({ name: t, declared: `damage.${t}`, label: `${cap(t)} (now ${current(state, t)}D)`, kind: "number", max: current(state, t),
      value: i === 0 ? Math.min(Math.ceil(owed / targets.length), current(state, t)) : owed - Math.min(Math.ceil(owed / targets.length), current(state, targets[0])) })),
    build: (v) => {
      const damage = {};
      for (const t of targets) if (v[t]) damage[t] = v[t];
      const total = Object.values(damage).reduce((a, b) => a + b, 0);
      const owedNow = live().unassigned_damage;
      if (total !== owedNow) throw new Error(`Spread exactly ${owedNow}D (now ${total}D).`);
      return { type: "assign_damage", damage };
    },
  };
}

export function gmTools(state) {
  const list = [
    { id: "take_damage", type: "take_damage", label: "Deal damage", title: "Damage outside combat (falls, traps)",
      fields: [{ name: "dice", label: "Dice of damage", kind: "number", value: 1 },
        { name: "reason", label: "Reason", kind: "text", optional: true, placeholder: "fell off the wall" }],
      build: (v) => ({ type: "take_damage", dice: need(v, "dice", "the damage"), ...(v.reason ? { reason: v.reason } : {}) }) },
    { id: "award_points", type: "award_points", label: "Award points", title: "Award advancement points",
      fields: [{ name: "points", label: "Points", kind: "number", value: 3 },
        { name: "reason", label: "Reason", kind: "text", value: "a good session" }],
      build: (v) => {
        if (!v.reason) throw new Error("Say why (Tale awards need a reason).");
        return { type: "award_points", points: need(v, "points", "the points"), reason: v.reason };
      } },
  ];
  if (state.contest?.kind === "combat") {
    list.push({ id: "impose_penalty", type: "impose_penalty", label: "Impose a penalty", title: "Exhaustion penalty",
      fields: [{ name: "dice", label: "Dice", kind: "number", value: 1 },
        { name: "side", label: "On", kind: "select", value: "mine", options: [{ value: "mine", label: "this character" }, { value: "theirs", label: "the opponent" }] },
        { name: "rounds", label: "Rounds", kind: "number", value: 1 },
        { name: "reason", label: "Why", kind: "text", optional: true }],
      build: (v) => ({ type: "impose_penalty", dice: need(v, "dice", "the dice"), side: v.side, rounds: v.rounds || 1, ...(v.reason ? { reason: v.reason } : {}) }) });
  }
  return list;
}

// --- the log -----------------------------------------------------------------------------------

export function describeAction(action) {
  const against = action.vs_pool ? `${action.vs_pool}D` : `${action.target}`;
  switch (action.type) {
    case "straight_roll": return `${article(`${action.skill || (action.characteristics || []).map(cap).join(" + ") || "straight"} roll`)} vs ${against}`;
    case "hide": return `a Hide roll (${words(action.place || `${action.challenge}D`)})`;
    case "iterated_round": return "the next round";
    case "combat_round": return "a combat round";
    default: return words(action.type);
  }
}

export function oddsText(type, odds) {
  if (type === "straight_roll" || type === "hide") return successOdds(odds);
  if (type === "iterated_round") return oddsLine(odds, [["win", "win"], ["tie", "tie"], ["lose", "lose"]]);
  return formatOdds(odds);
}

const faces = (list, cls = "") => (list || []).map((f) => die(f, cls));

// Each line's sentence is its event's declared one (rules/tale/evolve.py, ctx.said()), which names the
// character (every member reads it, its player or not), never "you"; the module adds what only the
// table shows beside it: the dice, the outcome, the margin and the odds, the damage spread.
export function describe(ev, ctx) {
  const p = ev.payload;
  const who = ctx?.charName || ctx?.char?.name || "the character";
  const dice = (entries, sign) => Object.entries(entries || {}).map(([k, n]) => `${cap(k)} ${sign}${n}D`).join(", ");
  switch (ev.type) {
    case "straight_rolled":
    case "hide_rolled":
      return {
        text: ctx.said(),
        dice: [diceGroup("", faces(p.dice, "sel")), p.challenge_dice?.length ? diceGroup("challenge", faces(p.challenge_dice, "theirs")) : null],
        outcome: { label: cap(p.outcome), tone: p.success ? "good" : "bad" },
        detail: [`margin ${signed(p.margin)}`, hadOdds(p.odds), p.defaulted ? "defaulted to primary + secondary" : ""].filter(Boolean).join(" · "),
      };
    case "contest_started": return { text: ctx.said() };
    case "round_rolled": {
      const elim = p.eliminated;
      return {
        text: ctx.said(),
        dice: [diceGroup(who, faces(p.sorted.mine, "sel")), diceGroup("them", faces(p.sorted.theirs, "theirs"))],
        outcome: { label: p.outcome === "tie" ? "Tie" : p.outcome === "win" ? "Won the round" : "Lost the round", tone: p.outcome === "win" ? "good" : p.outcome === "lose" ? "bad" : "neutral" },
        detail: [`knocked out: ${who} ${elim.mine}, them ${elim.theirs}`, `now ${p.mine_after}D vs ${p.theirs_after}D`,
          p.rounds_left !== null && p.rounds_left !== undefined ? `${p.rounds_left} rounds left` : "", hadOdds(p.odds, "win", "to win")].filter(Boolean).join(" · "),
      };
    }
    case "combat_round_rolled":
      return {
        text: ctx.said(),
        dice: [diceGroup(`${who}'s attack`, faces(p.dice.my_attack, "sel")), diceGroup("defence", faces(p.dice.my_defence)),
          diceGroup("their attack", faces(p.dice.their_attack, "theirs")), diceGroup("defence", faces(p.dice.their_defence, "theirs"))],
        outcome: { label: `dealt ${p.damage.to_them}D, took ${p.damage.to_me}D`, tone: p.damage.to_them > p.damage.to_me ? "good" : p.damage.to_me > p.damage.to_them ? "bad" : "neutral" },
        detail: [`now ${p.mine_after}D vs ${p.theirs_after}D`, `portions: ${who} ${p.portions.mine.attack}/${p.portions.mine.defence}, them ${p.portions.theirs.attack}/${p.portions.theirs.defence}`].join(" · "),
      };
    case "contest_ended":
      return { text: ctx.said(),
        outcome: p.winner ? { label: p.winner === "mine" ? "Won" : "Lost", tone: p.winner === "mine" ? "good" : "bad" } : null,
        detail: [p.damage_to_assign ? `${p.damage_to_assign}D of damage to spread` : "", p.why || ""].filter(Boolean).join(" · ") };
    case "penalty_imposed": return { text: ctx.said(), detail: p.penalty.why, tone: "gm" };
    case "damage_taken":
      return { text: ctx.said(), detail: [p.taken < p.dice ? `of ${p.dice}D` : "", p.reason, `${p.unassigned_after}D to spread`].filter(Boolean).join(" · "), tone: "gm" };
    case "damage_assigned": return { text: ctx.said(), detail: dice(p.damage, "−") };
    case "rested": return { text: ctx.said(), detail: dice(p.recovered, "+") || "nothing to recover" };
    case "points_awarded": return { text: ctx.said(), detail: p.reason || "", tone: "gm" };
    case "advance_bought": return { text: ctx.said() };
    default: return null;
  }
}

const CONTEST_EVENTS = ["contest_started", "round_rolled", "combat_round_rolled", "contest_ended", "hide_rolled"];

export function followUps(ev, state, ctx) {
  if (!ctx.canAct) return [];
  const c = state.contest;
  if (CONTEST_EVENTS.includes(ev.type) && c && ctx.latest(ev, CONTEST_EVENTS)) {
    const out = [];
    if (c.kind === "combat") out.push(ctx.form(combatSpec(c, ctx)));
    else {
      out.push(ctx.act(`Next round (${c.mine}D vs ${c.theirs}D)`, { type: "iterated_round" }, { class: "primary" }));
      out.push(ctx.odds({ type: "iterated_round" }, (o) => oddsLine(o, [["win", "win"], ["lose", "lose"]])));
    }
    // One click ended it, undecided, for good: asked first (a winner is chosen from the sheet's "End it").
    out.push(ctx.act("End the contest", { type: "end_contest" }, { class: "secondary", ask: `End the ${c.kind === "iterated" ? "contest" : c.kind === "hide" ? "hiding" : c.kind}${c.label ? ` (${c.label})` : ""} with nobody winning?` }));
    return out;
  }
  if (state.unassigned_damage && ["contest_ended", "damage_taken", "combat_round_rolled"].includes(ev.type)
      && ctx.latest(ev, ["contest_ended", "damage_taken", "combat_round_rolled", "damage_assigned"]) && !c) {
    return [ctx.form(assignSpec(state, () => ctx.char?.state || state))];
  }
  return [];
}
