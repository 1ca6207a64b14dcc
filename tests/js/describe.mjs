// Runs the table's describe() (static/talekeeper/describe.js) under Node on the events read from stdin
// and prints each line's text: tests/test_js.py holds it to the sentence the audit fills in Python.
// Input: {system, lines, declared, events}. A page's elements are stood in for by the least the
// describing code uses (an element with children and a text).

class Element {
  constructor(tag) { Object.assign(this, { tag, children: [], attributes: {}, dataset: {}, className: "" }); }
  append(...children) { this.children.push(...children); }
  appendChild(child) { this.children.push(child); }
  setAttribute(key, value) { this.attributes[key] = value; }
  addEventListener() {}
  get textContent() { return this.children.map((c) => (typeof c === "string" ? c : c?.textContent ?? "")).join(""); }
  set textContent(text) { this.children = [String(text)]; }
}
globalThis.Node = Element;
globalThis.document = { createElement: (tag) => new Element(tag), createTextNode: (text) => text };

const { state } = await import("../../static/talekeeper/state.js");
const { describe } = await import("../../static/talekeeper/describe.js");
const { textOf } = await import("../../static/talekeeper/format.js");

let text = "";
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
const system = await import(`../../static/talekeeper/systems/${input.system}.js`);
const failed = [];
const error = console.error;
console.error = (...args) => { failed.push(args.map(String).join(" ")); error(...args); };
Object.assign(state, { data: { lines: input.lines }, declared: input.declared, chars: new Map(), events: new Map(), system,
  nowName: (type) => type, VISIBILITIES: new Map() });
for (const ev of input.events) state.events.set(ev.seq, ev);
console.log(JSON.stringify({ said: input.events.map((ev) => textOf(describe(ev).text)), failed }));
