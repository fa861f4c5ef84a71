// call.js: the "call a plugin" part. The methods the schema has, filtered as one types (Enter
// opens the first match); the request of the method picked, composed in the tree; Send (refused
// here with the broken rules, and again by the server, which never trusts the page); the answer:
// the response as a read-only tree with copy buttons, or the status with the spec's error row.
// The focus stays where it was through a send; the status region says "sending", "answered OK",
// "refused: 2 spec rules broken".
let methods = null; // api/methods: {endpoint, reason, services: [{name, methods: [...]}]}
let request = null; // the request's tree, as api/call/* answer it
let answer = null; // the last answer to show under the request
let sending = false;

function renderMethods() {
  const plugin = document.getElementById("plugin");
  plugin.textContent = methods.endpoint ? `Plugin: ${methods.endpoint}` : methods.reason;
  plugin.className = methods.endpoint ? "" : "none";
  filterMethods();
}

// The method list with what matches the filter (method or service name), the first one selected.
function filterMethods() {
  const text = document.getElementById("method-filter").value.trim();
  const needle = text.toLowerCase();
  const list = document.getElementById("method-list");
  const was = list.value;
  list.replaceChildren();
  let n = 0;
  for (const s of methods.services) {
    const group = el("optgroup", { label: s.name });
    for (const m of s.methods) {
      if (needle && !m.name.toLowerCase().includes(needle) && !s.name.toLowerCase().includes(needle)) continue;
      group.append(el("option", { value: m.path }, m.name + (m.alpha ? " (alpha)" : "")));
      n++;
    }
    if (group.children.length) list.append(group);
  }
  list.value = was;
  if (list.selectedIndex < 0 && list.options.length) list.selectedIndex = 0;
  const first = list.selectedIndex >= 0 ? list.options[list.selectedIndex].textContent : null;
  document.getElementById("method-count").textContent =
    `${n} ${n === 1 ? "method" : "methods"}${text ? ` ${n === 1 ? "matches" : "match"} “${text}”` : ""}${first ? `; Enter opens ${first}` : ""}`;
}

async function openMethod(path) {
  if (!path) { status("choose a method first", true); return; }
  try {
    request = await api("api/call/open", { method: path });
    current = { call: true };
    answer = null;
    renderDocuments();
    renderCall((box) => box.querySelector("#request-heading"));
    status(`${request.method.name}: a new request; ${rulesBroken(request.violations.length)}`);
  } catch (e) { status(e.message, true); }
}

const callCtx = () => ({
  mode: "compose",
  bad: new Set(request.violations.map((v) => v.path)),
  key: (k) => k,
  what: (p) => p,
  set: (path, value) => change({ op: "set", path, value }),
  change,
});

const responseCtx = (t) => ({
  mode: "response",
  bad: new Set(t.violations.map((v) => v.path)),
  key: (k) => "response:" + k,
  what: (p) => "response field " + p,
});

function renderCall(focusAfter) {
  const main = document.getElementById("main");
  const m = request.method;
  keepingFocus(main, () => {
    main.replaceChildren(
      el("h2", { id: "request-heading", tabindex: "-1" }, `${m.name} request`),
      el("div", { class: "type-note" }, `${m.service} · ${request.type}${m.alpha ? " · alpha" : ""} · `, docsLink(request.link, request.type)),
      el("div", { class: "doc", style: "display:block" }, request.doc || ""),
      children(request.fields, callCtx()),
      el("h2", {}, "Spec rules"), violationsList(request.violations, "violations"),
      sendRow(),
      answerSection());
  }, focusAfter);
}

function sendRow() {
  const note = el("p", { id: "send-note", class: "quiet" }, methods.endpoint ? `to ${methods.endpoint}` : methods.reason);
  // aria-disabled, not disabled: the button keeps the focus while the call is out.
  const send = el("button", { type: "button", id: "send", "data-focus": "send", "aria-describedby": "send-note",
    "aria-disabled": String(!methods.endpoint || sending), onclick: sendRequest }, "Send", hidden(` the ${request.method.name} request`));
  const reset = el("button", { type: "button", "data-focus": "reset", onclick: resetRequest }, "Start over", hidden(` with an empty ${request.method.name} request`));
  return el("div", { class: "send-row" }, send, reset, note);
}

function answerSection() {
  const s = el("section", { id: "answer", "aria-labelledby": "answer-heading", "aria-busy": String(sending) },
    el("h2", { id: "answer-heading" }, "Response"));
  if (!answer) {
    s.append(el("p", { class: "quiet" }, sending ? "Sending…" : "Nothing sent yet."));
  } else if (answer.outcome === "ok") {
    const t = answer.response;
    s.append(el("p", { class: "outcome ok" }, `OK, answered in ${answer.elapsed_ms} ms`),
      el("div", { class: "type-note" }, `${t.type} · `, docsLink(t.link, "response " + t.type)),
      children(t.fields, responseCtx(t)),
      el("h3", {}, "Spec rules on the response"), violationsList(t.violations, "response-violations"));
  } else if (answer.outcome === "status") {
    const st = answer.status;
    s.append(el("p", { class: "outcome bad" }, `${st.name} (${st.code})${st.message ? ": " + st.message : ""}`));
    // What the spec's error tables say about this code for this RPC: each row, or why none.
    if (answer.rows.length) {
      s.append(el("h3", {}, `What the spec says (${answer.table})`));
      for (const r of answer.rows) {
        s.append(el("dl", { class: "row-of-table" },
          el("dt", {}, "Condition"), el("dd", {}, r.condition),
          el("dt", {}, "Description"), el("dd", {}, r.description),
          ...(r.recovery ? [el("dt", {}, "Recovery"), el("dd", {}, r.recovery)] : [])));
      }
    } else if (answer.no_row) {
      s.append(el("p", { class: "quiet" }, answer.no_row));
    }
  } else if (answer.outcome === "refused") {
    s.append(el("p", { class: "outcome bad" }, `Not sent: the request breaks ${rulesBroken(answer.violations.length).replace(" broken", "")}`),
      violationsList(answer.violations, "refused-violations"));
  } else {
    s.append(el("p", { class: "outcome bad" }, answer.error));
  }
  return s;
}

async function change(body, focusAfter) {
  try {
    request = await api("api/call/edit", body);
    renderCall(focusAfter);
    const what = body.op === "set" ? `${body.path} set` : body.op === "add" ? `${body.path}${body.key !== undefined ? `[${JSON.stringify(body.key)}]` : ""} added` : `${body.path} removed`;
    status(`${what}; ${rulesBroken(request.violations.length)}`);
  } catch (e) { status(e.message, true); }
}

async function resetRequest() {
  try {
    request = await api("api/call/reset", {});
    answer = null;
    renderCall();
    status(`${request.method.name}: the request emptied; ${rulesBroken(request.violations.length)}`);
  } catch (e) { status(e.message, true); }
}

async function sendRequest() {
  if (sending) return;
  if (!methods.endpoint) { status(methods.reason, true); return; }
  const name = request.method.name;
  // Refused here first: the page knows the rules the last edit found broken. Nothing is sent.
  if (request.violations.length) {
    answer = { outcome: "refused", violations: request.violations };
    renderCall();
    status(`refused: ${rulesBroken(request.violations.length)}; nothing sent`, true);
    return;
  }
  sending = true;
  renderCall();
  status(`sending ${name}…`);
  try {
    answer = await api("api/call/send", {});
  } catch (e) {
    answer = { outcome: "error", error: e.message };
  }
  sending = false;
  if (answer.outcome === "ok") {
    request = await api("api/call/request").catch(() => request); // ids the response carried, offered
  }
  renderCall();
  if (answer.outcome === "ok") status(`${name} answered OK in ${answer.elapsed_ms} ms; the response is below`);
  else if (answer.outcome === "status") status(`${name} answered ${answer.status.name}${answer.status.message ? ": " + answer.status.message : ""}`, true);
  else if (answer.outcome === "refused") status(`refused: ${rulesBroken(answer.violations.length)}; nothing sent`, true);
  else status(answer.error, true);
}

const filter = document.getElementById("method-filter");
const methodList = document.getElementById("method-list");
filter.addEventListener("input", filterMethods);
filter.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter") { ev.preventDefault(); openMethod(methodList.value); }
  else if (ev.key === "ArrowDown") { ev.preventDefault(); methodList.focus(); }
});
methodList.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); openMethod(methodList.value); } });
methodList.addEventListener("dblclick", () => openMethod(methodList.value));
document.getElementById("method-open").addEventListener("click", () => openMethod(methodList.value));
api("api/methods").then((m) => { methods = m; renderMethods(); }).catch((e) => status(e.message, true));
