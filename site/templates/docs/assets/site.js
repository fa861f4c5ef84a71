// csikit docs site: language and release switchers that keep the reader's place, notices for
// a place a release lacks, the release menu closed by Escape, and client-side search over the
// prebuilt index as a WAI-ARIA combobox (search-index.js sets window.CSIKIT_SEARCH; a script tag,
// not fetch, so it also works from file://), the navigation's button on a narrow screen, and a
// Tab stop on a box that scrolls sideways. Without JavaScript every link still works and nothing
// is folded.
(function () {
  "use strict";
  var body = document.body;
  var up = body.getAttribute("data-up") || "";
  var release = body.getAttribute("data-release") || "";

  // The anchor the reader is at: the URL's, else the last heading or row scrolled past.
  function currentAnchor() {
    if (location.hash.length > 1) return decodeURIComponent(location.hash.slice(1));
    var best = null;
    var nodes = document.querySelectorAll("main [id]");
    for (var i = 0; i < nodes.length; i++) {
      if (nodes[i].id === "release-notice") continue;
      if (nodes[i].getBoundingClientRect().top <= 80) best = nodes[i].id; else break;
    }
    return best;
  }
  // A switch to the same page elsewhere carries the anchor; one to a contents page (the target
  // lacks the page: data-missing) carries the notice's parameters instead.
  var switches = document.querySelectorAll("a[data-lang-switch], a[data-release-switch]");
  for (var i = 0; i < switches.length; i++) {
    switches[i].addEventListener("click", function (ev) {
      if (this.hasAttribute("data-missing")) return;
      var anchor = currentAnchor();
      if (!anchor) return;
      ev.preventDefault();
      location.href = this.getAttribute("href").split("#")[0] + "#" + encodeURIComponent(anchor);
    });
  }

  // The release menu (a details element): Escape closes it, the focus back on its button; a
  // click elsewhere closes it too.
  var menu = document.querySelector("details.releases");
  if (menu) {
    menu.addEventListener("keydown", function (ev) {
      if (ev.key !== "Escape" || !menu.open) return;
      ev.preventDefault();
      menu.open = false;
      menu.querySelector("summary").focus();
    });
    document.addEventListener("click", function (ev) {
      if (menu.open && !menu.contains(ev.target)) menu.open = false;
    });
  }

  // The navigation's button (shown on a narrow screen only): it opens and closes the navigation;
  // Escape inside the open navigation closes it, the focus back on the button.
  var toggle = document.querySelector(".nav-toggle");
  var side = document.getElementById("site-nav");
  if (toggle && side) {
    var setOpen = function (open) {
      side.classList.toggle("open", open);
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    };
    toggle.addEventListener("click", function () { setOpen(toggle.getAttribute("aria-expanded") !== "true"); });
    side.addEventListener("keydown", function (ev) {
      if (ev.key !== "Escape" || !side.classList.contains("open") || toggle.offsetParent === null) return;
      ev.preventDefault();
      setOpen(false);
      toggle.focus();
    });
  }

  // A code block or table wider than the screen scrolls in its box; one with nothing inside to
  // focus gets a Tab stop, so that a keyboard can scroll it too. Checked again when the width
  // changes (a phone turned sideways).
  function scrollStops() {
    var boxes = document.querySelectorAll("main pre, main .table-wrap");
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      var scrolls = box.scrollWidth > box.clientWidth;
      if (scrolls && !box.hasAttribute("tabindex") && !box.querySelector("a[href], button, input, [tabindex]")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-scroll-stop", "");
      } else if (!scrolls && box.hasAttribute("data-scroll-stop")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-scroll-stop");
      }
    }
  }
  scrollStops();
  var lastWidth = window.innerWidth;
  window.addEventListener("resize", function () {
    if (window.innerWidth === lastWidth) return;
    lastWidth = window.innerWidth;
    scrollStops();
  });

  function fill(template, args) {
    return (template || "").replace(/\{(\w+)\}/g, function (m, k) { return k in args ? args[k] : m; });
  }
  function notice(text, withIndex) {
    var box = document.getElementById("release-notice");
    if (!box) return;
    box.textContent = text;
    if (withIndex) {
      box.appendChild(document.createTextNode(" "));
      var a = document.createElement("a");
      a.href = up + "index.html";
      a.textContent = fill(body.getAttribute("data-t-index"), { release: release });
      box.appendChild(a);
    }
    box.hidden = false;
  }
  // Sent here because this release lacks the page the reader was on.
  var params = new URLSearchParams(location.search);
  var missing = params.get("missing");
  if (missing) {
    var text = fill(body.getAttribute("data-t-missing-anchor"), { name: missing, release: release });
    if (params.get("added")) text += " " + fill(body.getAttribute("data-t-added"), { v: params.get("added") });
    if (params.get("removed")) text += " " + fill(body.getAttribute("data-t-removed"), { v: params.get("removed") });
    notice(text + " " + fill(body.getAttribute("data-t-contents"), { release: release }), false);
  }
  // An anchor this page does not have: the element is not part of this release.
  function checkAnchor() {
    if (location.hash.length <= 1) return;
    var id;
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { id = location.hash.slice(1); }
    if (document.getElementById(id)) return;
    notice(fill(body.getAttribute("data-t-missing-anchor"), { name: id, release: release }), true);
    window.scrollTo(0, 0);
  }
  checkAnchor();
  window.addEventListener("hashchange", checkAnchor);

  var input = document.getElementById("search");
  var list = document.getElementById("search-results");
  if (!input || !list) return;
  // Callbacks waiting for the index; the script tag is added once.
  var waiting = null;
  function load(then) {
    if (window.CSIKIT_SEARCH) { then(); return; }
    if (waiting) { waiting.push(then); return; }
    waiting = [then];
    var s = document.createElement("script");
    s.src = up + "search-index.js";
    s.onload = function () {
      var calls = waiting;
      waiting = [];
      calls.forEach(function (f) { f(); });
    };
    document.head.appendChild(s);
  }
  function norm(s) { return (s || "").toLowerCase(); }
  // An entry's score for the query's terms, or null when a term matches nothing in it.
  function scoreEntry(e, terms) {
    var title = norm(e[1]), text = norm(e[3]), score = 0;
    for (var j = 0; j < terms.length; j++) {
      var t = terms[j];
      if (title === t || title.endsWith("." + t)) score += 40;
      else if (title.indexOf(t) === 0) score += 20;
      else if (title.indexOf(t) >= 0) score += 10;
      else if (text.indexOf(t) >= 0) score += 1;
      else return null;
    }
    if (e[0] === "rpc" || e[0] === "section") score += 2;
    return { score: score, whole: false };
  }
  // An error-table row ["error", condition, url, description, rpc, code, number]: its code (or
  // number) named exactly ranks first, its RPC's name below the RPC's own page, its condition's
  // words like a title's. `whole` is true when every term is the code, number or RPC, or when
  // the query is most of the condition: such a row is always listed, however many there are.
  function scoreError(e, terms) {
    var condition = norm(e[1]), text = norm(e[3]), rpc = norm(e[4]), code = norm(e[5]), number = String(e[6]);
    var score = 0, named = true;
    for (var j = 0; j < terms.length; j++) {
      var t = terms[j];
      if (t === code || t === number) { score += 40; continue; }
      if (t === rpc) { score += 15; continue; }
      named = false;
      if (condition.indexOf(t) >= 0) score += 10;
      else if (code.indexOf(t) >= 0 || rpc.indexOf(t) >= 0) score += 5;
      else if (text.indexOf(t) >= 0) score += 1;
      else return null;
    }
    var phrase = terms.join(" ");
    var conditionNamed = condition.indexOf(phrase) >= 0 && phrase.length * 2 >= condition.length;
    if (conditionNamed) score += 20;
    return { score: score, whole: named || conditionNamed };
  }
  function search(q) {
    var index = window.CSIKIT_SEARCH;
    var terms = norm(q).split(/\s+/).filter(function (t) { return t.length > 0; });
    if (!index || terms.length === 0) return [];
    var hits = [];
    for (var i = 0; i < index.entries.length; i++) {
      var e = index.entries[i];
      var s = e[0] === "error" ? scoreError(e, terms) : scoreEntry(e, terms);
      if (s) hits.push([s.score, i, s.whole]);
    }
    hits.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
    // Thirty results, or more when more rows match by code, RPC or condition: a driver author
    // looking up NOT_FOUND gets every row that has it.
    var shown = 30;
    for (var k = 0; k < hits.length; k++) if (hits[k][2]) shown = Math.max(shown, k + 1);
    return hits.slice(0, shown).map(function (h) { return index.entries[h[1]]; });
  }
  // The WAI-ARIA combobox pattern: focus stays in the input; the arrow keys move the active
  // option (aria-activedescendant); the status region announces how many options there are.
  var status = document.getElementById("search-status");
  var active = -1;
  function options() { return list.querySelectorAll("[role=option]"); }
  function expand(open) {
    list.hidden = !open;
    input.setAttribute("aria-expanded", open ? "true" : "false");
    if (!open) setActive(-1);
  }
  function setActive(n) {
    var opts = options();
    active = n;
    for (var i = 0; i < opts.length; i++) opts[i].setAttribute("aria-selected", i === n ? "true" : "false");
    if (n >= 0 && n < opts.length) {
      input.setAttribute("aria-activedescendant", opts[n].id);
      opts[n].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }
  function say(text, visible) {
    if (!status) return;
    status.textContent = text;
    status.classList.toggle("shown", visible);
  }
  function show() {
    var q = input.value;
    list.textContent = "";
    if (!q.trim()) { expand(false); say("", false); return; }
    var hits = search(q);
    hits.forEach(function (e, n) {
      var li = document.createElement("li");
      li.id = "search-option-" + n;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      li.setAttribute("data-href", up + e[2]);
      var kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = window.CSIKIT_SEARCH.kinds[e[0]] || e[0];
      li.appendChild(kind);
      // An error row reads as its table shows it: the RPC (or "any RPC" for the general
      // table) and the code, then the condition.
      var error = e[0] === "error";
      li.appendChild(document.createTextNode(error ? (e[4] || window.CSIKIT_SEARCH.general) + " · " + e[6] + " " + e[5] : e[1]));
      var detail = error ? e[1] : e[3];
      // Text carried from an older release says so (the index names the release last).
      var from = error ? e[7] : e[4];
      if (from) detail = fill(window.CSIKIT_SEARCH.carried, { from: from }) + (detail ? " · " + detail : "");
      if (detail) {
        var small = document.createElement("small");
        small.textContent = detail;
        li.appendChild(small);
      }
      list.appendChild(li);
    });
    if (hits.length === 0) {
      expand(false);
      say(body.getAttribute("data-no-results"), true);
    } else {
      expand(true);
      setActive(-1);
      say(hits.length === 1 ? body.getAttribute("data-t-result") : fill(body.getAttribute("data-t-results"), { n: hits.length }), false);
    }
  }
  function go(n) {
    var opts = options();
    if (n >= 0 && n < opts.length) location.href = opts[n].getAttribute("data-href");
  }
  input.addEventListener("focus", function () { load(function () {}); });
  input.addEventListener("input", function () { load(show); });
  input.addEventListener("keydown", function (ev) {
    var n = options().length;
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      if (list.hidden) {
        if (!input.value.trim()) return;
        load(function () { show(); if (options().length) setActive(ev.key === "ArrowDown" ? 0 : options().length - 1); });
        return;
      }
      if (n === 0) return;
      if (ev.key === "ArrowDown") setActive(active + 1 >= n ? 0 : active + 1);
      else setActive(active <= 0 ? n - 1 : active - 1);
    } else if (ev.key === "Enter") {
      // Enter opens the active option, else the first one.
      if (!list.hidden && n > 0) { ev.preventDefault(); go(active >= 0 ? active : 0); }
    } else if (ev.key === "Escape") {
      if (!list.hidden) { ev.preventDefault(); expand(false); }
    }
  });
  list.addEventListener("click", function (ev) {
    var li = ev.target.closest ? ev.target.closest("[role=option]") : null;
    if (li) location.href = li.getAttribute("data-href");
  });
  document.addEventListener("click", function (ev) {
    if (!list.contains(ev.target) && ev.target !== input) expand(false);
  });
})();
