// The produce form works as a plain form (the server checks the JSON too); this checks the value as it is typed
// (where a JSON error is, by line and column), formats it, and adds or removes header rows.
(function () {
  "use strict";

  function lineAndColumn(text, position) {
    var before = text.slice(0, position).split("\n");
    return { line: before.length, column: before[before.length - 1].length + 1 };
  }

  // A JSON reader that says where the text stops being JSON (the browser's JSON.parse does not always say):
  // null when the text is JSON, else what was expected and its line and column.
  function jsonProblem(text) {
    var i = 0;
    function Stop(message) { this.message = message; this.at = i; }
    function fail(message) { throw new Stop(message); }
    function space() { while (i < text.length && " \t\n\r".indexOf(text[i]) >= 0) { i++; } }
    function string() {
      i++;
      while (i < text.length) {
        var c = text[i];
        if (c === '"') { i++; return; }
        if (c === "\\") {
          var e = text[i + 1];
          if (e !== undefined && '"\\/bfnrt'.indexOf(e) >= 0) { i += 2; continue; }
          if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.substr(i + 2, 4))) { i += 6; continue; }
          fail("a backslash starts no escape here");
        }
        if (c < " ") { fail("a string holds a control character (write it as an escape)"); }
        i++;
      }
      fail("a string is not closed");
    }
    function number() {
      var found = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      if (!found) { fail("a number is not written as JSON writes numbers"); }
      i += found[0].length;
    }
    function list(close, item) {
      i++;
      space();
      if (text[i] === close) { i++; return; }
      for (;;) {
        item();
        space();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === close) { i++; return; }
        fail(i >= text.length ? "the text ends before its closing " + close : "',' or '" + close + "' was expected here");
      }
    }
    function member() {
      space();
      if (text[i] !== '"') { fail("a name in double quotes was expected here"); }
      string();
      space();
      if (text[i] !== ":") { fail("':' was expected after the name"); }
      i++;
      value();
    }
    function value() {
      space();
      var c = text[i];
      if (c === "{") { list("}", member); return; }
      if (c === "[") { list("]", value); return; }
      if (c === '"') { string(); return; }
      if (c === "-" || (c >= "0" && c <= "9")) { number(); return; }
      var words = ["true", "false", "null"];
      for (var w = 0; w < words.length; w++) { if (text.startsWith(words[w], i)) { i += words[w].length; return; } }
      fail(i >= text.length ? "the text ends where a value should be" : "a value was expected here, not " + JSON.stringify(c));
    }
    try {
      value();
      space();
      if (i < text.length) { fail("there is more after the JSON value"); }
      return null;
    } catch (e) {
      if (!(e instanceof Stop)) {  // nested deeper than the stack: the browser's own reader answers
        try { JSON.parse(text); return null; } catch (other) { return String(other.message || other); }
      }
      var where = lineAndColumn(text, e.at);
      return e.message + " (line " + where.line + ", column " + where.column + ")";
    }
  }

  function setUp(form) {
    var editor = form.querySelector("[data-json-check]");
    var hint = form.querySelector("[data-json-hint]");
    var format = form.querySelector("[data-json-format]");
    var kind = form.querySelector("select[name=value_format]");
    var subject = form.querySelector("[name=value_subject]");
    var tombstone = form.querySelector("input[name=value_null]");

    function meantAsJson() {
      return (kind && kind.value === "json") || (subject && subject.value);
    }

    function check() {
      if (!editor || !hint) { return; }
      var text = editor.value;
      var problem = null;
      if (tombstone && tombstone.checked) {
        hint.textContent = "A tombstone: the value is not sent.";
      } else if (!meantAsJson()) {
        hint.textContent = "Sent as text, byte for byte.";
      } else if (!text.trim()) {
        hint.textContent = "";
      } else {
        problem = jsonProblem(text);
        hint.textContent = problem ? "Not valid JSON: " + problem : "Valid JSON.";
      }
      hint.classList.toggle("error-text", !!problem);
      hint.classList.toggle("ok", !problem && !!text.trim() && !!meantAsJson());
      editor.setAttribute("aria-invalid", problem ? "true" : "false");
      if (format) { format.hidden = !meantAsJson() || !!problem || !text.trim(); }
    }

    if (editor) {
      editor.addEventListener("input", check);
      [kind, subject, tombstone].forEach(function (f) { if (f) { f.addEventListener("change", check); } });
      check();
    }
    if (format) {
      format.addEventListener("click", function () {
        try { editor.value = JSON.stringify(JSON.parse(editor.value), null, 2); check(); } catch (e) { check(); }
      });
    }

    var body = form.querySelector("[data-header-rows] tbody");
    var template = form.querySelector("template[data-header-template]");
    var add = form.querySelector("[data-header-add]");
    if (body && template && add) {
      add.hidden = false;
      form.querySelectorAll("[data-header-remove]").forEach(function (b) { b.hidden = false; });
      add.addEventListener("click", function () {
        var row = template.content.firstElementChild.cloneNode(true);
        row.querySelector("[data-header-remove]").hidden = false;
        body.appendChild(row);
        row.querySelector("input").focus();
      });
      body.addEventListener("click", function (evt) {
        var remove = evt.target.closest("[data-header-remove]");
        if (!remove) { return; }
        var row = remove.closest("tr");
        if (body.rows.length > 1) { row.remove(); } else { row.querySelectorAll("input").forEach(function (i) { i.value = ""; }); }
      });
    }
  }

  function start() { document.querySelectorAll("form.produce-form").forEach(setUp); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
