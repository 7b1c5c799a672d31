/* Harbourside Library: the book detail page (book.html?id=b01).
 *
 * Fills in the catalogue record, the tabs and "More like this", and runs the "Request a loan"
 * dialog: the card number must be exactly 8 digits; a valid request is remembered in
 * localStorage, the page then shows "Requested", and a toast confirms the pickup branch.
 */
(function () {
  "use strict";

  var H = window.Harbourside;
  var el = H.el;
  var LOAN_DAYS = { Book: 21, "E-book": 14, Audiobook: 14 };
  var FLOORS = { Mystery: "Ground floor", Poetry: "Ground floor", "Science Fiction": "First floor", History: "First floor", Nature: "First floor" };

  var bookId = new URLSearchParams(window.location.search).get("id") || "";

  function text(id, value) {
    document.getElementById(id).textContent = value;
  }

  function showRequested(branch) {
    var status = document.getElementById("book-status");
    status.className = "badge badge-requested";
    status.textContent = "Requested";
    text("loan-status", "Pick up at " + branch + " within 7 days.");
    var button = document.getElementById("request-loan");
    button.disabled = true;
    button.textContent = "Requested";
  }

  function renderDetails(book) {
    var list = document.getElementById("book-details");
    var rows = [
      ["Genre", book.genre],
      ["Format", book.format],
      ["Loan period", LOAN_DAYS[book.format] + " days"],
      ["Location", FLOORS[book.genre] + ", shelf " + book.shelf],
      ["On the shelf now", book.available ? "Yes" : "No, all copies are on loan"],
    ];
    rows.forEach(function (row) {
      list.appendChild(el("dt", {}, row[0]));
      list.appendChild(el("dd", {}, row[1]));
    });
  }

  function renderReviews(book) {
    var list = document.getElementById("book-reviews");
    if (!book.reviews.length) {
      list.appendChild(el("li", { class: "review-empty" }, "No reviews yet."));
      return;
    }
    book.reviews.forEach(function (review, i) {
      list.appendChild(el("li", { class: "review", id: "review-" + (i + 1) },
        el("p", { class: "review-rating" }, "Rated " + review.rating + " out of 5 ",
          el("span", { "aria-hidden": "true" }, "\u2605".repeat(review.rating) + "\u2606".repeat(5 - review.rating))),
        el("blockquote", {}, el("p", {}, review.text)),
        el("p", { class: "review-by" }, "\u2014 " + review.reviewer)));
    });
  }

  function renderRelated(book, books) {
    var list = document.getElementById("related");
    books.filter(function (b) { return b.genre === book.genre && b.id !== book.id; })
      .slice(0, 3)
      .forEach(function (b) {
        list.appendChild(el("li", {},
          el("a", { id: "related-" + b.id, href: "book.html?id=" + b.id }, b.title), " by " + b.author));
      });
  }

  function render(book, books) {
    var slug = H.genreSlug(book.genre);
    document.title = book.title + " \u2013 Harbourside Library";
    var crumb = document.getElementById("crumb-genre");
    crumb.textContent = book.genre;
    crumb.setAttribute("href", "search.html?genre=" + slug);
    text("crumb-current", book.title);

    text("book-genre", book.genre);
    text("book-title", book.title);
    var author = document.getElementById("book-author");
    author.textContent = book.author;
    author.setAttribute("href", "search.html?q=" + encodeURIComponent(book.author).replace(/%20/g, "+"));
    var badge = H.availabilityBadge(book, false);
    var status = document.getElementById("book-status");
    status.className = badge.className;
    status.textContent = badge.textContent;
    text("meta-isbn", book.isbn);
    text("meta-year", String(book.year));
    text("meta-shelf", book.shelf);
    text("meta-format", book.format);
    text("meta-copies", String(book.copies));
    text("book-summary", book.summary);
    renderDetails(book);
    renderReviews(book);
    renderRelated(book, books);

    var request = H.getRequests()[book.id];
    if (request) showRequested(request.branch);
    initLoanDialog(book);

    document.getElementById("book-loading").hidden = true;
    document.getElementById("book").hidden = false;
    document.body.setAttribute("data-ready", "true");
  }

  function initLoanDialog(book) {
    var dialog = document.getElementById("loan-dialog");
    var form = document.getElementById("loan-form");
    var nameInput = document.getElementById("loan-name");
    var cardInput = document.getElementById("loan-card");
    var error = document.getElementById("loan-error");

    function clearError() {
      error.hidden = true;
      error.textContent = "";
      nameInput.removeAttribute("aria-invalid");
      cardInput.removeAttribute("aria-invalid");
    }

    text("loan-book-title", book.title);
    document.getElementById("request-loan").addEventListener("click", function () {
      clearError();
      H.openModal(dialog);
    });
    document.getElementById("loan-cancel").addEventListener("click", function () {
      H.closeModal(dialog);
    });

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      clearError();
      var messages = [];
      var firstBad = null;
      if (!nameInput.value.trim()) {
        messages.push("Please enter your name.");
        nameInput.setAttribute("aria-invalid", "true");
        firstBad = nameInput;
      }
      if (!/^[0-9]{8}$/.test(cardInput.value.trim())) {
        messages.push("Library card number must be exactly 8 digits.");
        cardInput.setAttribute("aria-invalid", "true");
        firstBad = firstBad || cardInput;
      }
      if (messages.length) {
        error.textContent = messages.join(" ");
        error.hidden = false;
        firstBad.focus();
        return;
      }
      var branch = document.getElementById("loan-branch").value;
      H.saveRequest(book.id, { branch: branch });
      H.closeModal(dialog);
      form.reset();
      showRequested(branch);
      H.showToast("Loan requested: " + book.title + " \u2014 pick up at " + branch);
    });
  }

  function notFound() {
    document.title = "Book not found \u2013 Harbourside Library";
    text("crumb-current", "Book not found");
    document.getElementById("book-loading").hidden = true;
    document.getElementById("book-not-found").hidden = false;
    document.body.setAttribute("data-ready", "true");
  }

  H.loadBooks().then(function (books) {
    var book = books.filter(function (b) { return b.id === bookId; })[0];
    if (book) render(book, books);
    else notFound();
  }, function () {
    text("book-loading", "The catalogue could not be loaded. Please try again later.");
    document.body.setAttribute("data-ready", "error");
  });
})();
