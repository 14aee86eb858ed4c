// sourcebook's search worker: Material's own search worker, fed the split index of generator/search_split.py.
// The theme names this file as the worker, with Material's worker in ?material=. Material's page script sends
// the eager index (section titles and locations, compacted); this expands it for Material's worker, which
// answers from titles at once. The first query (once the typing pauses) loads the body texts (one script, also
// from file://); Material's index is rebuilt with them and the query answered again: the results re-render.
// Runs in a real worker over http(s), and in the hidden iframe of iframe-worker-shim.js from file://.
(function () {
  "use strict";
  var SETUP = 0, READY = 1, QUERY = 2, RESULT = 3;
  var scope = self;
  var inFrame = typeof document !== "undefined";
  var ownUrl = inFrame && document.currentScript ? document.currentScript.src : scope.location.href;
  var materialUrl = new URL(new URL(ownUrl).searchParams.get("material") || "", ownUrl).href;

  var material = null;     // Material's message listener, caught below instead of registered
  var waiting = [];        // messages that arrived before Material's worker was loaded (file://)
  var setup = null;        // {config, docs (expanded), options} as last given to Material
  var textState = "none";  // none | loading | done
  var lastQuery = null;
  var swallowReady = false;
  var pause = null;        // the timer that starts loading texts once the typing pauses
  var PAUSE_MS = 300;
  var asked = [];          // the queries handed to Material's worker, oldest first: one RESULT each

  var addListener = scope.addEventListener.bind(scope);
  var post = scope.postMessage.bind(scope);

  scope.addEventListener = function (type, fn, options) {
    if (type === "message" && material === null) {
      material = fn;
      return;
    }
    addListener(type, fn, options);
  };
  scope.postMessage = function (message) {
    if (message && message.type === READY && swallowReady) {
      swallowReady = false;  // the rebuild with body texts: the page knows search is ready already
      if (lastQuery !== null) {
        asked.push(lastQuery);
        deliver({ type: QUERY, data: lastQuery });
      }
      return;
    }
    if (message && message.type === RESULT) {
      var query = asked.length ? asked.shift() : lastQuery;
      message = { type: RESULT, data: exactFirst(message.data, query) };
    }
    post(message);
  };

  // A symbol section's title is its qualname (`ConnectionPool`, `ConnectionPool.pool_size`, `Router.ServeHTTP`).
  // Material's lunr splits camelCase and adds a trailing wildcard, so `ConnectionPool` matches a member's title
  // `ConnectionPool.pool_size` on one more term (`pool*` on `pool_size`) than the class's own: the member
  // outranks the class. A query that is a symbol's whole qualname (2) or its last part (1) puts that symbol's
  // section first in its page's group and that page's group first.
  function exactLevel(item, query) {
    if (String(item.location).indexOf("#sym-") < 0) {
      return 0;
    }
    var title = plain(item.title).toLowerCase();
    if (title === query) {
      return 2;
    }
    var dot = title.lastIndexOf(".");
    return dot >= 0 && title.slice(dot + 1) === query ? 1 : 0;
  }

  function plain(html) {
    return String(html).replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").trim();
  }

  function exactFirst(result, rawQuery) {
    var query = String(rawQuery || "").trim().toLowerCase();
    if (!result || !Array.isArray(result.items) || query === "" || /\s/.test(query)) {
      return result;
    }
    var ranked = result.items.map(function (group, at) {
      var best = 0, top = 0;
      var levels = group.map(function (item) {
        var level = exactLevel(item, query);
        best = Math.max(best, level);
        top = Math.max(top, item.score);
        return level;
      });
      if (best > 0) {
        var order = group.map(function (item, i) { return i; });
        order.sort(function (a, b) { return (levels[b] - levels[a]) || (a - b); });
        group = order.map(function (i) {
          // Material shows a group's sections scoring as its first one in full, the rest folded
          return levels[i] === best ? Object.assign({}, group[i], { score: top }) : group[i];
        });
      }
      return { group: group, level: best, at: at };
    });
    ranked.sort(function (a, b) { return (b.level - a.level) || (a.at - b.at); });
    return Object.assign({}, result, { items: ranked.map(function (r) { return r.group; }) });
  }

  function deliver(message) {
    material({ data: message });
  }

  function expand(index) {
    var extra = (index.config && index.config.sourcebook) || null;
    if (!extra) {
      return index;  // an index that was not split: Material's own format
    }
    var pages = extra.pages;
    var docs = index.docs.map(function (d) {
      var doc = { location: pages[d[0]] + (d[1] ? "#" + d[1] : ""), title: d[2], text: "" };
      if (d.length > 3) {
        doc.boost = d[3];
      }
      return doc;
    });
    return { config: index.config, docs: docs, options: index.options };
  }

  function textUrl() {
    var name = setup && setup.config.sourcebook && setup.config.sourcebook.text;
    // the worker lives in assets/javascripts/workers/ or assets/sourcebook/: the site root is two up
    return name ? new URL("../../search/" + name, ownUrl).href : null;
  }

  function withTexts() {
    var texts = scope.__sourcebookSearchText;
    if (!Array.isArray(texts) || texts.length !== setup.docs.length) {
      textState = "done";  // a mismatched or missing file: keep answering from titles
      return;
    }
    setup.docs.forEach(function (doc, i) {
      doc.text = texts[i];
    });
    scope.__sourcebookSearchText = null;
    textState = "done";
    swallowReady = true;
    deliver({ type: SETUP, data: setup });
  }

  function loadTexts() {
    var url = textUrl();
    if (url === null) {
      textState = "done";
      return;
    }
    textState = "loading";
    if (!inFrame) {
      try {
        scope.importScripts(url);
      } catch (err) {
        textState = "done";
        return;
      }
      withTexts();
      return;
    }
    var script = document.createElement("script");
    script.src = url;
    script.onload = withTexts;
    script.onerror = function () {
      textState = "done";
    };
    document.head.appendChild(script);
  }

  function handle(message) {
    if (message.type === SETUP) {
      setup = expand(message.data);
      textState = setup === message.data ? "done" : "none";
      deliver({ type: SETUP, data: setup });
      return;
    }
    if (message.type === QUERY) {
      lastQuery = message.data;
      asked.push(message.data);
      deliver(message);
      // Material queries "" as soon as the worker is ready: only a real query is a first search. Loading
      // and indexing the texts blocks this worker (Material's index is built in one go), so it waits for a
      // pause in the typing: every keystroke meanwhile is answered from the titles at once.
      if (textState === "none" && setup !== null && String(message.data).trim() !== "") {
        clearTimeout(pause);
        pause = setTimeout(loadTexts, PAUSE_MS);
      }
      return;
    }
    deliver(message);
  }

  addListener("message", function (ev) {
    if (material === null) {
      waiting.push(ev.data);
    } else {
      handle(ev.data);
    }
  });

  function ready() {
    var queued = waiting;
    waiting = [];
    queued.forEach(handle);
  }

  if (!inFrame) {
    scope.importScripts(materialUrl);
    ready();
  } else {
    var script = document.createElement("script");
    script.src = materialUrl;
    script.onload = ready;
    (document.head || document.documentElement).appendChild(script);
  }
})();
