"use strict";
// page.js: the documents (files, captures, pasted messages) and the tree every view draws.
// Every control is a real control with a name (buttons, inputs, selects, links named for what they
// open); re-rendering keeps the focus on the control that had it (by its data-focus key); the
// status region says what each action did.
const base = location.pathname.replace(/\/?$/, "/");
let current = null; // {doc, msg} for a document's message, {call: true} for the request
let state = null;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

const hidden = (text) => el("span", { class: "visually-hidden" }, text);

function status(text, error = false) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.className = error ? "error" : "";
}

const rulesBroken = (n) => n === 0 ? "no spec rule broken" : n === 1 ? "1 spec rule broken" : `${n} spec rules broken`;

async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(base + path, opts);
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}

function renderDocuments() {
  const box = document.getElementById("documents");
  keepingFocus(box, () => listDocuments(box));
  renderControls();
}

function listDocuments(box) {
  box.replaceChildren();
  for (const d of state.documents) {
    box.append(el("h2", {}, d.kind), el("div", { class: "doc-name" }, d.name + (d.dirty ? " (edited)" : "")));
    for (const m of d.messages) {
      const a = el("a", { href: "#", class: "msg-link", "data-doc": d.id, "data-msg": m.id, "data-focus": `msg:${d.id}/${m.id}`,
        onclick: (ev) => { ev.preventDefault(); show(d.id, m.id); } }, `${m.label}: ${m.type}`);
      if (current && current.doc === d.id && current.msg === m.id) {
        a.classList.add("current");
        a.setAttribute("aria-current", "true");
      }
      box.append(a);
    }
  }
}

function renderControls() {
  document.getElementById("show-secrets").checked = state.show_secrets;
  const d = current && current.doc !== undefined && state.documents[current.doc];
  // aria-disabled, not disabled: the button keeps the focus once it has saved.
  document.getElementById("save").setAttribute("aria-disabled", String(!(d && d.saveable && d.dirty)));
}

// A link to an entry on the docs site, named for what it documents.
function docsLink(href, what, key = "docs:" + what) {
  return el("a", { class: "docs", href, target: "_blank", rel: "noreferrer", "data-focus": key },
    "docs", hidden(` for ${what} (opens in a new tab)`));
}

let uid = 0;

// The tree of `fields`, drawn for `ctx.mode`:
//   "document": the set fields, values edited in place (ctx.set(path, text));
//   "compose": every field of a request, with controls to set a message field, choose a oneof
//     member, add or remove elements and map entries (ctx.change(body, focusAfter)), ids offered;
//   "response": values read-only, strings with a copy button.
// ctx.bad holds the paths the rules found broken; ctx.key(k) makes a control's data-focus key.
function children(fields, ctx) {
  const c = el("div", { class: "children" });
  for (const f of fields) c.append(f.oneof ? oneofNode(f, ctx) : fieldNode(f, ctx));
  return c;
}

function fieldNode(f, ctx) {
  const node = el("div", { class: "field", "data-path": f.path });
  if (f.missing) node.classList.add("missing");
  if (f.unset) node.classList.add("unset");
  if (ctx.bad.has(f.path)) node.classList.add("bad");
  const docId = `doc-${++uid}`;
  const name = el("button", { type: "button", class: "name", "aria-expanded": "false", "aria-controls": docId,
    title: "show the documentation", "data-focus": ctx.key("name:" + f.path) }, f.name);
  name.addEventListener("click", () => {
    const open = node.classList.toggle("open");
    name.setAttribute("aria-expanded", String(open));
  });
  const row = el("div", { class: "row" }, name, el("span", { class: "ftype" }, f.type));
  node.append(row);
  const note = [f.missing ? "missing" : f.unset ? "unset" : null, f.note].filter(Boolean).join(", ");
  const scalar = f.label === "singular" && f.kind !== "message";
  if (ctx.mode === "compose") {
    if (scalar) row.append(valueControl(f, ctx));
    else if (f.label === "singular") row.append(f.fields ? removeButton(f.path, ctx) : setButton(f.path, ctx));
    row.append(el("span", { class: "note" }, note));
  } else if (ctx.mode === "response") {
    if (scalar && !f.missing) row.append(shownValue(f, ctx));
    row.append(el("span", { class: "note" }, note));
  } else if (f.missing) {
    row.append(el("span", { class: "note" }, note));
    if (f.editable) row.append(valueControl(f, ctx, "set a value"));
  } else if (scalar) {
    row.append(valueControl(f, ctx), el("span", { class: "note" }, note));
  } else {
    row.append(el("span", { class: "note" }, note));
  }
  row.append(docsLink(f.link, ctx.what(f.path), ctx.key("docs:" + f.path)));
  node.append(el("div", { class: "doc", id: docId }, f.doc || "(no documentation in the spec)"));
  if (f.fields) node.append(children(f.fields, ctx));
  for (const it of f.items || []) node.append(itemNode(f, it, null, ctx));
  for (const e of f.entries || []) node.append(itemNode(f, e, e.key, ctx));
  if (ctx.mode === "compose" && f.label !== "singular") node.append(addControls(f, ctx));
  return node;
}

// One element of a list, or one entry of a map (with its key).
function itemNode(f, it, key, ctx) {
  const c = el("div", { class: "children item", "data-path": it.path });
  const row = el("div", { class: "row" }, key === null ? el("span", { class: "ftype" }, it.path) : el("span", { class: "key" }, key));
  const value = { ...it, secret: f.secret, offers: f.offers, label: "singular" };
  if (!it.fields) row.append(ctx.mode === "response" ? shownValue(value, ctx) : valueControl(value, ctx));
  if (ctx.mode === "compose") row.append(removeButton(it.path, ctx, f.path));
  c.append(row);
  if (it.fields) c.append(children(it.fields, ctx));
  return c;
}

// An input for a scalar (a password input for a secret in a request), a select of the declared
// values for an enum; with ids seen in responses offered in a list.
function valueControl(f, ctx, placeholder) {
  const key = ctx.key("value:" + f.path);
  const compose = ctx.mode === "compose";
  if (f.enum) {
    const select = el("select", { class: "value", "data-path": f.path, "aria-label": f.path, "data-focus": key });
    const values = f.enum.includes(f.value) || f.value === undefined ? f.enum : [f.value, ...f.enum];
    for (const v of values) select.append(el("option", { value: v }, v));
    // Unset, an enum reads as its first declared value (its zero).
    select.value = f.value === undefined ? values[0] : f.value;
    select.addEventListener("change", () => ctx.set(f.path, select.value));
    return select;
  }
  const secret = compose && f.secret;
  const attrs = { class: "value" + (f.redacted && !secret ? " redacted" : ""), "data-path": f.path, "aria-label": f.path, "data-focus": key,
    placeholder: secret ? (f.redacted ? "set (hidden)" : "unset") : compose && f.value === undefined ? "unset" : placeholder };
  if (secret) Object.assign(attrs, { type: "password", autocomplete: "off" });
  else attrs.value = f.value ?? "";
  const input = el("input", attrs);
  input.addEventListener("change", () => ctx.set(f.path, input.value));
  if (compose && f.offers && f.offers.length) {
    const id = `offers-${++uid}`;
    input.setAttribute("list", id);
    const list = el("datalist", { id });
    for (const o of f.offers) list.append(el("option", { value: o.value, label: o.from }));
    return el("span", {}, input, list);
  }
  return input;
}

// A response's value, read-only; strings get a copy button.
function shownValue(f, ctx) {
  const out = el("span", {}, el("code", { class: "value", "data-path": f.path }, f.value));
  if (!f.redacted && f.value !== "" && f.kind !== "number" && f.kind !== "bool" && !f.enum) {
    const copy = el("button", { type: "button", class: "small", "data-focus": ctx.key("copy:" + f.path) }, "Copy", hidden(` ${f.path}`));
    copy.addEventListener("click", () => copyValue(f.path, f.value));
    out.append(" ", copy);
  }
  return out;
}

async function copyValue(path, value) {
  try {
    await navigator.clipboard.writeText(value);
    status(`copied ${path}`);
  } catch (e) {
    status(`cannot copy ${path} here: select the value and copy it`, true);
  }
}

function setButton(path, ctx) {
  return el("button", { type: "button", class: "small", "data-focus": ctx.key("set:" + path),
    onclick: () => ctx.change({ op: "add", path }, (box) => firstControlIn(box, path) || byKey(box, ctx.key("remove:" + path))) }, "Set", hidden(` ${path}`));
}

// Removes a field (then the focus goes to its Set) or an element of `list` (then to its Add).
function removeButton(path, ctx, list) {
  const next = list ? "add:" + list : "set:" + path;
  return el("button", { type: "button", class: "small", "data-focus": ctx.key("remove:" + path),
    onclick: () => ctx.change({ op: "remove", path }, (box) => byKey(box, ctx.key(next))) }, "Remove", hidden(` ${path}`));
}

// What adds to a list (an element) or a map (an entry at a key typed beside it).
function addControls(f, ctx) {
  const row = el("div", { class: "row children" });
  const count = (f.items || f.entries || []).length;
  if (f.label === "map") {
    const keyInput = el("input", { class: "value", "aria-label": `key of a new ${f.path} entry`, placeholder: "new key", "data-focus": ctx.key("key:" + f.path) });
    const add = () => {
      const key = keyInput.value;
      const entry = `${f.path}[${JSON.stringify(key)}]`;
      ctx.change({ op: "add", path: f.path, key }, (box) => byKey(box, ctx.key("value:" + entry)));
    };
    keyInput.addEventListener("keydown", (ev) => { if (ev.key === "Enter") add(); });
    row.append(keyInput, el("button", { type: "button", class: "small", "data-focus": ctx.key("add:" + f.path), onclick: add }, "Add entry", hidden(` to ${f.path}`)));
  } else {
    row.append(el("button", { type: "button", class: "small", "data-focus": ctx.key("add:" + f.path),
      onclick: () => ctx.change({ op: "add", path: f.path }, (box) => firstControlIn(box, `${f.path}[${count}]`)) }, "Add", hidden(` an element to ${f.path}`)));
  }
  return row;
}

// A request's oneof: a select of its members; choosing one clears the others.
function oneofNode(o, ctx) {
  const node = el("div", { class: "field oneof", "data-path": o.path });
  if (o.missing) node.classList.add("missing");
  if (ctx.bad.has(o.path)) node.classList.add("bad");
  const id = `oneof-${++uid}`;
  const parent = o.path.slice(0, o.path.length - o.oneof.length);
  const select = el("select", { id, class: "value", "data-focus": ctx.key("oneof:" + o.path) },
    el("option", { value: "" }, "(none)"), ...o.members.map((m) => el("option", { value: m }, m)));
  select.value = o.chosen || "";
  select.addEventListener("change", () => {
    const body = select.value ? { op: "add", path: parent + select.value } : { op: "remove", path: parent + o.chosen };
    ctx.change(body);
  });
  const note = [o.missing ? "missing" : null, o.note].filter(Boolean).join(", ");
  node.append(el("div", { class: "row" }, el("label", { for: id, class: "oneof-name" }, hidden(parent), o.oneof, " (one of)"), select, el("span", { class: "note" }, note)));
  if (o.field) node.append(el("div", { class: "children" }, fieldNode(o.field, ctx)));
  return node;
}

const byKey = (box, key) => [...box.querySelectorAll("[data-focus]")].find((e) => e.getAttribute("data-focus") === key);

// The first control inside the node at `path`, to focus once it is added: a value control
// before a button, inside its children first.
function firstControlIn(box, path) {
  const node = [...box.querySelectorAll(".field, .item")].find((e) => e.getAttribute("data-path") === path);
  if (!node) return null;
  const first = (scope) => scope && (scope.querySelector("input, select") || scope.querySelector("button, a"));
  return first(node.querySelector(":scope > .children")) || first(node);
}

// Re-renders `box` with `render`, keeping what the reader had: the control with the focus
// (by its data-focus key, so Tab or Enter after an edit does not drop the focus to the body;
// or the control `focusAfter(box)` names) and the open documentation of each field.
function keepingFocus(box, render, focusAfter) {
  const had = box.contains(document.activeElement) ? document.activeElement.getAttribute("data-focus") : null;
  const open = new Set([...box.querySelectorAll(".field.open")].map((f) => f.getAttribute("data-path")));
  render();
  for (const f of box.querySelectorAll(".field")) {
    if (!open.has(f.getAttribute("data-path"))) continue;
    f.classList.add("open");
    f.querySelector(":scope > .row > .name")?.setAttribute("aria-expanded", "true");
  }
  const again = (focusAfter && focusAfter(box)) || (had && byKey(box, had));
  if (again) again.focus();
}

function violationsList(violations, id) {
  const list = el("ul", { id, class: "violations" });
  if (violations.length === 0) list.append(el("li", { class: "none" }, "no spec rule broken"));
  for (const v of violations) list.append(el("li", { "data-path": v.path }, v.message));
  return list;
}

function renderMessage(t) {
  const main = document.getElementById("main");
  const ctx = { mode: "document", bad: new Set(t.violations.map((v) => v.path)), key: (k) => k, what: (p) => p, set: edit };
  keepingFocus(main, () => {
    main.replaceChildren(
      el("h2", {}, t.type),
      el("div", { class: "type-note" }, (t.certain ? "type named" : "type detected (values any type that could have produced the bytes marks secret are hidden)") + " · ",
        docsLink(t.link, t.type)),
      el("div", { class: "doc", style: "display:block" }, t.doc || ""),
      children(t.fields, ctx),
      el("h2", {}, "Spec rules"), violationsList(t.violations, "violations"));
  });
}

async function show(doc, msg) {
  current = { doc, msg };
  try {
    renderMessage(await api(`api/message?doc=${doc}&msg=${msg}`));
    renderDocuments();
    status("");
  } catch (e) { status(e.message, true); }
}

async function edit(path, value) {
  try {
    const t = await api("api/set", { doc: current.doc, msg: current.msg, path, value });
    renderMessage(t);
    state = await api("api/state");
    renderDocuments();
    // The status region is what a screen reader hears after an edit: say what the rules found.
    status(`${path} set; ${rulesBroken(t.violations.length)}`);
  } catch (e) { status(e.message, true); }
}

async function refresh() {
  state = await api("api/state");
  renderDocuments();
  if (current && current.doc !== undefined) await show(current.doc, current.msg);
}

document.getElementById("save").addEventListener("click", async (ev) => {
  if (ev.currentTarget.getAttribute("aria-disabled") === "true") return;
  try {
    const r = await api("api/save", { doc: current.doc });
    status(`saved ${r.saved} (original kept as ${r.backup})`);
    state = await api("api/state");
    renderDocuments();
  } catch (e) { status(e.message, true); }
});
document.getElementById("show-secrets").addEventListener("change", async (ev) => {
  try { state = await api("api/secrets", { show: ev.target.checked }); await refresh(); }
  catch (e) { status(e.message, true); }
});
document.getElementById("paste").addEventListener("click", async () => {
  try {
    state = await api("api/paste", { text: document.getElementById("paste-text").value });
    const d = state.documents[state.documents.length - 1];
    await show(d.id, 0);
  } catch (e) { status(e.message, true); }
});
refresh().then(() => { if (state.documents.length && state.documents[0].messages.length) show(0, 0); });
