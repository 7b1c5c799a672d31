/* Harbourside Library: the search page.
 *
 * URL: search.html?q=sea&genre=nature&format=Book&available=1&page=2 (every parameter optional).
 * The filters form navigates to a new URL of that shape, so every result page is a plain link.
 */
(function () {
  "use strict";

  var H = window.Harbourside;
  var el = H.el;
  var PAGE_SIZE = 8;
  var FORMATS = ["Book", "E-book", "Audiobook"];

  function readState(search) {
    var params = new URLSearchParams(search);
    var genre = params.get("genre") || "";
    var format = params.get("format") || "";
    return {
      q: (params.get("q") || "").trim(),
      genre: H.genreBySlug(genre) ? genre : "",
      format: FORMATS.indexOf(format) >= 0 ? format : "",
      available: params.get("available") === "1",
      page: Math.max(1, parseInt(params.get("page"), 10) || 1),
    };
  }

  function buildUrl(s) {
    var params = new URLSearchParams();
    if (s.q) params.set("q", s.q);
    if (s.genre) params.set("genre", s.genre);
    if (s.format) params.set("format", s.format);
    if (s.available) params.set("available", "1");
    if (s.page > 1) params.set("page", String(s.page));
    var qs = params.toString();
    return "search.html" + (qs ? "?" + qs : "");
  }

  var state = readState(window.location.search);
  var form = document.getElementById("filters");

  /* ---------- the filters form ---------- */

  function syncForm() {
    document.getElementById("filter-q").value = state.q;
    document.getElementById("filter-genre").value = state.genre;
    document.getElementById("filter-available").checked = state.available;
    form.querySelectorAll('input[name="format"]').forEach(function (radio) {
      radio.checked = radio.value === state.format;
    });
    var clear = buildUrl({ q: state.q, page: 1 });
    document.getElementById("clear-filters").setAttribute("href", clear);
    document.getElementById("no-results-clear").setAttribute("href", clear);
  }

  function formState() {
    var checked = form.querySelector('input[name="format"]:checked');
    return {
      q: state.q,
      genre: document.getElementById("filter-genre").value,
      format: checked ? checked.value : "",
      available: document.getElementById("filter-available").checked,
      page: 1,
    };
  }

  form.addEventListener("change", function () {
    window.location.assign(buildUrl(formState()));
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    window.location.assign(buildUrl(formState()));
  });

  /* ---------- results ---------- */

  function describe(count) {
    var text = count + (count === 1 ? " result" : " results");
    if (state.q) text += " for \u201c" + state.q + "\u201d";
    if (state.genre) text += " in " + H.genreBySlug(state.genre).name;
    if (state.format) text += " (" + state.format + ")";
    if (state.available) text += ", available now";
    return text;
  }

  function resultRow(book, requested) {
    return el("li", { class: "result", id: "result-" + book.id, "data-book-id": book.id },
      el("h3", { class: "result-title" },
        el("a", { id: "result-link-" + book.id, href: "book.html?id=" + encodeURIComponent(book.id) }, book.title)),
      el("p", { class: "result-meta" },
        el("span", { class: "result-author" }, book.author), " · ",
        el("span", { class: "result-year" }, String(book.year)), " · ",
        el("span", { class: "result-format" }, book.format), " · ",
        el("span", { class: "result-genre" }, book.genre)),
      el("p", { class: "result-status" }, H.availabilityBadge(book, requested)));
  }

  function pageItem(label, id, page, current, enabled, rel) {
    if (!enabled) return el("li", {}, el("span", { id: id, class: "disabled", "aria-disabled": "true" }, label));
    var s = Object.assign({}, state, { page: page });
    return el("li", {}, el("a", { id: id, href: buildUrl(s), "aria-current": current ? "page" : null, rel: rel || null }, label));
  }

  function renderPagination(page, pages) {
    var nav = document.getElementById("pagination");
    var list = document.getElementById("pagination-list");
    list.textContent = "";
    nav.hidden = pages <= 1;
    if (pages <= 1) return;
    list.appendChild(pageItem("Previous", "page-prev", page - 1, false, page > 1, "prev"));
    for (var n = 1; n <= pages; n++) list.appendChild(pageItem(String(n), "page-" + n, n, n === page, true));
    list.appendChild(pageItem("Next", "page-next", page + 1, false, page < pages, "next"));
  }

  function render(books) {
    var requests = H.getRequests();
    var hits = books.filter(function (b) {
      return H.matchesQuery(b, state.q) &&
        (!state.genre || H.genreSlug(b.genre) === state.genre) &&
        (!state.format || b.format === state.format) &&
        (!state.available || b.available);
    });
    var pages = Math.max(1, Math.ceil(hits.length / PAGE_SIZE));
    var page = Math.min(state.page, pages);
    var first = (page - 1) * PAGE_SIZE;
    var rows = hits.slice(first, first + PAGE_SIZE);

    document.getElementById("result-count").textContent = describe(hits.length);
    document.getElementById("result-range").textContent = hits.length
      ? "Showing " + (first + 1) + "\u2013" + (first + rows.length) + " of " + hits.length + " \u00b7 page " + page + " of " + pages
      : "";
    var list = document.getElementById("results");
    list.textContent = "";
    list.setAttribute("start", String(first + 1));
    rows.forEach(function (book) { list.appendChild(resultRow(book, Boolean(requests[book.id]))); });
    document.getElementById("no-results").hidden = hits.length > 0;
    renderPagination(page, pages);
    if (state.q) document.title = "\u201c" + state.q + "\u201d \u2013 Search \u2013 Harbourside Library";
    document.body.setAttribute("data-ready", "true");
  }

  syncForm();
  H.loadBooks().then(render, function () {
    document.getElementById("result-count").textContent = "The catalogue could not be loaded. Please try again later.";
    document.body.setAttribute("data-ready", "error");
  });
})();
