// csikit docs site: language and release switchers that keep the reader's place, notices for
// a place a release lacks, and client-side search over the prebuilt index (search-index.js sets
// window.CSIKIT_SEARCH; a script tag, not fetch, so it also works from file://).
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
  function search(q) {
    var index = window.CSIKIT_SEARCH;
    var terms = norm(q).split(/\s+/).filter(function (t) { return t.length > 0; });
    if (!index || terms.length === 0) return [];
    var hits = [];
    for (var i = 0; i < index.entries.length; i++) {
      var e = index.entries[i];
      var title = norm(e[1]), text = norm(e[3]), score = 0, ok = true;
      for (var j = 0; j < terms.length; j++) {
        var t = terms[j];
        if (title === t || title.endsWith("." + t)) score += 40;
        else if (title.indexOf(t) === 0) score += 20;
        else if (title.indexOf(t) >= 0) score += 10;
        else if (text.indexOf(t) >= 0) score += 1;
        else { ok = false; break; }
      }
      if (ok) {
        if (e[0] === "rpc" || e[0] === "section") score += 2;
        hits.push([score, i]);
      }
    }
    hits.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
    return hits.slice(0, 30).map(function (h) { return index.entries[h[1]]; });
  }
  function show() {
    var q = input.value;
    list.textContent = "";
    if (!q.trim()) { list.hidden = true; return; }
    var hits = search(q);
    if (hits.length === 0) {
      var li = document.createElement("li");
      li.className = "empty";
      li.textContent = body.getAttribute("data-no-results");
      list.appendChild(li);
    }
    hits.forEach(function (e) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = up + e[2];
      var kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = window.CSIKIT_SEARCH.kinds[e[0]] || e[0];
      a.appendChild(kind);
      a.appendChild(document.createTextNode(e[1]));
      if (e[3]) {
        var small = document.createElement("small");
        small.textContent = e[3];
        a.appendChild(small);
      }
      li.appendChild(a);
      list.appendChild(li);
    });
    list.hidden = false;
  }
  input.addEventListener("focus", function () { load(function () {}); });
  input.addEventListener("input", function () { load(show); });
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") {
      var first = list.querySelector("a");
      if (first) location.href = first.href;
    } else if (ev.key === "Escape") {
      list.hidden = true;
    }
  });
  document.addEventListener("click", function (ev) {
    if (!list.contains(ev.target) && ev.target !== input) list.hidden = true;
  });
})();
