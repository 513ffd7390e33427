// Incident pages: open what hides a permalinked line, and close context panels.
(function () {
  "use strict";

  function reveal() {
    var id = decodeURIComponent((location.hash || "").slice(1));
    if (!id) { return; }
    var target = document.getElementById(id);
    if (!target) { return; }
    for (var el = target.parentElement; el; el = el.parentElement) {
      if (el.tagName === "DETAILS") { el.open = true; }
    }
    var old = document.querySelectorAll(".flash");
    for (var i = 0; i < old.length; i++) { old[i].classList.remove("flash"); }
    target.classList.add("flash");
    target.scrollIntoView({block: "center"});
  }

  document.addEventListener("click", function (event) {
    var close = event.target.closest(".ctx-close");
    if (close) {
      var slot = close.closest(".ctx-slot");
      if (slot) { slot.innerHTML = ""; }
      return;
    }
    // A mark or link to a line inside a closed <details> (e.g. the event list).
    var link = event.target.closest("a[href^='#ev-']");
    if (link) { setTimeout(reveal, 0); }
  });
  window.addEventListener("hashchange", reveal);
  document.addEventListener("DOMContentLoaded", reveal);
})();
