// The message browser works without this file (rows open as native <details>, pages load through links); this adds
// the JSON tree of an opened record, copying (the decoded, masked text the page shows), the row menus, the fields
// of the chosen start, and pausing the live tail while the person reads (scrolled down, a record or menu open).
(function () {
  "use strict";
  var OPEN_DEPTH = 2;  // tree levels open at first; deeper ones open on a click
  var LONG_LIST = 50;  // longer arrays and objects start closed

  // ---- the JSON tree --------------------------------------------------------------------------------------------
  function span(cls, text) {
    var s = document.createElement("span");
    s.className = cls;
    s.textContent = text;
    return s;
  }

  function leafSpan(value) {
    if (typeof value === "string") { return span("jt-string", JSON.stringify(value)); }
    if (typeof value === "number") { return span("jt-number", String(value)); }
    return span("jt-literal", String(value));
  }

  function node(label, value, depth) {
    var isList = Array.isArray(value);
    if (value === null || typeof value !== "object") {
      var leaf = document.createElement("div");
      leaf.className = "jt-leaf";
      if (label !== null) { leaf.appendChild(span("jt-key", label)); leaf.appendChild(document.createTextNode(": ")); }
      leaf.appendChild(leafSpan(value));
      return leaf;
    }
    var keys = isList ? value.map(function (_, i) { return i; }) : Object.keys(value);
    var details = document.createElement("details");
    details.open = depth < OPEN_DEPTH && keys.length <= LONG_LIST;
    var summary = document.createElement("summary");
    if (label !== null) { summary.appendChild(span("jt-key", label)); summary.appendChild(document.createTextNode(": ")); }
    summary.appendChild(document.createTextNode(isList ? "[" : "{"));
    summary.appendChild(span("jt-count", " " + keys.length + (isList ? " item" : " key") + (keys.length === 1 ? "" : "s") + " "));
    summary.appendChild(document.createTextNode(isList ? "]" : "}"));
    details.appendChild(summary);
    keys.forEach(function (k) {
      details.appendChild(node(isList ? String(k) : JSON.stringify(k), value[k], depth + 1));
    });
    return details;
  }

  function buildTree(pre) {
    if (pre.dataset.treeBuilt) { return; }
    pre.dataset.treeBuilt = "1";
    var parsed;
    try { parsed = JSON.parse(pre.textContent); } catch (e) { return; }  // cut at the page's limit: the text stays
    var tree = document.createElement("div");
    tree.className = "json-tree";
    tree.setAttribute("data-tree-of", pre.id);
    tree.appendChild(node(null, parsed, 0));
    pre.parentNode.insertBefore(tree, pre);
    pre.hidden = true;
    var toggle = document.querySelector('[data-raw-toggle="#' + pre.id + '"]');
    if (toggle) { toggle.hidden = false; toggle.textContent = "raw"; }
  }

  function treesIn(root) {
    root.querySelectorAll("pre[data-json]").forEach(buildTree);
  }

  function toggleRaw(button) {
    var pre = document.querySelector(button.getAttribute("data-raw-toggle"));
    var tree = pre && pre.parentNode.querySelector('[data-tree-of="' + pre.id + '"]');
    if (!tree) { return; }
    var showRaw = !pre.hidden ? false : true;
    pre.hidden = !showRaw;
    tree.hidden = showRaw;
    button.textContent = showRaw ? "tree" : "raw";
  }

  // ---- copying ------------------------------------------------------------------------------------------------------
  function copyText(text, button) {
    function done(ok) {
      var label = button.textContent;
      button.textContent = ok ? "copied" : "copy failed";
      window.setTimeout(function () { button.textContent = label; }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(fallbackCopy(text)); });
    } else {
      done(fallbackCopy(text));
    }
  }

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    area.remove();
    return ok;
  }

  // ---- the start's own fields -------------------------------------------------------------------------------------
  function showStartFields(form) {
    var start = form.querySelector("select[name=start]");
    if (!start) { return; }
    form.querySelectorAll("[data-start-field]").forEach(function (label) {
      var wanted = label.getAttribute("data-start-field") === start.value;
      label.hidden = !wanted && !label.querySelector("[aria-invalid=true]");
    });
  }

  // ---- the live tail -----------------------------------------------------------------------------------------------
  var tail = { manual: false };
  function pauseReason() {
    if (tail.manual) { return "Paused."; }
    if (document.querySelector("#record-rows .record-row[open]")) { return "Paused while a record is open."; }
    if (document.querySelector("#records .row-menu[open]")) { return "Paused while a menu is open."; }
    if (window.scrollY > 120) { return "Paused while you read below; back at the top it follows again."; }
    return "";
  }
  function showTail() {
    var bar = document.querySelector("[data-tail]");
    if (!bar) { return; }
    var reason = pauseReason();
    bar.classList.toggle("paused", reason !== "");
    var state = bar.querySelector("[data-tail-state]");
    if (state) { state.textContent = reason || "Live: new records appear at the top."; }
    var button = bar.querySelector("[data-tail-toggle]");
    if (button) { button.hidden = false; button.textContent = tail.manual ? "Follow" : "Pause"; }
  }
  document.addEventListener("htmx:beforeRequest", function (evt) {
    if (evt.detail.elt && evt.detail.elt.id === "tail" && pauseReason()) { evt.preventDefault(); }
  });
  var scrollQueued = false;
  window.addEventListener("scroll", function () {
    if (scrollQueued) { return; }
    scrollQueued = true;
    window.requestAnimationFrame(function () { scrollQueued = false; showTail(); });
  }, { passive: true });

  // ---- events ---------------------------------------------------------------------------------------------------------
  document.addEventListener("toggle", function (evt) {
    var d = evt.target;
    if (!d.matches) { return; }
    if (d.matches(".record-row") && d.open) { treesIn(d); }
    if (d.matches(".row-menu") && d.open) {
      document.querySelectorAll(".row-menu[open]").forEach(function (other) { if (other !== d) { other.open = false; } });
    }
    if (d.matches(".record-row, .row-menu")) { showTail(); }
  }, true);

  document.addEventListener("click", function (evt) {
    var t = evt.target;
    if (!t.closest(".row-menu")) {
      document.querySelectorAll(".row-menu[open]").forEach(function (d) { d.open = false; });
    }
    var copy = t.closest("[data-copy]");
    if (copy) {
      var source = document.querySelector(copy.getAttribute("data-copy"));
      if (source) { copyText(source.textContent, copy); }
    }
    var copyUrl = t.closest("[data-copy-url]");
    if (copyUrl) { copyText(new URL(copyUrl.getAttribute("data-copy-url"), window.location.href).href, copyUrl); }
    var raw = t.closest("[data-raw-toggle]");
    if (raw) { toggleRaw(raw); }
    if (t.closest("[data-tail-toggle]")) { tail.manual = !tail.manual; showTail(); }
  });

  document.addEventListener("keydown", function (evt) {
    if (evt.key === "Escape") { document.querySelectorAll(".row-menu[open]").forEach(function (d) { d.open = false; }); }
  });

  document.addEventListener("change", function (evt) {
    if (evt.target.matches && evt.target.matches("select[name=start]")) { showStartFields(evt.target.form); }
  });

  function enhance(root) {
    root.querySelectorAll("[data-copy], [data-copy-url]").forEach(function (b) { b.hidden = false; });
    root.querySelectorAll(".record-row[open]").forEach(treesIn);
    var form = document.getElementById("browse-form");
    if (form) { showStartFields(form); }
    showTail();
  }
  document.addEventListener("htmx:afterSettle", function (evt) { enhance(evt.target); });
  document.addEventListener("htmx:oobAfterSwap", function () { showTail(); });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { enhance(document); });
  } else {
    enhance(document);
  }
})();
