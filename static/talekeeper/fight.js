// A fight of several sides at the table (campaign/actions/fights.py, rules/fights.py): its sides and
// their numbers, each side's choice for the round by whoever controls it, the last round's exchanges
// with their odds, and the GM's start and end. The page starts from data.fight (up to its head); later
// events arrive over the socket, as every event does.
import { h, fill, askFirst, pct, plural } from "./ui.js";
import { conditionNote, conditionsOf, effectsOn, effectWords } from "./conditions.js";
import { platformField, state } from "./state.js";

const KIND_WORDS = { combat: "Combat", iterated: "Iterated contest", race: "Race", opposed: "Opposed test" };
const TEAMS = ["A", "B", "C", "D"];
const FIGHT_EVENTS = new Set(["fight_started", "fight_choice_made", "fight_round_rolled", "fight_ended"]);
// Each fight this page has read the start of (its seq -> its sides' teams and names): an ending names its
// winner's sides, not only the team letter the rules decide by.
const started = new Map();

// The system's kinds of fight and the rolls that deal damage (its hooks, rules/base.py), as declared.
const kindsOf = () => (state.declared.fights || []).map((k) => k.name);
const targetOf = (kind) => !!(state.declared.fights || []).find((k) => k.name === kind)?.target;
// What the system's table module says of its fights (systems/<name>.js `fights`, docs/table.md): the
// choice each kind asks of a side ("portions", "against" or "roll") and the attributes every side may roll.
const fightsOf = () => state.system?.fights || { choice: {}, attributes: null };
const choiceOf = (kind) => fightsOf().choice[kind] || "roll";
const damageRolls = () => state.declared.damageRolls || {};

const chance = (odds, key) => (odds && odds[key] ? pct(Number(odds[key].float)) : "");

// One exchange of a round in words: "Ana → Bandit: hit, 2 dice off (hit 62.1%)".
function exchangeText(x, name) {
  const who = `${name(x.by)} → ${name(x.against)}`;
  if (x.passive) return `${who}: ${x.total} vs DL ${x.passive.dl}, ${x.outcome} (${chance(x.odds, "success")} to succeed)`;
  if (x.sums) return `${who}: ${x.sums[0]} vs ${x.sums[1]}, ${x.outcome} (${chance(x.odds, "win")} to win)`;
  const off = x.damage ? `, ${plural(x.damage, "die", "dice")} off` : "";
  return `${who}: ${x.attack_sum} vs ${x.defence_sum}, ${x.outcome}${off} (${chance(x.odds, "hit")} to hit)`;
}

function roundLines(result, name) {
  if (!result) return [];
  if (result.exchanges) return result.exchanges.map((x) => exchangeText(x, name));
  // MdT: every side rolls; the odds are each side's chance to win this round.
  const totals = result.totals || Object.fromEntries(Object.entries(result.rolls || {}).map(([s, r]) => [s, r.successes]));
  return Object.entries(totals).map(([s, n]) => `${name(s)}: ${plural(n, "success", "successes")} (${chance(result.odds, s)} to win)`);
}

// The log's lines for a fight's events: each says its declared sentence (rules/common.py, `said`), and
// beside it what only the table names, from the event alone (a name the page does not know reads #id).
export function describeFight(ev, chars, said) {
  if (!FIGHT_EVENTS.has(ev.type)) return null;
  const p = ev.payload || {};
  const names = p.fight?.names || {};
  const name = (s) => chars.get(Number(s))?.name || names[s] || `#${s}`;
  switch (ev.type) {
    case "fight_started":
      started.set(ev.seq, p.fight || {});
      return { text: said(), detail: (p.fight?.order || []).map(name).join(", "), tone: "frame" };
    case "fight_choice_made":
      return { text: said() };
    case "fight_round_rolled": {
      // The conditions the round read, each side's total in the system's words (its `filled.fight.conditions`).
      const read = state.declared.conditions;
      const effects = read ? Object.entries(p.filled?.fight?.conditions || {})
        .map(([s, n]) => `${name(s)}'s conditions: ${effectWords(read.effect, n)}`) : [];
      return { text: said(), detail: [...roundLines(p.result, name), ...effects].join(" · ") };
    }
    default: {
      const fight = started.get(Number(p.fight));
      const team = Object.entries(fight?.teams || {}).filter(([, t]) => t === p.winner)
        .map(([s]) => chars.get(Number(s))?.name || fight.names?.[s] || `#${s}`);
      const winner = Number(p.winner) ? name(p.winner) : team.length ? team.join(" and ") : `team ${p.winner}`;
      return { text: said(), detail: p.winner ? `won by ${winner}` : "", tone: "frame" };
    }
  }
}

export function setUpFight({ data, chars, me, isGM, canAct, sendCommand, events, notice }) {
  const section = document.getElementById("fight");
  if (!section) return () => {};
  const pageHead = Number(data.head);
  let fight = data.fight ? { ...data.fight, chosen: new Set(data.fight.chosen || []) } : null;
  let error = "";

  const name = (s) => chars.get(Number(s))?.name || fight?.names?.[s] || `#${s}`;
  // A side is the member's to choose for: her own character; the GM's, an NPC.
  const mine = (s) => {
    const c = chars.get(Number(s));
    return !!c && canAct(c) && (isGM ? !!c.npc || c.owner === me.username : c.owner === me.username);
  };
  // A side counting dice is out with none left (rules/<system>/opposed.py `standing`).
  const standing = () => fight.order.filter((s) => !("dice" in fight.entries[s]) || fight.entries[s].dice > 0);

  function numbers(s) {
    const e = fight.entries[s];
    if ("dice" in e) return `${e.dice}D of ${e.start}D${e.penalty ? `, −${e.penalty}D next round` : ""}`;
    if ("mine" in e) return targetOf(fight.kind) ? `${e.mine} of ${fight.target}` : `${e.pool} dice`;
    return `+${e.bonus}${e.explodes ? ", 6s explode" : ""}`;
  }

  function choiceForm(s) {
    const others = standing().filter((o) => fight.teams[o] !== fight.teams[s]);
    const id = (what, o = "") => `fight-${s}-${what}${o ? `-${o}` : ""}`;
    const fields = [];
    const choice = choiceOf(fight.kind);
    if (choice === "portions") {
      const e = fight.entries[s];
      // Less its conditions' penalty dice (rules/conditions.py), which the round reads from its sheet.
      const penalty = conditionsOf(chars.get(Number(s))?.state).reduce((sum, c) => sum + (c.modifier || 0), 0);
      fields.push(h("p", { class: "small muted" }, `${Math.max(0, e.dice - e.penalty - penalty)}D to portion out`));
      for (const o of others) {
        fields.push(h("label", { for: id("attack", o) }, `Attack ${name(o)}`),
          h("input", { id: id("attack", o), name: `attack-${o}`, type: "number", min: 0, max: 40, value: 0, class: "num" }));
      }
      if (fight.settings.defence === "split") {
        for (const o of others) {
          fields.push(h("label", { for: id("defence", o) }, `Defence against ${name(o)}`),
            h("input", { id: id("defence", o), name: `defence-${o}`, type: "number", min: 0, max: 40, value: 0, class: "num" }));
        }
      } else {
        fields.push(h("label", { for: id("defence") }, "Defence"),
          h("input", { id: id("defence"), name: "defence", type: "number", min: 0, max: 40, value: 0, class: "num" }));
      }
    } else if (choice === "against") {
      for (const o of others) {
        fields.push(h("label", { class: "check" }, h("input", { type: "checkbox", name: `against-${o}`, checked: others.length === 1 }),
          ` Act against ${name(o)}`));
      }
    }
    // What its conditions change this round, before it chooses (the round reads them, rules/fights.py).
    const note = conditionNote(effectsOn(chars.get(Number(s))?.state, state.declared.conditions));
    if (note) fields.unshift(note);
    const label = choice === "roll" ? `Roll for ${name(s)}` : `Choose for ${name(s)}`;
    return h("form", {
      class: "stack tight fight-choice", "aria-label": `${name(s)}'s choice`,
      onsubmit: (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const action = { type: "choose_in_fight", character: Number(s) };
        if (choice === "portions") {
          action.attack = Object.fromEntries(others.map((o) => [o, Number(form[`attack-${o}`].value) || 0]).filter(([, n]) => n));
          action.defence = fight.settings.defence === "split"
            ? Object.fromEntries(others.map((o) => [o, Number(form[`defence-${o}`].value) || 0]).filter(([, n]) => n))
            : Number(form.defence.value) || 0;
        } else if (choice === "against") {
          action.against = others.filter((o) => form[`against-${o}`].checked).map(Number);
        }
        send(action);
      },
    }, h("h3", { class: "h4" }, name(s)), ...fields, h("button", { type: "submit" }, label));
  }

  function startForm() {
    const kinds = kindsOf();
    if (!kinds.length) return null;
    const candidates = [...chars.values()].filter((c) => !(c.npc && c.shown === "hidden"));
    const rows = candidates.map((c, i) => h("div", { class: "fight-side" },
      h("label", { class: "check" }, h("input", { type: "checkbox", name: `side-${c.id}` }), ` ${c.name}`),
      h("label", { for: `fight-team-${c.id}`, class: "sr-only" }, `${c.name}'s team`),
      h("select", { id: `fight-team-${c.id}`, name: `team-${c.id}` },
        ...TEAMS.map((t) => h("option", { value: t, selected: t === (c.npc ? "B" : "A") }, `Team ${t}`)))));
    const attrs = fightsOf().attributes;
    return h("details", { class: "fight-start" }, h("summary", {}, "Start a fight"),
      h("form", {
        class: "stack tight", autocomplete: "off",
        onsubmit: (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const extra = attrs ? { attribute: form.attribute.value } : {};
          const sides = candidates.filter((c) => form[`side-${c.id}`].checked)
            .map((c) => ({ character: c.id, team: form[`team-${c.id}`].value, ...extra }));
          const action = { type: "start_fight", kind: form.kind.value, sides, label: form.label.value.trim() || undefined };
          if (targetOf(form.kind.value)) action.target = Number(form.target.value);
          send(action);
        },
      },
      h("label", { for: "fight-label" }, "Name"),
      h("input", { id: "fight-label", name: "label", maxlength: platformField("start_fight", "label").maxLength,
        placeholder: "Ambush at the ford" }),
      h("label", { for: "fight-kind" }, "Kind"),
      h("select", { id: "fight-kind", name: "kind" }, ...kinds.map((k) => h("option", { value: k }, KIND_WORDS[k]))),
      kinds.some(targetOf) ? [h("label", { for: "fight-target" }, "Race to (successes)"),
        h("input", { id: "fight-target", name: "target", type: "number", min: platformField("start_fight", "target").min,
          max: platformField("start_fight", "target").max, value: 5, class: "num" })] : null,
      attrs ? [h("label", { for: "fight-attribute" }, "Everyone rolls"),
        h("select", { id: "fight-attribute", name: "attribute" }, ...attrs.map((a) => h("option", { value: a }, a)))] : null,
      h("fieldset", {}, h("legend", {}, "Sides and their teams"), ...rows),
      h("button", { type: "submit" }, "Start the fight")));
  }

  function render() {
    section.hidden = !fight && !(isGM && kindsOf().length);
    if (section.hidden) return;
    const err = h("p", { class: "error", role: "alert" }, error);
    if (!fight) {
      fill(section, h("h2", { id: "fight-title" }, "Fight"), startForm(), err);
      return;
    }
    const up = new Set(standing());
    const next = fight.round + 1;
    const sides = h("ul", { class: "fight-sides", "aria-label": "Sides" }, ...fight.order.map((s) => h("li", {
      class: up.has(s) ? "" : "out", dataset: { side: s },
    }, h("span", { class: "name" }, name(s)), ` · team ${fight.teams[s]} · ${numbers(s)}`,
    !up.has(s) ? " · out" : fight.chosen.has(s) ? ` · chose for round ${next}` : "")));
    const forms = [...up].filter((s) => mine(s) && !fight.chosen.has(s)).map(choiceForm);
    const last = fight.last ? h("div", { class: "fight-last" }, h("h3", { class: "h4" }, `Round ${fight.round}`),
      h("ul", {}, ...roundLines(fight.last, name).map((line) => h("li", { class: "small" }, line)))) : null;
    const end = isGM ? h("button", {
      type: "button", class: "secondary",
      onclick: (e) => askFirst(e.currentTarget, {
        question: `End the fight “${fight.label}”?`, yes: "Yes, end the fight", no: "No, keep fighting",
        onYes: () => send({ type: "end_fight" }),
      }),
    }, "End the fight") : null;
    fill(section,
      h("h2", { id: "fight-title" }, fight.label),
      h("p", { role: "status", class: "small" }, `${KIND_WORDS[fight.kind]}${fight.target ? ` to ${fight.target}` : ""} · round ${next}`),
      sides, last, ...forms, end, err);
  }

  function apply(ev) {
    const p = ev.payload || {};
    switch (ev.type) {
      case "fight_started":
        fight = { ...p.fight, seq: ev.seq, round: 0, chosen: new Set(), last: null };
        break;
      case "fight_choice_made":
        if (fight && !ev.hidden && p.round === fight.round + 1) fight.chosen.add(String(ev.character));
        break;
      case "fight_round_rolled":
        if (fight) Object.assign(fight, { round: p.round, entries: p.entries, last: p.result, chosen: new Set() });
        break;
      case "fight_ended":
        fight = null;
        break;
      default:
        return;
    }
    render();
  }

  async function send(action) {
    error = "";
    try {
      await sendCommand(action);
    } catch (problem) {
      error = problem.message;
      render();
    }
  }

  // The GM's "Apply to …" on a roll that deals damage: one click per side it may hit (the running
  // fight's other teams; else every other character, picked from a list).
  function applyButtons(ev) {
    const key = damageRolls()[ev.type];
    const amount = key && !ev.hidden && !ev.voided ? Number(ev.payload?.[key]) : 0;
    if (!isGM || !(amount >= 1)) return [];
    const applied = new Map([...events.values()].filter((e) => e.payload?.applies === ev.seq && !e.voided)
      .map((e) => [String(e.character), e.seq]));
    const roller = ev.character ? String(ev.character) : null;
    const inFight = fight && roller && fight.order.includes(roller);
    const targets = fight ? fight.order.filter((s) => s !== roller && (!inFight || fight.teams[s] !== fight.teams[roller]))
      : [...chars.values()].map((c) => String(c.id)).filter((s) => s !== roller);
    const send = async (target, button) => {
      button.disabled = true;
      notice("");
      try {
        await sendCommand({ type: "apply_damage", character: Number(target), roll: ev.seq });
      } catch (problem) {
        notice(problem.message);
        button.disabled = false;
      }
    };
    const done = targets.filter((s) => applied.has(s)).map((s) => h("span", { class: "muted small" },
      `applied to ${name(s)} in `, h("a", { href: `#seq-${applied.get(s)}` }, `#${applied.get(s)}`)));
    const open = targets.filter((s) => !applied.has(s));
    if (fight || open.length <= 3) {
      return [...open.map((s) => h("button", { type: "button", class: "small",
        onclick: (e) => send(s, e.currentTarget) }, `Apply ${amount} to ${name(s)}`)), ...done];
    }
    const pick = h("select", { "aria-label": `Whom roll #${ev.seq} hits` }, ...open.map((s) => h("option", { value: s }, name(s))));
    return [pick, h("button", { type: "button", class: "small", onclick: (e) => send(pick.value, e.currentTarget) },
      `Apply ${amount}`), ...done];
  }

  render();
  const onEvent = (ev) => { if (ev.seq > pageHead && FIGHT_EVENTS.has(ev.type)) apply(ev); };
  onEvent.applyButtons = applyButtons;
  onEvent.charactersChanged = () => { if (!fight) render(); };
  return onEvent;
}
