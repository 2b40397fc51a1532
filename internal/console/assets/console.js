// The console's one script: a part of the page marked data-live="ms" is fetched again every ms milliseconds (only
// that part, X-Console-Fragment: 1) and replaced when it changed, keeping the keyboard focus where it was. It stops
// when the part comes back without data-live (a transfer that settled), and pauses while the tab is hidden.
(function () {
  "use strict";
  function start(el) {
    var every = parseInt(el.getAttribute("data-live"), 10);
    if (!every) { return; }
    var last = el.innerHTML;
    function tick() {
      if (document.hidden) { setTimeout(tick, every); return; }
      fetch(location.href, { headers: { "X-Console-Fragment": "1" }, credentials: "same-origin", cache: "no-store" })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          if (html !== last) {
            var focused = document.activeElement && document.activeElement.id;
            var open = Array.prototype.map.call(el.querySelectorAll("details[open]"), function (d) {
              var row = d.closest("[data-event]"); return row ? row.getAttribute("data-event") + ":" + d.textContent.slice(0, 6) : "";
            });
            el.innerHTML = html;
            last = html;
            el.setAttribute("data-updated", String(Date.now()));
            Array.prototype.forEach.call(el.querySelectorAll("details"), function (d) {
              var row = d.closest("[data-event]");
              if (row && open.indexOf(row.getAttribute("data-event") + ":" + d.textContent.slice(0, 6)) >= 0) { d.open = true; }
            });
            if (focused) { var f = document.getElementById(focused); if (f) { f.focus(); } }
          }
          if (html.indexOf("data-final") >= 0) { return; }
          setTimeout(tick, every);
        })
        .catch(function () { setTimeout(tick, every * 2); });
    }
    setTimeout(tick, every);
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("[data-live]"), start);
  });
})();
