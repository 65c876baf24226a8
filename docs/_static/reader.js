// Small things a reader's browser does on every page (conf.py loads it).
(function () {
  "use strict";

  // The language switcher keeps the reader's place: the other language has
  // the same anchors (#section) and the same search page (?q=...).
  function keepPlace() {
    document.querySelectorAll(".language-switcher a[hreflang]").forEach(function (link) {
      if (!link.dataset.page) {
        link.dataset.page = link.getAttribute("href").split(/[?#]/)[0];
      }
      link.setAttribute("href", link.dataset.page + location.search + location.hash);
    });
  }

  // Furo opens its navigation and table of contents with <label>s, which the
  // keyboard cannot reach: each becomes a real button that toggles the same
  // checkbox, says whether its drawer is open, and moves focus into it.
  function drawerButtons() {
    document.querySelectorAll("label.nav-overlay-icon, label.toc-overlay-icon").forEach(function (label) {
      var box = document.getElementById(label.htmlFor);
      if (!box) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = label.className + " drawer-button";
      button.innerHTML = label.innerHTML;
      button.setAttribute("aria-label", box.getAttribute("aria-label") || "");
      button.setAttribute("aria-expanded", String(box.checked));
      button.addEventListener("click", function () {
        box.click();
      });
      box.addEventListener("change", function () {
        button.setAttribute("aria-expanded", String(box.checked));
        if (box.checked && button.matches(":focus-visible")) {
          var drawer = document.querySelector(
            box.id === "__toc" ? ".toc-drawer" : ".sidebar-drawer"
          );
          var first = drawer && drawer.querySelector("a[href], input, button");
          if (first) setTimeout(function () { first.focus(); }, 0);
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

  function ready() {
    keepPlace();
    drawerButtons();
    window.addEventListener("hashchange", keepPlace);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
