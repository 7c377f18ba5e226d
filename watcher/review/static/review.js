/* driftline review: keyboard (j/k move, one key per label, n note) and row selection.
   The state lives in the URL: filters and page are query parameters, the selected row is ?sel=. */
(function () {
  "use strict";
  var KEYS = {o: "on-topic", x: "off-topic", d: "drifted", u: "unchanged", b: "blocked", s: "unsure"};
  var readOnly = document.body.getAttribute("data-read-only") === "true";
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("table.queue tr[data-verdict-id]")); }
  function selected() { return document.querySelector("table.queue tr.sel"); }
  function select(tr, remember) {
    rows().forEach(function (r) { r.classList.remove("sel"); });
    if (!tr) { return; }
    tr.classList.add("sel");
    tr.scrollIntoView({block: "nearest"});
    if (remember) {
      var u = new URL(window.location.href);
      u.searchParams.set("sel", tr.getAttribute("data-verdict-id"));
      window.history.replaceState(null, "", u.toString());
    }
  }
  function labelControl(scope, label) {
    return scope && scope.querySelector('button[data-label="' + label + '"]');
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (window.location.hash === "#note" && document.getElementById("note")) {
      document.getElementById("note").focus();
    }
    var sel = new URL(window.location.href).searchParams.get("sel");
    var all = rows();
    if (all.length) {
      var tr = sel && document.querySelector('table.queue tr[data-verdict-id="' + CSS.escape(sel) + '"]');
      select(tr || all[0], false);
    }
    var selectAll = document.getElementById("select-all");
    if (selectAll) {
      selectAll.addEventListener("change", function () {
        document.querySelectorAll("input.pick").forEach(function (c) { c.checked = selectAll.checked; });
      });
    }
    all.forEach(function (r) {
      r.addEventListener("click", function (ev) {
        if (ev.target.closest("button, input, a")) { return; }
        select(r, true);
      });
    });
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) {
      if (ev.key === "Escape") { t.blur(); }
      return;
    }
    var key = ev.key;
    var detail = document.getElementById("verdict");
    if (key === "j" || key === "k") {
      ev.preventDefault();
      if (detail) {
        var link = document.getElementById(key === "j" ? "next" : "prev");
        if (link) { window.location.href = link.href; }
        return;
      }
      var all = rows(), cur = selected(), i = all.indexOf(cur);
      var edge = key === "j" ? i >= all.length - 1 : i <= 0;
      var pager = document.querySelector('nav.pager a[rel="' + (key === "j" ? "next" : "prev") + '"]');
      if (edge && pager) { window.location.href = pager.href; return; }  // on to the next (previous) page
      var next = all[key === "j" ? Math.min(all.length - 1, i + 1) : Math.max(0, i - 1)];
      select(next, true);
      return;
    }
    if (key === "Enter" && !detail) {
      var s = selected();
      if (s) { window.location.href = s.getAttribute("data-href"); }
      return;
    }
    if (readOnly) { return; }
    if (KEYS[key]) {
      ev.preventDefault();
      var scope = detail || selected();
      var btn = labelControl(scope, KEYS[key]);
      if (btn) { btn.click(); }
      return;
    }
    if (key === "n") {
      var note = document.getElementById("note");
      if (note) { ev.preventDefault(); note.focus(); }
      else if (selected()) { window.location.href = selected().getAttribute("data-href") + "#note"; }
    }
  });
})();
