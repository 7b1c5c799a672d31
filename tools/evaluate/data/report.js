/* Draws the consensus graphs of a Taskloom report from their embedded JSON (coordinates computed in
   Python) and handles hover details, pan (drag) and zoom (wheel). Text only ever goes in via
   textContent, never as markup. */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var COLOURS = { trap: "#d62728", critical: "#2ca02c", bottleneck: "#ff8c1a", normal: "#9aa0a6" };
  var FILLS = { start: "#1f77b4", success: "#2ca02c", failure: "#d62728" };

  function svg(name, attrs) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }

  function fmt(v) {
    if (typeof v === "number") { return Number.isInteger(v) ? String(v) : v.toFixed(3); }
    if (typeof v === "boolean") { return v ? "yes" : "no"; }
    return String(v);
  }

  var tip = document.createElement("div");
  tip.className = "tip";
  tip.hidden = true;
  document.body.appendChild(tip);

  function showTip(ev, title, rows) {
    tip.replaceChildren();
    var head = document.createElement("div");
    head.className = "tip-title";
    head.textContent = title;
    tip.appendChild(head);
    rows.forEach(function (row) {
      var line = document.createElement("div");
      var key = document.createElement("span");
      key.className = "k";
      key.textContent = row[0];
      var val = document.createElement("span");
      val.textContent = fmt(row[1]);
      line.appendChild(key);
      line.appendChild(val);
      tip.appendChild(line);
    });
    tip.hidden = false;
    moveTip(ev);
  }

  function moveTip(ev) {
    tip.style.left = (ev.pageX + 14) + "px";
    tip.style.top = (ev.pageY + 14) + "px";
  }

  function hideTip() { tip.hidden = true; }

  function edgePath(e, a, b) {
    if (e.route === "loop") {
      var r = a.r;
      return "M" + (a.x - r * 0.6) + " " + (a.y - r * 0.8) + " C" + (a.x - r * 2.2) + " " + (a.y - r * 3.6) + " " +
        (a.x + r * 2.2) + " " + (a.y - r * 3.6) + " " + (a.x + r * 0.6) + " " + (a.y - r * 0.8);
    }
    if (e.route === "back") {
      var sag = Math.min(24 + 0.08 * Math.abs(a.x - b.x), 55);
      var low = Math.max(a.y + a.r, b.y + b.r) + sag;
      return "M" + a.x + " " + (a.y + a.r) + " C" + a.x + " " + low + " " + b.x + " " + low + " " + b.x + " " + (b.y + b.r + 4);
    }
    var x1 = a.x + a.r, x2 = b.x - b.r - 4, mx = (x1 + x2) / 2;
    return "M" + x1 + " " + a.y + " C" + mx + " " + a.y + " " + mx + " " + b.y + " " + x2 + " " + b.y;
  }

  function draw(box) {
    var source = document.getElementById(box.getAttribute("data-src"));
    if (!source) { return; }
    var data = JSON.parse(source.textContent);
    var prefix = box.getAttribute("data-src");
    var byId = {};
    data.nodes.forEach(function (n) { byId[n.id] = n; });
    var home = { x: 0, y: 0, w: Math.max(data.width, 1), h: Math.max(data.height, 1) };
    var view = { x: home.x, y: home.y, w: home.w, h: home.h };
    var root = svg("svg", { viewBox: [view.x, view.y, view.w, view.h].join(" "), preserveAspectRatio: "xMinYMin meet", role: "img" });
    var fit = Math.min(1, (box.clientWidth || 900) / home.w);
    root.style.height = Math.round(Math.min(Math.max(home.h * fit, 200), 640)) + "px";
    var defs = svg("defs");
    Object.keys(COLOURS).forEach(function (cls) {
      var marker = svg("marker", { id: prefix + "-arrow-" + cls, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9,
        markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
      marker.appendChild(svg("path", { d: "M0 0 L10 5 L0 10 z", fill: COLOURS[cls] }));
      defs.appendChild(marker);
    });
    root.appendChild(defs);
    var scene = svg("g");
    root.appendChild(scene);
    var edgeGroups = [];

    data.edges.forEach(function (e) {
      var a = byId[e.source], b = byId[e.target];
      var d = edgePath(e, a, b);
      var group = svg("g", { "class": "edge-group" });
      var line = svg("path", { d: d, "class": "edge " + e["class"], stroke: COLOURS[e["class"]], "stroke-width": e.width,
        "stroke-opacity": 0.8, "marker-end": "url(#" + prefix + "-arrow-" + e["class"] + ")" });
      var hit = svg("path", { d: d, "class": "hit", "stroke-width": Math.max(e.width, 10) });
      group.appendChild(line);
      group.appendChild(hit);
      group.addEventListener("mouseenter", function (ev) {
        showTip(ev, a.label + "  \u2192  " + b.label, [["class", e["class"]], ["count", e.count]].concat(e.runs === null || e.runs === undefined ? [] : [["runs", e.runs]]).concat([["successes", e.successes],
          ["failures", e.failures], ["success rate", e.success_rate]]).concat(e.p_value === null || e.p_value === undefined ? [] : [["p (Fisher)", e.p_value]]));
      });
      group.addEventListener("mousemove", moveTip);
      group.addEventListener("mouseleave", hideTip);
      scene.appendChild(group);
      edgeGroups.push({ edge: e, line: line });
    });

    data.nodes.forEach(function (n) {
      var group = svg("g", { "class": "node " + n.kind + (n.necessary ? "" : " unnecessary"), "data-id": n.id });
      var fill = FILLS[n.kind] || "rgba(59,130,196," + (0.15 + 0.75 * n.shade).toFixed(3) + ")";
      group.appendChild(svg("circle", { cx: n.x, cy: n.y, r: n.r, fill: fill }));
      var text = svg("text", { x: n.x, y: n.y + n.r + 13 });
      text.textContent = n.short;
      group.appendChild(text);
      group.addEventListener("mouseenter", function (ev) {
        showTip(ev, n.label, [["kind", n.kind], ["visits", n.visits], ["importance", n.importance], ["necessary", n.necessary],
          ["mean step", n.mean_step], ["layer", n.layer]]);
        edgeGroups.forEach(function (g) {
          var touches = g.edge.source === n.id || g.edge.target === n.id;
          g.line.classList.toggle("dim", !touches);
        });
      });
      group.addEventListener("mousemove", moveTip);
      group.addEventListener("mouseleave", function () {
        hideTip();
        edgeGroups.forEach(function (g) { g.line.classList.remove("dim"); });
      });
      scene.appendChild(group);
    });

    function apply() { root.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" ")); }
    function scale() {
      var rect = root.getBoundingClientRect();
      return Math.max(view.w / Math.max(rect.width, 1), view.h / Math.max(rect.height, 1));
    }
    root.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var rect = root.getBoundingClientRect(), s = scale();
      var px = view.x + (ev.clientX - rect.left) * s, py = view.y + (ev.clientY - rect.top) * s;
      var f = ev.deltaY < 0 ? 0.85 : 1 / 0.85;
      view.x = px - (px - view.x) * f;
      view.y = py - (py - view.y) * f;
      view.w *= f;
      view.h *= f;
      apply();
    }, { passive: false });
    var drag = null;
    root.addEventListener("pointerdown", function (ev) {
      drag = { x: ev.clientX, y: ev.clientY, s: scale() };
      root.classList.add("panning");
    });
    root.addEventListener("pointermove", function (ev) {
      if (!drag) { return; }
      view.x -= (ev.clientX - drag.x) * drag.s;
      view.y -= (ev.clientY - drag.y) * drag.s;
      drag.x = ev.clientX;
      drag.y = ev.clientY;
      apply();
    });
    function stop() { drag = null; root.classList.remove("panning"); }
    root.addEventListener("pointerup", stop);
    root.addEventListener("pointerleave", stop);
    var reset = document.createElement("button");
    reset.type = "button";
    reset.className = "reset";
    reset.textContent = "reset view";
    reset.addEventListener("click", function () { view = { x: home.x, y: home.y, w: home.w, h: home.h }; apply(); });
    box.appendChild(root);
    box.appendChild(reset);
    box.setAttribute("data-drawn", String(data.nodes.length));
  }

  Array.prototype.forEach.call(document.querySelectorAll(".graph[data-src]"), draw);
})();

/* Filters (agent, outcome, family, level) over the episode list, the task index and the task sections,
   and opening the episode a link points at (#ep-N). Reads only data-* attributes; writes only textContent. */
(function () {
  "use strict";
  var bar = document.getElementById("filters");
  if (!bar) { return; }
  var selects = Array.prototype.slice.call(bar.querySelectorAll("select[data-filter]"));
  var count = document.getElementById("filter-count");

  function wanted() {
    var f = {};
    selects.forEach(function (s) { f[s.getAttribute("data-filter")] = s.value; });
    return f;
  }

  function outcomeOk(want, got) { return !want || want === got || (want === "unsuccessful" && got !== "success"); }

  function placeOk(f, el) {
    return (!f.family || el.getAttribute("data-family") === f.family) && (!f.level || el.getAttribute("data-level") === f.level);
  }

  function apply() {
    var f = wanted(), shown = 0, total = 0;
    Array.prototype.forEach.call(document.querySelectorAll("details.episode"), function (el) {
      var ok = (!f.agent || el.getAttribute("data-agent") === f.agent) && outcomeOk(f.outcome, el.getAttribute("data-outcome")) && placeOk(f, el);
      el.hidden = !ok;
      total += 1;
      shown += ok ? 1 : 0;
    });
    Array.prototype.forEach.call(document.querySelectorAll(".task-entry, section.task"), function (el) {
      var pairs = [];
      try { pairs = JSON.parse(el.getAttribute("data-episodes") || "[]"); } catch (e) { pairs = []; }
      var some = (!f.agent && !f.outcome) || pairs.some(function (p) { return (!f.agent || p[0] === f.agent) && outcomeOk(f.outcome, p[1]); });
      el.hidden = !(some && placeOk(f, el));
    });
    if (count) { count.textContent = shown + " of " + total + " episodes shown"; }
  }

  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (el && el.matches("details.episode")) {
      el.hidden = false;
      el.open = true;
      el.scrollIntoView();
    }
  }

  selects.forEach(function (s) { s.addEventListener("change", apply); });
  window.addEventListener("hashchange", openTarget);
  apply();
  openTarget();
})();
