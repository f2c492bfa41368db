// The console's page behaviour, for every page: what was clicked shows it is working and cannot be clicked twice;
// a refused request shows its message by the field or form that asked (never replacing the page); menus, the
// theme, keyboard shortcuts, relative times and sortable tables. Served from static files (the CSP allows no other).
(function () {
  "use strict";
  var SLOW_MS = 1000;

  function polling(elt) {
    var trigger = (elt && elt.getAttribute && (elt.getAttribute("hx-trigger") || "")) || "";
    return /\bevery\b|\bload\b|\brevealed\b/.test(trigger);
  }

  // ---- feedback while waiting ------------------------------------------------------------------------------
  var inFlight = 0;
  function progress(delta) {
    inFlight = Math.max(0, inFlight + delta);
    var bar = document.getElementById("progress-bar");
    if (bar) { bar.classList.toggle("active", inFlight > 0); }
  }

  function busyTargets(detail) {
    var elt = detail.elt;
    var targets = [elt];
    var form = elt.tagName === "FORM" ? elt : elt.closest("form");
    var submitter = detail.requestConfig && detail.requestConfig.triggeringEvent && detail.requestConfig.triggeringEvent.submitter;
    if (submitter) { targets.push(submitter); }
    if (form && elt.tagName === "FORM") {
      form.querySelectorAll("button[type=submit], button:not([type]), input[type=submit]").forEach(function (b) { targets.push(b); });
    }
    return targets.filter(function (t, i, all) { return t && all.indexOf(t) === i; });
  }

  document.addEventListener("htmx:beforeRequest", function (evt) {
    var detail = evt.detail;
    if (polling(detail.elt)) { return; }
    progress(1);
    var touched = [];
    busyTargets(detail).forEach(function (t) {
      t.classList.add("is-busy");
      t.setAttribute("aria-busy", "true");
      // Buttons and links cannot be used twice; a field being typed into stays usable.
      if ((t.tagName === "BUTTON" || (t.tagName === "INPUT" && t.type === "submit")) && !t.disabled) {
        t.disabled = true;
        t.dataset.consoleDisabled = "1";
      } else if (t.tagName === "A") {
        t.setAttribute("aria-disabled", "true");
      }
      touched.push(t);
    });
    var timer = window.setTimeout(function () {
      touched.forEach(function (t) {
        if (t.tagName === "BUTTON" && t.classList.contains("is-busy")) {
          t.dataset.consoleLabel = t.textContent;
          t.textContent = t.dataset.busyText || (t.textContent.trim() + "…");
        }
      });
    }, SLOW_MS);
    detail.xhr.consoleBusy = { touched: touched, timer: timer };
  });

  function settle(evt) {
    var busy = evt.detail && evt.detail.xhr && evt.detail.xhr.consoleBusy;
    if (!busy) { return; }
    evt.detail.xhr.consoleBusy = null;
    progress(-1);
    window.clearTimeout(busy.timer);
    busy.touched.forEach(function (t) {
      t.classList.remove("is-busy");
      t.removeAttribute("aria-busy");
      t.removeAttribute("aria-disabled");
      if (t.dataset.consoleDisabled) { t.disabled = false; delete t.dataset.consoleDisabled; }
      if (t.dataset.consoleLabel !== undefined) { t.textContent = t.dataset.consoleLabel; delete t.dataset.consoleLabel; }
    });
  }
  document.addEventListener("htmx:afterRequest", settle);
  document.addEventListener("htmx:sendError", function (evt) {
    settle(evt);
    toast('<div class="error-box" role="alert"><strong>No answer</strong><p>The console did not answer; nothing was changed by this click. Try again in a moment.</p></div>', true);
  });

  // ---- errors where the person is looking ----------------------------------------------------------------------
  function clearErrors(scope) {
    scope.querySelectorAll(".form-alert, .field-error").forEach(function (n) { n.remove(); });
    scope.querySelectorAll("[aria-invalid=true]").forEach(function (n) { n.removeAttribute("aria-invalid"); });
  }

  var errorCount = 0;
  function fieldNamed(form, name) {
    var escaped = window.CSS && CSS.escape ? CSS.escape(name) : name.replace(/"/g, '\\"');
    return form.querySelector('[name="' + escaped + '"]');
  }

  function placeError(elt, html) {
    var holder = document.createElement("div");
    holder.innerHTML = html;
    var box = holder.querySelector(".error-box");
    if (!box) { return false; }
    var form = elt.tagName === "FORM" ? elt : (elt.form || elt.closest("form"));
    if (!form) { toast(box.outerHTML, true); return true; }
    clearErrors(form);
    var first = null;
    box.querySelectorAll("[data-field]").forEach(function (item) {
      var field = fieldNamed(form, item.getAttribute("data-field"));
      if (!field) { return; }
      var note = document.createElement("p");
      note.className = "field-error";
      note.id = "field-error-" + (++errorCount);
      note.textContent = item.getAttribute("data-message") || item.textContent;
      var label = field.closest("label");
      (label || field.parentNode).insertBefore(note, label ? null : field.nextSibling);
      field.setAttribute("aria-invalid", "true");
      field.setAttribute("aria-describedby", note.id);
      item.remove();
      first = first || field;
    });
    var alert = null;
    var untold = box.querySelector("p, li") !== null;  // a message no field took
    if (!first || untold) {
      alert = document.createElement("div");
      alert.className = "form-alert";
      alert.tabIndex = -1;
      alert.appendChild(box);
      // Next to what was clicked: just before the button (or the field) that sent the request.
      var anchor = elt.closest("button, input, select, textarea") || form.querySelector("button[type=submit], button:not([type])");
      var row = anchor ? (anchor.closest(".actions-row, .form-grid, p, div") || anchor) : null;
      if (row && form.contains(row) && row !== form) { row.parentNode.insertBefore(alert, row); } else { form.insertBefore(alert, form.firstChild); }
    }
    var focus = first || alert;
    if (focus) {
      focus.scrollIntoView({ block: "nearest", behavior: "instant" });
      if (focus !== document.activeElement && !(elt.tagName === "INPUT" && elt === document.activeElement)) { focus.focus({ preventScroll: true }); }
    }
    return true;
  }

  document.addEventListener("htmx:beforeSwap", function (evt) {
    var detail = evt.detail;
    // The element that sent the request: detail.elt is the swap's target, which for a form answering into a box
    // outside it (a preview under the form) is not in the form.
    var source = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
    if (detail.xhr.status < 400) {
      var form = source.tagName === "FORM" ? source : source.closest && source.closest("form");
      if (form) { clearErrors(form); }
      return;
    }
    if (placeError(source, detail.xhr.responseText || "")) {
      detail.shouldSwap = false;
    } else if (detail.xhr.status >= 500) {
      detail.shouldSwap = false;
      toast('<div class="error-box" role="alert"><strong>Something went wrong</strong><p>The console failed to answer this request (HTTP ' + detail.xhr.status + "). Nothing was changed by it; the error is in the server's log.</p></div>", true);
    }
  });

  function toast(html, bad) {
    var region = document.getElementById("toasts");
    if (!region) { return; }
    var item = document.createElement("div");
    item.className = "toast" + (bad ? " bad-toast" : "");
    item.setAttribute("role", bad ? "alert" : "status");
    item.innerHTML = html;
    var close = document.createElement("button");
    close.type = "button"; close.className = "close"; close.setAttribute("aria-label", "Dismiss"); close.textContent = "×";
    close.addEventListener("click", function () { item.remove(); });
    item.appendChild(close);
    region.appendChild(item);
    window.setTimeout(function () { item.remove(); }, bad ? 15000 : 6000);
  }

  // ---- menus and the frame ------------------------------------------------------------------------------------
  function closeMenus(except) {
    document.querySelectorAll("details[data-menu][open]").forEach(function (d) { if (d !== except) { d.open = false; } });
  }
  document.addEventListener("toggle", function (evt) {
    var d = evt.target;
    if (d.matches && d.matches("details[data-menu]") && d.open && window.matchMedia("(min-width: 1280px)").matches) { closeMenus(d); }
  }, true);
  document.addEventListener("click", function (evt) {
    if (!evt.target.closest("details[data-menu]")) {
      if (window.matchMedia("(min-width: 1280px)").matches) { closeMenus(null); }
      else { document.querySelectorAll(".switcher[open]").forEach(function (d) { d.open = false; }); }
    }
    var toggle = evt.target.closest("[data-nav-toggle]");
    if (toggle) {
      var bar = document.getElementById("topbar");
      var open = bar.classList.toggle("nav-open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    }
    var back = evt.target.closest("a[data-back]");
    if (back && window.history.length > 1 && document.referrer && new URL(document.referrer).origin === window.location.origin) {
      evt.preventDefault();
      window.history.back();
    }
    var themeButton = evt.target.closest("[data-theme-toggle]");
    if (themeButton) { cycleTheme(); }
    if (evt.target.closest("[data-shortcuts]")) { showShortcuts(); }
  });

  // ---- theme ----------------------------------------------------------------------------------------------------
  function currentTheme() {
    try { return window.localStorage.getItem("console-theme") || "system"; } catch (e) { return "system"; }
  }
  function showTheme() {
    document.querySelectorAll("[data-theme-name]").forEach(function (n) { n.textContent = currentTheme(); });
  }
  function cycleTheme() {
    var next = { system: "light", light: "dark", dark: "system" }[currentTheme()] || "system";
    try { if (next === "system") { window.localStorage.removeItem("console-theme"); } else { window.localStorage.setItem("console-theme", next); } } catch (e) { /* kept for this page only */ }
    if (next === "system") { document.documentElement.removeAttribute("data-theme"); } else { document.documentElement.setAttribute("data-theme", next); }
    showTheme();
  }

  // ---- keyboard shortcuts -----------------------------------------------------------------------------------------
  function showShortcuts() {
    var dialog = document.getElementById("shortcut-list");
    if (dialog && !dialog.open) { dialog.showModal(); }
  }
  var pendingG = 0;
  document.addEventListener("keydown", function (evt) {
    if (evt.key === "Escape") { closeMenus(null); document.getElementById("topbar") && document.getElementById("topbar").classList.remove("nav-open"); return; }
    var t = evt.target;
    if (evt.ctrlKey || evt.metaKey || evt.altKey || (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)))) { return; }
    var body = document.body;
    if (evt.key === "/") {
      var search = document.querySelector("[data-search], main input[type=search], main form input[type=text]");
      if (search) { evt.preventDefault(); search.focus(); search.select && search.select(); }
    } else if (evt.key === "?") {
      evt.preventDefault(); showShortcuts();
    } else if (evt.key === "g") {
      pendingG = Date.now();
    } else if (pendingG && Date.now() - pendingG < 1500) {
      var url = evt.key === "t" ? body.dataset.topicsUrl : evt.key === "g" ? body.dataset.groupsUrl : evt.key === "c" ? "/clusters/" : "";
      pendingG = 0;
      if (url) { evt.preventDefault(); window.location.assign(url); }
    }
  });

  // ---- times: relative beside absolute ------------------------------------------------------------------------------
  function ago(ms) {
    var s = Math.round(ms / 1000), future = s < 0;
    s = Math.abs(s);
    var text = s < 45 ? s + " s" : s < 2700 ? Math.round(s / 60) + " min" : s < 86400 ? Math.round(s / 3600) + " h" : Math.round(s / 86400) + " d";
    return future ? "in " + text : text + " ago";
  }
  function relativeTimes(root) {
    (root || document).querySelectorAll("time[datetime][data-relative]").forEach(function (node) {
      var when = Date.parse(node.getAttribute("datetime"));
      if (isNaN(when)) { return; }
      var label = node.querySelector(".ago") || node.appendChild(Object.assign(document.createElement("span"), { className: "ago hint" }));
      label.textContent = " (" + ago(Date.now() - when) + ")";
    });
  }

  // ---- sortable tables: the order in the URL ------------------------------------------------------------------------
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var raw = cell.getAttribute("data-value");
    var text = raw !== null ? raw : cell.textContent.trim();
    var number = text.replace(/[ ,\u202f]/g, "");
    return /^-?\d+(\.\d+)?$/.test(number) ? parseFloat(number) : text.toLowerCase();
  }
  function sortTable(table, key, dir) {
    var header = table.querySelector('th[data-sort="' + key + '"]');
    if (!header || !table.tBodies[0]) { return; }
    var index = Array.prototype.indexOf.call(header.parentNode.children, header);
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return dir === "desc" ? -order : order;
    });
    rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
    table.querySelectorAll("th[data-sort]").forEach(function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", dir === "desc" ? "descending" : "ascending");
  }
  function sortableTables(root) {
    var params = new URLSearchParams(window.location.search);
    (root || document).querySelectorAll("table[data-sortable]").forEach(function (table) {
      var id = table.id || "";
      table.querySelectorAll("th[data-sort]").forEach(function (th) {
        if (th.dataset.sortReady) { return; }
        th.dataset.sortReady = "1";
        th.tabIndex = 0;
        var go = function () {
          var dir = th.getAttribute("aria-sort") === "ascending" ? "desc" : "asc";
          sortTable(table, th.dataset.sort, dir);
          var url = new URL(window.location.href);
          url.searchParams.set(id ? id + "-sort" : "sort", th.dataset.sort + ":" + dir);
          window.history.replaceState(window.history.state, "", url);
        };
        th.addEventListener("click", go);
        th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
      });
      var wanted = params.get(id ? id + "-sort" : "sort");
      if (wanted) { var parts = wanted.split(":"); sortTable(table, parts[0], parts[1] === "desc" ? "desc" : "asc"); }
    });
  }

  function enhance(root) { relativeTimes(root); sortableTables(root); }
  document.addEventListener("htmx:afterSettle", function (evt) { enhance(evt.target); });
  document.addEventListener("DOMContentLoaded", function () {
    enhance(document);
    showTheme();
    window.setInterval(function () { relativeTimes(document); }, 30000);
    var cluster = document.body.dataset.cluster;
    if (cluster) { document.cookie = "cluster=" + encodeURIComponent(cluster) + "; path=/; SameSite=Lax"; }
  });
})();
