// Sorting and filtering for the catalogue's tables (package data, copied into the site; no network, no
// library). Without JavaScript the page is a plain table: this script only adds behaviour.
"use strict";
(function () {
  function cellValue(row, index) {
    var cell = row.children[index];
    return cell ? (cell.getAttribute("data-value") || "") : "";
  }

  function compare(kind, a, b) {
    if (kind === "number") {
      // Rows without a figure ("not measured") sort after every figure, whatever the direction.
      if (a === "" || b === "") { return a === b ? 0 : (a === "" ? 1 : -1); }
      return parseFloat(a) - parseFloat(b);
    }
    return a.localeCompare(b);
  }

  function sortBy(table, th, kind) {
    var headers = Array.prototype.slice.call(th.parentNode.children);
    var index = headers.indexOf(th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var a = cellValue(r1, index), b = cellValue(r2, index);
      var missing = kind === "number" && (a === "" || b === "");
      var order = compare(kind, a, b);
      return missing || ascending ? order : -order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    headers.forEach(function (h) { if (h !== th) { h.removeAttribute("aria-sort"); } });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  function filter(table, input, count) {
    var query = input.value.trim().toLowerCase();
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var shown = 0;
    rows.forEach(function (r) {
      var match = !query || r.textContent.toLowerCase().indexOf(query) !== -1;
      r.hidden = !match;
      if (match) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " builds shown";
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th button[data-sort]").forEach(function (button) {
      button.addEventListener("click", function () {
        sortBy(table, button.parentNode, button.getAttribute("data-sort"));
      });
    });
  });
  var controls = document.querySelector("[data-filter]");
  var table = document.getElementById("builds");
  if (controls && table) {
    var input = document.getElementById("filter");
    var count = document.getElementById("filter-count");
    controls.hidden = false;
    input.addEventListener("input", function () { filter(table, input, count); });
    filter(table, input, count);
  }
})();
