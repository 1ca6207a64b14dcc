// The table's words and numbers that need no page: filling an event's declared sentence, times in
// UTC, the session line, why a result came out more hidden than asked, the order of the characters'
// tabs. Pure functions of their arguments (tests/js/format.test.mjs runs them under Node).

// An event stored under a former name reads under today's name (declared.renames: old -> new).
export function renamed(renames) {
  const nowName = (type) => renames[type] || type;
  const asNow = (ev) => (renames[ev.type] ? { ...ev, type: nowName(ev.type), stored_type: ev.type } : ev);
  return { nowName, asNow };
}

// "earned {points} points": an event's declared sentence filled from its payload, exactly as
// rules/declare.py fill_description fills it (its docstring says the whole of it): "{key}", "{key.sub}",
// "{key:cap:words:signed:count:join:plus:word:changes:if}" (formats left to right), "{rounds|round|rounds}" (the
// count and its noun in agreement), "{key=value}" (a condition), "[: “{name}”]" said only when every value
// in it is given (or its conditions hold), "[a|b]" the first alternative that is. `words`: the declaration's {key: {value: words}}. One pass: a filled-in
// value is never read again.
const FILLED = /\[([^[\]]*)\]|\{(\w+(?:\.\w+)*)(?:=([\w ]+)|((?::\w+)*)(?:\|([^|{}]*)\|([^|{}]*))?)\}/g;
const isNumber = (v) => typeof v === "number";
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const lookup = (p, path) => path.split(".").reduce((v, key) =>
  (Array.isArray(v) ? v.map((item) => (isObject(item) ? item[key] : undefined)) : isObject(v) ? v[key] : undefined), p);
const given = (v) => !(v === undefined || v === null || v === false || v === "" || (isNumber(v) && v === 0)
  || (Array.isArray(v) && !v.length) || (isObject(v) && !Object.keys(v).length));
function alternatives(part) {
  const out = [];
  let depth = 0, start = 0;
  [...part].forEach((c, i) => {
    depth += (c === "{") - (c === "}");
    if (c === "|" && depth === 0) { out.push(part.slice(start, i)); start = i + 1; }
  });
  return [...out, part.slice(start)];
}
const changed = (v) => (v === undefined || v === null ? "?" : typeof v === "object" ? JSON.stringify(v) : `${v}`);
function changes(v) {
  const pairs = Array.isArray(v) ? v.filter(isObject).map((c) => [c.path, c]) : isObject(v) ? Object.entries(v) : null;
  if (!pairs) return v;
  return pairs.map(([what, c]) => `${what === undefined || what === null ? "?" : `${what}`.replace(/^sheet\./, "")} `
    + `${changed(isObject(c) ? c.from : null)} → ${changed(isObject(c) ? c.to : null)}`).join(", ");
}
const itemwise = (v, f) => (Array.isArray(v) ? v.map((x) => (typeof x === "string" ? f(x) : x)) : typeof v === "string" ? f(v) : v);
function formatted(v, how, words) {
  if (v === undefined || v === null) return v;
  switch (how) {
    case "cap": return itemwise(v, (x) => x.charAt(0).toUpperCase() + x.slice(1));
    case "words": return itemwise(v, (x) => x.replaceAll("_", " "));
    case "signed": return !isNumber(v) ? v : v > 0 ? `+${v}` : v < 0 ? `−${-v}` : "±0";
    case "count": return Array.isArray(v) ? v.length : isObject(v) ? Object.keys(v).length : null;
    case "join": return Array.isArray(v) ? v.join(", ") : v;
    case "plus": return Array.isArray(v) ? v.join(" + ") : v;
    case "changes": return changes(v);
    case "word": return (typeof v === "string" || isNumber(v)) && words && Object.hasOwn(words, v) ? words[v] : v;
    case "if": return "";
    default: throw new Error(`unknown format '${how}' in a template`);
  }
}
const said = (v) => (typeof v === "string" ? v : `${v}`);
const holds = (p, m) => {
  const v = lookup(p, m[2]);
  return m[3] !== undefined ? v !== undefined && v !== null && said(v) === m[3] : given(v);
};
export function fillTemplate(template, p, words = {}) {
  return template.replace(FILLED, (_, optional, path, equals, hows, one, many) => {
    if (optional !== undefined) {
      const chosen = alternatives(optional).find((alt) => {
        const found = [...alt.matchAll(FILLED)];
        const conditions = found.filter((m) => m[3] !== undefined || (m[4] || "").includes(":if"));
        return (conditions.length ? conditions : found).every((m) => holds(p, m));
      });
      return chosen === undefined ? "" : fillTemplate(chosen, p, words);
    }
    if (equals !== undefined) return ""; // a condition says nothing
    const v = (hows || "").split(":").filter(Boolean).reduce((value, how) => formatted(value, how, words[path]), lookup(p, path));
    const said = v ?? "?";
    return one === undefined ? `${said}` : `${said} ${v === 1 ? one : many}`;
  });
}

// The action a roll request asks for: "asked" where members sign (the request's own signed action is
// "action" there), "action" in older logs.
export const askedAction = (p) => p.asked || p.action;

// The text of what describe() gives: a string, a node, or a list of both.
export const textOf = (nodes) => [].concat(nodes).map((n) => (typeof n === "string" ? n : n?.textContent || "")).join("");

// Times are UTC everywhere (table, audit, exports): one clock for a table spread over time zones.
// An event's stored time (ISO 8601, UTC) as its line shows it ("19:42 UTC") and its full title.
export function eventTime(createdAt) {
  return { shown: `${createdAt.slice(11, 16)} UTC`, title: `${createdAt.slice(0, 10)} ${createdAt.slice(11, 19)} UTC` };
}

// Any time the server sends, to the minute ("2026-03-01 19:42 UTC").
export const minuteUTC = (iso) => `${new Date(iso).toISOString().slice(0, 16).replace("T", " ")} UTC`;

// The header's line and the GM bar's buttons for a session and scene (null: none running).
export function sessionLine(session, scene, sceneName) {
  return session ? `Session ${session}${scene ? `, scene ${scene}${sceneName ? `: ${sceneName}` : ""}` : ", between scenes"}`
    : "No session running";
}
export function sessionCommands(session, scene) {
  return {
    allowed: { start_session: !session, start_scene: !!session && !scene, end_scene: !!scene, end_session: !!session && !scene },
    // A greyed-out "End session" said nothing of why: a session ends between scenes.
    why: session && scene ? `End scene ${scene} first.` : "",
  };
}

// Why a command came out more hidden than it asked (campaign/visibility/hidden.py): it read what some members
// may not see yet, so only those who may read all of it read it. Said to its sender only, in words of
// what she reads anyway (the event's own readers), so it tells her nothing her log does not.
// `asked`: the visibility the command asked for; `char`: the event's character as the page holds it.
export function keptNote(ev, asked, { isGM, username, char }) {
  if (!asked || ev.visibility === asked || ev.visibility === "public" || ev.visibility === "whisper") return null;
  if (ev.hidden) return "Kept for the GM: it reads something of this character that only the GM sees yet.";
  const c = char;
  if (isGM && c?.npc && c.shown === "hidden") return `Kept for you: the players don't know ${c.name} is here (show it from its sheet first).`;
  // A name-only NPC's events are the GM's too (campaign/actions/npcs.py gm_keeps): not a secret it read.
  if (isGM && c?.npc && c.shown !== "full") return `Kept for you: the players know only ${c.name}'s name, not its rolls (show it in full from its sheet first).`;
  const others = (ev.payload?.shared_with || []).map((r) => r.username).filter((u) => u !== username);
  if (!isGM && asked === "secret" && !others.length) return null; // hers and the GM's, as she asked
  const whom = isGM ? (others.length ? `you and ${others.join(", ")}` : "you") : `you${others.length ? `, ${others.join(", ")}` : ""} and the GM`;
  return `Kept for ${whom}: it reads a secret or GM-only event not revealed yet, so only who may read that reads this.`;
}

// The characters' tabs: this member's own first, then by name (and id, for two of one name).
export function orderCharacters(list, username) {
  const mine = (c) => (c.owner === username ? 0 : 1);
  return [...list].sort((a, b) => mine(a) - mine(b) || a.name.localeCompare(b.name) || a.id - b.id);
}

// How many of the characters are players' (not an NPC, not the GM's own): whom "Ask every player" asks.
export function playerCount(chars, roleOf) {
  return [...chars].filter((c) => !c.npc && roleOf(c.owner) !== "gm").length;
}

// A dice term's text as the log shows it: what joins it first ("+", "−", "×"), its label after
// (rules/notation.py writes each term's text starting with "+", "-" or "*").
export function termText(term, text) {
  return `${term.op === "*" ? "×" : ""}${term.sign < 0 ? "−" : term.op === "*" ? "" : "+"}${text}${term.label ? ` ${term.label}` : ""}`;
}
