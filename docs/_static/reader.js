// Small things a reader's browser does on every page (conf.py loads it).
(function () {
  "use strict";

  // The language switcher keeps the reader's place: the other language has
  // the same anchors (#section) and the same search page (?q=...). The place
  // is the address's #anchor while its target is on screen (the reader came
  // by a link to it), else the last section whose heading has scrolled above
  // the top of the window (under Furo's header, on a phone).
  function place() {
    var hash = location.hash;
    var target = hash && document.getElementById(decodeURIComponent(hash.slice(1)));
    if (target) {
      var top = target.getBoundingClientRect().top;
      if (top >= -1 && top < innerHeight) return hash;
    }
    var header = document.querySelector(".mobile-header");
    var edge = header && header.offsetParent ? header.getBoundingClientRect().bottom : 0;
    var here = "";
    var headings = document.querySelectorAll("article section[id] > :is(h1, h2, h3, h4, h5, h6)");
    for (var i = 0; i < headings.length; i++) {
      if (headings[i].getBoundingClientRect().top > edge + 1) break;
      here = "#" + headings[i].parentElement.id;
    }
    return here;
  }

  function keepPlace() {
    var here = place();
    document.querySelectorAll(".language-switcher a[hreflang]").forEach(function (link) {
      if (!link.dataset.page) {
        link.dataset.page = link.getAttribute("href").split(/[?#]/)[0];
      }
      link.setAttribute("href", link.dataset.page + location.search + here);
    });
  }

  // Furo opens its navigation and table of contents with <label>s, which the
  // keyboard cannot reach: each becomes a real button that toggles the same
  // checkbox and says whether its drawer is open. Opened from the keyboard,
  // the drawer takes the focus (custom.css shows it at once, so that it can),
  // and gives it back to the button when it closes (Escape, or the button).
  function drawerButtons() {
    var openers = {};
    document.querySelectorAll("label.nav-overlay-icon, label.toc-overlay-icon").forEach(function (label) {
      var box = document.getElementById(label.htmlFor);
      if (!box) return;
      var drawer = document.querySelector(box.id === "__toc" ? ".toc-drawer" : ".sidebar-drawer");
      var button = document.createElement("button");
      button.type = "button";
      button.className = label.className + " drawer-button";
      button.innerHTML = label.innerHTML;
      button.setAttribute("aria-label", box.getAttribute("aria-label") || "");
      button.setAttribute("aria-expanded", String(box.checked));
      button.addEventListener("click", function () {
        openers[box.id] = button.matches(":focus-visible") ? button : null;
        box.click();
      });
      box.addEventListener("change", function () {
        button.setAttribute("aria-expanded", String(box.checked));
        if (openers[box.id] !== button || !drawer) return;
        if (box.checked) {
          var first = drawer.querySelector("a[href], input, button");
          if (first) first.focus();
        } else {
          openers[box.id] = null;
          if (drawer.contains(document.activeElement) || document.activeElement === document.body) {
            button.focus();
          }
        }
      });
      label.replaceWith(button);
    });
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape") return;
      ["__navigation", "__toc"].forEach(function (id) {
        var box = document.getElementById(id);
        if (box && box.checked) box.click();
      });
    });
  }

  // A graph opens large in the viewer that docs/_templates/page.html writes
  // on a page with graphs: the same image, so the same file and the page's
  // colour scheme, at least its full size, zoomed with the buttons or the
  // + and - keys, scrolled with the arrow keys; Escape closes it. Without
  // JavaScript, the graph's link opens its SVG file.
  function graphViewer() {
    var dialog = document.getElementById("graph-viewer");
    if (!dialog || !dialog.showModal) return;
    var body = dialog.querySelector(".graph-viewer-body");
    var shown = null, natural = 0, width = 0;
    function zoom(factor) {
      width = Math.min(8 * natural, Math.max(natural / 4, width * factor));
      shown.style.width = width + "px";
    }
    dialog.querySelectorAll("[data-zoom]").forEach(function (button) {
      button.addEventListener("click", function () { zoom(parseFloat(button.dataset.zoom)); });
    });
    dialog.querySelector("[data-close]").addEventListener("click", function () { dialog.close(); });
    dialog.addEventListener("keydown", function (event) {
      if (event.key === "+" || event.key === "=") zoom(1.25);
      else if (event.key === "-") zoom(0.8);
    });
    document.querySelectorAll("a.image-reference").forEach(function (link) {
      var graph = link.querySelector("img.autograd-graph");
      if (!graph) return;
      link.addEventListener("click", function (event) {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.button) return;
        event.preventDefault();
        shown = new Image();
        shown.src = graph.currentSrc || graph.src;
        shown.alt = graph.alt;
        body.replaceChildren(shown);
        dialog.showModal();
        body.focus();
        // Its full size, or larger, up to twice, where the window has room.
        var room = Math.min(
          (body.clientWidth - 48) / graph.naturalWidth,
          (body.clientHeight - 48) / graph.naturalHeight
        );
        width = natural = graph.naturalWidth;
        zoom(Math.min(2, Math.max(1, room)));
      });
    });
  }

  // Search. Upstream limitation (Sphinx 9.0): a page opened from the search
  // results marks the search's words inside longer words too ("grad" in
  // "gradient"); those marks are taken away, the whole words stay marked.
  // (docs/_static/search-results.js writes the results' summaries.)
  var LATIN = /[A-Za-z0-9_\u00c0-\u024f]/;

  // The character next to *node* in its parent, before it or after it.
  function neighbour(node, after) {
    for (var n = after ? node.nextSibling : node.previousSibling; n; n = after ? n.nextSibling : n.previousSibling) {
      var text = n.textContent;
      if (text) return after ? text.charAt(0) : text.slice(-1);
    }
    return "";
  }

  function wholeWordMarks() {
    new MutationObserver(function () {
      document.querySelectorAll("span.highlighted").forEach(function (mark) {
        var edge = neighbour(mark, false) + neighbour(mark, true);
        if (LATIN.test(mark.textContent) && LATIN.test(edge)) {
          var parent = mark.parentNode;
          mark.replaceWith(mark.textContent);
          parent.normalize();
        }
      });
    }).observe(document.body, { childList: true, subtree: true });
  }

  function ready() {
    drawerButtons();
    graphViewer();
    document.querySelectorAll(".language-switcher").forEach(function (switcher) {
      ["pointerdown", "focusin", "click"].forEach(function (type) {
        switcher.addEventListener(type, keepPlace);
      });
    });
    keepPlace();
  }
  wholeWordMarks();
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
