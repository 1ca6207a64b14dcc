// The running encounter at the table: turn order, whose turn, and the acting member's controls
// brought to the front on their turn (docs/table.md, "Encounters"). The page starts from
// data.encounter (folded up to its head); later events arrive over the socket, as every event does.
// The fold mirrors rules/encounter.py.
import { h, fill, askFirst } from "./ui.js";
import { conditionsInline } from "./conditions.js";

const GM_TURN = 0; // the GM's turn's place in the order (rules/encounter.py)

export function setUpEncounter({ data, chars, me, isGM, canAct, sendCommand, selectCharacter, announce }) {
  const section = document.getElementById("encounter");
  if (!section) return () => {};
  const pageHead = Number(data.head);
  let encounter = data.encounter || null;
  const list = document.getElementById("turn-order");
  const round = document.getElementById("encounter-round");
  const err = document.getElementById("encounter-error");
  const endTurn = document.getElementById("end-turn");
  const heroPanel = document.getElementById("hero-panel");

  function mine(id) {
    const c = chars.get(id);
    return !!c && canAct(c) && (!isGM || c.owner === me.username);
  }

  function render() {
    section.hidden = !encounter;
    document.getElementById("encounter-start")?.toggleAttribute("hidden", !!encounter);
    document.getElementById("encounter-add")?.toggleAttribute("hidden", !encounter);
    if (!encounter) {
      heroPanel?.classList.remove("my-turn");
      return;
    }
    document.getElementById("encounter-title").textContent = encounter.name;
    round.textContent = encounter.round ? `Round ${encounter.round}` : "Not started: the GM gives the first turn";
    const ids = encounter.combatants.map((c) => c.character);
    fill(list, ...encounter.combatants.map((c, i) => h("li", {
      class: c.character === encounter.acting ? "acting" : "",
      "aria-current": c.character === encounter.acting ? "true" : null,
      dataset: { character: c.character },
    }, h("span", { class: "name" }, c.name),
    c.character === encounter.acting ? h("span", { class: "small" }, " · acting") : null,
    conditionsInline(chars.get(c.character)?.state),
    // No rule text has an initiative rule: the GM orders the turns (docs/rules.md, platform 11).
    isGM && i > 0 ? h("button", {
      type: "button", class: "small ghost", "aria-label": `Move ${c.name} up`,
      onclick: () => send({ type: "set_turn_order", order: [...ids.slice(0, i - 1), ids[i], ids[i - 1], ...ids.slice(i + 1)] }),
    }, "↑") : null)));
    const myTurn = encounter.acting !== null && mine(encounter.acting);
    endTurn.hidden = !myTurn || isGM;
    heroPanel?.classList.toggle("my-turn", myTurn);
    const add = document.getElementById("encounter-character");
    if (add) {
      const inIt = new Set(encounter.combatants.map((c) => c.character));
      const chosen = add.value; // a re-render (any event) must not undo the GM's choice
      // Only what may be added: an NPC the players may not see acts in the GM's turn (rules/encounter.py
      // GM_TURN), one neutral slot that says neither who nor how many.
      const left = [...chars.values()].filter((c) => !inIt.has(c.id) && !(c.npc && c.shown === "hidden"));
      const options = left.map((c) => h("option", { value: c.id }, c.name));
      const kept = [...chars.values()].some((c) => c.npc && c.shown === "hidden"); // what the slot is for
      if (kept && !inIt.has(GM_TURN)) options.push(h("option", { value: "gm" }, "GM's turn (your hidden NPCs act in it)"));
      // An empty list and an Add that did nothing said nothing: the list says why it is empty.
      fill(add, ...(options.length ? options : [h("option", { value: "" }, "Every character is in it")]));
      add.disabled = !options.length;
      add.form.querySelector("button").disabled = !options.length;
      if ([...add.options].some((o) => o.value === chosen)) add.value = chosen;
    }
  }

  function apply(ev) {
    const p = ev.payload || {};
    switch (ev.type) {
      case "encounter_started":
        encounter = { name: p.name, combatants: [], round: 0, turn: null, acting: null };
        break;
      case "combatant_added":
        encounter?.combatants.push({ character: p.character, name: p.name });
        break;
      case "turn_order_set":
        if (encounter) {
          const byId = new Map(encounter.combatants.map((c) => [c.character, c]));
          encounter.combatants = p.order.map((id) => byId.get(id)).filter(Boolean);
        }
        break;
      case "turn_advanced":
        if (encounter) {
          Object.assign(encounter, { round: p.round, turn: p.turn, acting: p.acting });
          if (mine(p.acting)) {
            // Your turn: your character's sheet and actions come to the front.
            selectCharacter(p.acting);
            heroPanel?.scrollIntoView({ block: "nearest" });
            announce?.(`Your turn: ${p.name}`);
          }
        }
        break;
      case "encounter_ended":
        encounter = null;
        break;
      default:
        return;
    }
    render();
  }

  async function send(action) {
    err.textContent = "";
    try {
      await sendCommand(action);
    } catch (problem) {
      err.textContent = problem.message;
    }
  }

  endTurn?.addEventListener("click", () => send({ type: "advance_turn" }));
  document.getElementById("next-turn")?.addEventListener("click", () => send({ type: "advance_turn" }));
  // Ending it can't be taken back (its turn order is gone): the GM is asked first.
  document.getElementById("end-encounter")?.addEventListener("click", (e) => askFirst(e.currentTarget, {
    question: `End the encounter “${encounter?.name}”?`, yes: "Yes, end the encounter", no: "No, keep it going",
    onYes: () => send({ type: "end_encounter" }),
  }));
  document.getElementById("encounter-start")?.addEventListener("submit", (e) => {
    e.preventDefault();
    send({ type: "start_encounter", name: e.target.name.value.trim() || "Encounter" });
  });
  document.getElementById("encounter-add")?.addEventListener("submit", (e) => {
    e.preventDefault();
    const value = e.target.character.value;
    if (value === "gm") send({ type: "add_combatant", gm_turn: true });
    else if (Number(value)) send({ type: "add_combatant", character: Number(value) });
  });
  render();
  const onEvent = (ev) => { if (ev.seq > pageHead) apply(ev); };
  // A character made (or shown, or gone) while the encounter runs: the GM's "Add" list follows.
  onEvent.charactersChanged = render;
  return onEvent;
}
