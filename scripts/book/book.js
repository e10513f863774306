// The book's search: every page's text is in the language's
// search-index.js, loaded when the search box is first used; a term also
// finds the pages that use its other name in the glossary.
(function () {
  "use strict";
  var body = document.body, root = body.dataset.root || "", lang = body.dataset.lang || "en";
  var box = document.getElementById("search"), results = document.getElementById("results");
  if (!box || !results) return;
  var loading = null;
  function load() {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = root + lang + "/search-index.js";
        s.onload = resolve;
        s.onerror = reject;
        document.head.appendChild(s);
      });
    }
    return loading;
  }
  function snippet(text, at, len) {
    var from = Math.max(0, at - 60), to = Math.min(text.length, at + len + 60);
    return (from > 0 ? "…" : "") + text.slice(from, to) + (to < text.length ? "…" : "");
  }
  function search(q) {
    q = q.trim().toLowerCase();
    results.textContent = "";
    if (q.length < 2) { results.hidden = true; return; }
    var terms = [q].concat((window.BOOK_SYNONYMS || {})[q] || []);
    var list = document.createElement("ul");
    (window.BOOK_INDEX || []).forEach(function (page) {
      var lower = page.x.toLowerCase(), title = page.t.toLowerCase(), at = -1, term = q;
      for (var i = 0; i < terms.length && at < 0; i++) {
        at = lower.indexOf(terms[i]);
        if (at < 0 && title.indexOf(terms[i]) >= 0) at = 0;
        term = terms[i];
      }
      if (at < 0) return;
      var li = document.createElement("li"), a = document.createElement("a"), p = document.createElement("div");
      a.href = root + page.p;
      a.textContent = page.t;
      p.className = "snippet";
      p.textContent = snippet(page.x, at, term.length);
      li.appendChild(a);
      li.appendChild(p);
      list.appendChild(li);
    });
    if (!list.children.length) {
      var none = document.createElement("li");
      none.textContent = lang === "zh" ? "没有找到" : "Nothing found";
      list.appendChild(none);
    }
    results.appendChild(list);
    results.hidden = false;
  }
  var timer = null;
  box.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { load().then(function () { search(box.value); }); }, 120);
  });
  box.addEventListener("focus", load);
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") { results.hidden = true; } });
  document.addEventListener("click", function (e) { if (!results.contains(e.target) && e.target !== box) results.hidden = true; });
})();
