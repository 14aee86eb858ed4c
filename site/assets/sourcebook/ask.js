// sourcebook's ask box. It appears only on a wiki served by `sourcebook serve` (under /wiki/ or
// /wikis/<alias>/, where GET /ask answers); a static build (file://, serve-site, any other host) shows none.
// Answers are written with textContent only: nothing a repository or a model says becomes markup.
(function () {
  "use strict";

  function siteRoot() {
    var base = ".";
    var config = document.getElementById("__config");
    if (config) {
      try { base = JSON.parse(config.textContent).base || "."; } catch (e) { base = "."; }
    }
    return new URL(base.replace(/\/?$/, "/"), location.href);
  }

  function askEndpoint(root) {
    if (root.protocol !== "http:" && root.protocol !== "https:") return null;
    var m = root.pathname.match(/^\/(?:wiki|wikis\/([^\/]+))\/$/);
    if (!m) return null;
    var url = new URL("/ask", root.origin);
    if (m[1]) url.searchParams.set("repo", decodeURIComponent(m[1]));
    return url;
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function lineAnchor(forge, start, end) {
    if (!start) return "";
    end = end || start;
    if (forge === "bitbucket") return start === end ? "#lines-" + start : "#lines-" + start + ":" + end;
    if (forge === "gitlab") return start === end ? "#L" + start : "#L" + start + "-" + end;
    return start === end ? "#L" + start : "#L" + start + "-L" + end;
  }

  // "src/a.py:12-30" -> {path, start, end}
  function parseCitation(text) {
    var m = String(text).match(/^(.*?)(?::(\d+)(?:-(\d+))?)?$/);
    return {path: m[1], start: m[2] ? Number(m[2]) : 0, end: m[3] ? Number(m[3]) : (m[2] ? Number(m[2]) : 0)};
  }

  function sectionFor(map, path, line) {
    var best = null;
    (map.symbols[path] || []).forEach(function (row) {
      if (line >= row[0] && line <= row[1] && (!best || row[1] - row[0] < best[1] - best[0])) best = row;
    });
    return best ? best[2] : "";
  }

  function citationItem(map, root, text) {
    var c = parseCitation(text);
    var li = el("li");
    var page = map.pages[c.path];
    if (page) {
      var a = el("a", "", text);
      var anchor = c.start ? sectionFor(map, c.path, c.start) : "";
      a.href = new URL(page + (anchor ? "#" + anchor : ""), root).href;
      li.appendChild(a);
    } else {
      li.appendChild(el("code", "", text));
    }
    if (map.source && map.source.base && /^https?:\/\//.test(map.source.base) && page) {
      var src = el("a", "sb-ask__source", "source");
      src.href = map.source.base + c.path.split("/").map(encodeURIComponent).join("/") +
        lineAnchor(map.source.forge, c.start, c.end);
      src.rel = "noopener noreferrer";
      li.appendChild(document.createTextNode(" · "));
      li.appendChild(src);
    }
    return li;
  }

  function showAnswer(out, reply, map, root) {
    out.textContent = "";
    var head = el("p", "sb-ask__meta", "Confidence: " + (reply.confidence || "unknown") +
      (reply.degraded ? " · no answer model: ranked evidence (" + reply.degraded + ")" : ""));
    out.appendChild(head);
    String(reply.answer || "").split(/\n{2,}/).forEach(function (para) {
      if (para.trim()) out.appendChild(el("p", "sb-ask__text", para.trim()));
    });
    var cited = (reply.citations && reply.citations.length) ? reply.citations :
      (reply.candidate_files || []).slice(0, 5);
    if (cited.length) {
      out.appendChild(el("p", "sb-ask__label", reply.citations && reply.citations.length ? "Sources" :
        "Where to look"));
      var list = el("ul", "sb-ask__citations");
      cited.forEach(function (c) { list.appendChild(citationItem(map, root, c)); });
      out.appendChild(list);
    }
  }

  function mount(endpoint, root) {
    var host = document.querySelector(".md-content__inner");
    if (!host) return;
    var box = el("div", "sb-ask");
    box.id = "sb-ask";
    var form = el("form", "sb-ask__form");
    var input = el("input", "sb-ask__input");
    input.type = "search";
    input.name = "q";
    input.placeholder = "Ask a question about this code";
    input.setAttribute("aria-label", "Ask a question about this code");
    var button = el("button", "md-button sb-ask__button", "Ask");
    button.type = "submit";
    form.appendChild(input);
    form.appendChild(button);
    var out = el("div", "sb-ask__answer");
    out.setAttribute("aria-live", "polite");
    box.appendChild(form);
    box.appendChild(out);
    host.insertBefore(box, host.firstChild);
    var mapRequest = null;

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var question = input.value.trim();
      if (!question) return;
      out.textContent = "Thinking…";
      button.disabled = true;
      mapRequest = mapRequest || fetch(new URL("assets/sourcebook/wiki-map.json", root))
        .then(function (r) { return r.ok ? r.json() : {pages: {}, symbols: {}, source: null}; })
        .catch(function () { return {pages: {}, symbols: {}, source: null}; });
      var url = new URL(endpoint.href);
      url.searchParams.set("q", question);
      Promise.all([fetch(url, {headers: {"Accept": "application/json"}}).then(function (r) {
        return r.json().then(function (body) {
          if (!r.ok) throw new Error(body.message || ("the server answered " + r.status));
          return body;
        });
      }), mapRequest]).then(function (results) {
        showAnswer(out, results[0], results[1], root);
      }).catch(function (err) {
        out.textContent = "";
        out.appendChild(el("p", "sb-ask__error", "No answer: " + err.message));
      }).finally(function () { button.disabled = false; });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var root = siteRoot();
    var endpoint = askEndpoint(root);
    if (!endpoint) return;
    // `sourcebook serve` answers this file (answer/http_api.py); a copy of the site elsewhere has none
    fetch(new URL("sourcebook-api.json", root), {headers: {"Accept": "application/json"}}).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (info) {
      if (info && info.ask === "/ask") mount(endpoint, root);
    }).catch(function () { /* no API behind this wiki: no box */ });
  });
})();
