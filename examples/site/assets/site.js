/* Harbourside Library: behaviour shared by every page.
 *
 * - the "Browse" dropdown menu in the primary navigation
 * - tabs (any [role="tablist"]) and accordions ([data-accordion])
 * - a modal dialog helper and a toast message
 * - catalogue helpers (loading data/books.json, matching a query, loan requests in localStorage)
 *
 * Everything is deterministic: no clocks, no randomness, no network except same-origin fetches.
 */
(function () {
  "use strict";

  var GENRES = [
    { slug: "mystery", name: "Mystery" },
    { slug: "science-fiction", name: "Science Fiction" },
    { slug: "history", name: "History" },
    { slug: "nature", name: "Nature" },
    { slug: "poetry", name: "Poetry" },
  ];
  var REQUESTS_KEY = "harbourside.loanRequests";
  var TOAST_MS = 12000;

  /* ---------- small DOM helper ---------- */

  // el("a", {href: "x", id: "y"}, "text", otherNode) -> element; attributes set via setAttribute.
  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      node.setAttribute(key, value === true ? "" : String(value));
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  /* ---------- Browse menu ---------- */

  function initMenu() {
    var button = document.getElementById("browse-button");
    var menu = document.getElementById("browse-menu");
    if (!button || !menu) return;
    function items() {
      return Array.prototype.slice.call(menu.querySelectorAll('[role="menuitem"]'));
    }
    function open(focusFirst) {
      menu.hidden = false;
      button.setAttribute("aria-expanded", "true");
      if (focusFirst) items()[0].focus();
    }
    function close(returnFocus) {
      menu.hidden = true;
      button.setAttribute("aria-expanded", "false");
      if (returnFocus) button.focus();
    }
    button.addEventListener("click", function () {
      if (menu.hidden) open(false);
      else close(false);
    });
    button.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown") {
        event.preventDefault();
        open(true);
      }
    });
    menu.addEventListener("keydown", function (event) {
      var list = items();
      var index = list.indexOf(document.activeElement);
      if (event.key === "ArrowDown") {
        event.preventDefault();
        list[(index + 1) % list.length].focus();
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        list[(index - 1 + list.length) % list.length].focus();
      } else if (event.key === "Tab") {
        close(false);
      }
    });
    document.addEventListener("click", function (event) {
      if (!menu.hidden && !button.contains(event.target) && !menu.contains(event.target)) close(false);
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && !menu.hidden) close(true);
    });
  }

  /* ---------- Tabs ---------- */

  function initTabs() {
    document.querySelectorAll('[role="tablist"]').forEach(function (list) {
      var tabs = Array.prototype.slice.call(list.querySelectorAll('[role="tab"]'));
      function select(tab, focus) {
        tabs.forEach(function (t) {
          var on = t === tab;
          t.setAttribute("aria-selected", on ? "true" : "false");
          t.tabIndex = on ? 0 : -1;
          document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
        });
        if (focus) tab.focus();
      }
      tabs.forEach(function (tab, i) {
        tab.addEventListener("click", function () {
          select(tab, false);
        });
        tab.addEventListener("keydown", function (event) {
          var next = null;
          if (event.key === "ArrowRight") next = tabs[(i + 1) % tabs.length];
          else if (event.key === "ArrowLeft") next = tabs[(i - 1 + tabs.length) % tabs.length];
          else if (event.key === "Home") next = tabs[0];
          else if (event.key === "End") next = tabs[tabs.length - 1];
          if (next) {
            event.preventDefault();
            select(next, true);
          }
        });
      });
    });
  }

  /* ---------- Accordions (open without JS, collapsed once the script runs) ---------- */

  function initAccordions() {
    document.querySelectorAll("[data-accordion] button[aria-controls]").forEach(function (button) {
      var panel = document.getElementById(button.getAttribute("aria-controls"));
      function set(open) {
        button.setAttribute("aria-expanded", open ? "true" : "false");
        panel.hidden = !open;
      }
      set(false);
      button.addEventListener("click", function () {
        set(button.getAttribute("aria-expanded") !== "true");
      });
    });
  }

  /* ---------- Modal dialog ---------- */

  var openDialog = null;
  var returnFocusTo = null;

  function setPageInert(on) {
    document.querySelectorAll("body > .skip-link, body > header, body > main, body > footer").forEach(function (node) {
      node.inert = on;
    });
  }

  function openModal(dialog) {
    returnFocusTo = document.activeElement;
    openDialog = dialog;
    document.getElementById("modal-backdrop").hidden = false;
    dialog.hidden = false;
    setPageInert(true);
    var first = dialog.querySelector("input, select, textarea, button");
    if (first) first.focus();
  }

  function closeModal(dialog) {
    dialog.hidden = true;
    document.getElementById("modal-backdrop").hidden = true;
    setPageInert(false);
    openDialog = null;
    if (returnFocusTo && !returnFocusTo.disabled) returnFocusTo.focus();
    returnFocusTo = null;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && openDialog) closeModal(openDialog);
  });

  /* ---------- Toast ---------- */

  var toastTimer = null;

  function showToast(message) {
    var toast = document.getElementById("toast");
    if (!toast) return;
    toast.textContent = message;
    toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () {
      toast.hidden = true;
      toast.textContent = "";
    }, TOAST_MS);
  }

  /* ---------- Catalogue helpers ---------- */

  var booksPromise = null;

  function loadBooks() {
    if (!booksPromise) {
      booksPromise = fetch("data/books.json").then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      });
    }
    return booksPromise;
  }

  function genreSlug(name) {
    return name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  }

  function genreBySlug(slug) {
    return GENRES.filter(function (g) { return g.slug === slug; })[0] || null;
  }

  function words(text) {
    return text.toLowerCase().match(/[a-z0-9]+/g) || [];
  }

  // Every word of the query must begin some word of the title, author or summary ("sea" finds "Seabirds").
  function matchesQuery(book, query) {
    var terms = words(query || "");
    if (!terms.length) return true;
    var haystack = words(book.title + " " + book.author + " " + book.summary);
    return terms.every(function (term) {
      return haystack.some(function (word) { return word.indexOf(term) === 0; });
    });
  }

  function getRequests() {
    try {
      return JSON.parse(window.localStorage.getItem(REQUESTS_KEY) || "{}") || {};
    } catch (err) {
      return {};
    }
  }

  function saveRequest(bookId, info) {
    var all = getRequests();
    all[bookId] = info;
    try {
      window.localStorage.setItem(REQUESTS_KEY, JSON.stringify(all));
    } catch (err) {
      /* storage disabled: the request still shows for this page view */
    }
  }

  function availabilityBadge(book, requested) {
    if (requested) return el("span", { class: "badge badge-requested" }, "Requested");
    return book.available
      ? el("span", { class: "badge badge-available" }, "Available")
      : el("span", { class: "badge badge-onloan" }, "On loan");
  }

  window.Harbourside = {
    GENRES: GENRES,
    el: el,
    openModal: openModal,
    closeModal: closeModal,
    showToast: showToast,
    loadBooks: loadBooks,
    genreSlug: genreSlug,
    genreBySlug: genreBySlug,
    matchesQuery: matchesQuery,
    getRequests: getRequests,
    saveRequest: saveRequest,
    availabilityBadge: availabilityBadge,
  };

  /* ---------- start ---------- */

  initMenu();
  initTabs();
  initAccordions();

  // Keep the header search box showing the current query on every page.
  var q = new URLSearchParams(window.location.search).get("q");
  var input = document.getElementById("search-input");
  if (q && input) input.value = q;
})();
