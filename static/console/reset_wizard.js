// The reset wizard works as a plain form; this only saves clicks: it shows the inputs of the chosen strategy,
// keeps a topic's box in step with its partitions' boxes, and switches the scope to "ticked" when one is ticked
// (or a topic is named), back to all topics when nothing is ticked or named any more.
(function () {
  "use strict";

  function setUp(form) {
    var strategy = form.querySelector("select[name=strategy]");
    var scope = form.querySelector("select[name=scope]");
    var groups = form.querySelectorAll("[data-strategies]");

    function showInputs() {
      groups.forEach(function (group) {
        group.hidden = group.getAttribute("data-strategies").split(" ").indexOf(strategy.value) < 0;
      });
    }

    function partitionsOf(topic) {
      return Array.prototype.filter.call(form.querySelectorAll("input[data-partition-of]"), function (box) {
        return box.getAttribute("data-partition-of") === topic;
      });
    }

    function topicBox(topic) {
      return Array.prototype.find.call(form.querySelectorAll("input[data-topic]"), function (box) {
        return box.getAttribute("data-topic") === topic;
      });
    }

    form.addEventListener("change", function (event) {
      var box = event.target;
      if (box === strategy) {
        showInputs();
        return;
      }
      if (box.type !== "checkbox") {
        return;
      }
      if (box.hasAttribute("data-topic")) {
        partitionsOf(box.getAttribute("data-topic")).forEach(function (p) { p.checked = box.checked; });
        box.indeterminate = false;
      } else if (box.hasAttribute("data-partition-of")) {
        // A topic box left ticked would reset the whole topic: it follows its partitions instead.
        var topic = box.getAttribute("data-partition-of");
        var ticked = partitionsOf(topic).filter(function (p) { return p.checked; }).length;
        var whole = topicBox(topic);
        whole.checked = ticked === partitionsOf(topic).length;
        whole.indeterminate = ticked > 0 && !whole.checked;
      }
      followPicks();
    });
    form.addEventListener("input", function (event) {
      if (event.target.name === "other_topics") { followPicks(); }
    });

    function followPicks() {
      if (!scope) { return; }
      var other = form.querySelector("[name=other_topics]");
      var picked = form.querySelector("input[data-topic]:checked, input[data-partition-of]:checked") !== null ||
        (other && other.value.trim() !== "");
      scope.value = picked ? "chosen" : "all";
    }

    if (strategy) {
      showInputs();
      form.querySelectorAll(".no-js-only").forEach(function (hint) { hint.hidden = true; });
    }
    form.querySelectorAll("input[data-topic]").forEach(function (box) {
      if (box.checked) {
        partitionsOf(box.getAttribute("data-topic")).forEach(function (p) { p.checked = true; });
      }
    });
  }

  function start() {
    var form = document.getElementById("reset-form");
    if (form) {
      setUp(form);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
