// The search page's summary of each result (docs/_templates/search.html loads
// this). Upstream limitation (Sphinx 9.0): searchtools.js summarizes a page
// from the top of its text, so a term in a lesson's first lines brought the
// lines every lesson opens with ("Go to the end to download...", "Executed
// with PyTorch ... on 2026-11-23.") and no way to leave them out. So conf.py
// turns Sphinx's summaries off (html_show_search_summary) and this writes
// them from the page's own text, around the first whole word searched for,
// with the whole words marked as Sphinx marks them.
(function () {
  "use strict";

  var OPENING = "h1, .sphx-glr-download-link-note, .lesson-run, .page-links, .headerlink, script, style";
  var LATIN = /[A-Za-z0-9_\u00c0-\u024f]/;
  // Where a summary is cut: Chinese marks it with its own ellipsis.
  var CUT = /^zh/.test(document.documentElement.lang) ? "\u2026\u2026" : "...";

  // The search's words as a regular expression: each a whole word, or
  // (whole: false) the start of one; Chinese words anywhere.
  function words(query, whole) {
    return query.split(/\s+/).filter(Boolean).map(function (word) {
      var escaped = word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (!LATIN.test(word)) return escaped;
      return "(?<![A-Za-z0-9_])" + escaped + (whole ? "(?![A-Za-z0-9_])" : "");
    }).join("|");
  }

  function summary(li, query) {
    var pattern = words(query, true);
    var link = li.querySelector("a");
    fetch(link.href)
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var page = new DOMParser().parseFromString(html, "text/html");
        var main = page.querySelector("[role=main]");
        if (!main) return;
        var id = decodeURIComponent(new URL(link.href).hash.slice(1));
        var part = (id && page.getElementById(id)) || main;
        part.querySelectorAll(OPENING).forEach(function (e) { e.remove(); });
        part.querySelectorAll("math").forEach(function (m) {
          m.replaceWith(m.textContent.replace(/\s+/g, ""));
        });
        var text = part.textContent.replace(/\s+/g, " ").trim();
        var found = pattern ? text.search(new RegExp(pattern, "i")) : -1;
        if (found < 0 && pattern) found = text.search(new RegExp(words(query, false), "i"));
        var start = Math.max(0, found - 100);
        var space = text.indexOf(" ", start);
        if (start > 0 && space >= 0 && space < start + 20) start = space + 1;
        var shown = (start > 0 ? CUT : "") + text.substr(start, 240) + (start + 240 < text.length ? CUT : "");
        var p = document.createElement("p");
        p.className = "context";
        shown.split(pattern ? new RegExp("(" + pattern + ")", "gi") : /$^/).forEach(function (piece, i) {
          if (i % 2) {
            var mark = p.appendChild(document.createElement("span"));
            mark.className = "highlighted";
            mark.textContent = piece;
          } else {
            p.appendChild(document.createTextNode(piece));
          }
        });
        li.appendChild(p);
      });
  }

  // Each result as Sphinx adds it; one with a description (an API name)
  // already says what it is.
  var results = document.getElementById("search-results");
  var query = new URLSearchParams(location.search).get("q") || "";
  new MutationObserver(function (records) {
    records.forEach(function (record) {
      record.addedNodes.forEach(function (node) {
        if (node.nodeName === "LI" && !node.querySelector("span")) summary(node, query);
      });
    });
  }).observe(results, { childList: true, subtree: true });
})();
