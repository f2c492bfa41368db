// The replay form works as a plain form; this shows each start and end choice's own input only when it is chosen,
// the offsets table only when a bound uses it, and asks for the chosen topic's partitions when the topic changes.
(function () {
  "use strict";

  function show(form) {
    var usesTable = false;
    form.querySelectorAll("[data-bound]").forEach(function (set) {
      var chosen = set.querySelector("input[type=radio]:checked");
      var kind = chosen ? chosen.value : "";
      usesTable = usesTable || kind === "offsets";
      set.querySelectorAll(".bound-input").forEach(function (input) {
        input.hidden = input.getAttribute("data-kind") !== kind && !input.querySelector("[aria-invalid=true]");
      });
    });
    var table = form.querySelector(".offsets-table");
    if (table) { table.hidden = !usesTable; }
  }

  function setUp(form) {
    var topic = form.querySelector("input[name=topic]");
    var load = form.querySelector("[data-topic-load]");
    if (load) { load.hidden = true; }
    if (topic && load) {
      topic.addEventListener("change", function () { load.click(); });
    }
    form.addEventListener("change", function (evt) {
      if (evt.target.matches("input[type=radio]")) { show(form); }
    });
    show(form);
  }

  function start() { document.querySelectorAll("form.replay-form").forEach(setUp); }
  document.addEventListener("htmx:afterSettle", function (evt) {
    var form = evt.target.closest && evt.target.closest("form.replay-form");
    if (form) { show(form); }
  });
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
