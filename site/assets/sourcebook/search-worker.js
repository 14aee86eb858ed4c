// sourcebook's search worker, which the theme names instead of Material's (Material's own is in ?material=).
// Material's page script talks to it in Material's messages (SETUP, READY, QUERY, RESULT) and renders its
// results as ever. The index it gets is sharded (generator/site/search_split.py): a query loads the prefix-
// tree nodes of its terms and the content files of the sections it shows, nothing else, as scripts (a
// worker's importScripts over http, a <script> in iframe-worker-shim.js's hidden frame from file://). Scores
// are lunr's as Material would compute them (precomputed per term at build time); the post-query boosts,
// grouping by page and highlighting follow Material's worker. An index that is not sharded is handed to
// Material's own worker.
(function () {
  "use strict";
  var SETUP = 0, READY = 1, QUERY = 2, RESULT = 3;
  var MAX_GROUPS = 20;     // pages in a result list (Material renders 10, then more on scrolling)
  var MAX_SECTIONS = 12;   // sections shown under one page
  var scope = self;
  var inFrame = typeof document !== "undefined";
  var ownUrl = inFrame && document.currentScript ? document.currentScript.src : scope.location.href;
  var materialUrl = new URL(new URL(ownUrl).searchParams.get("material") || "", ownUrl).href;
  var post = scope.postMessage.bind(scope);
  var addListener = scope.addEventListener.bind(scope);

  // -- the shards ----------------------------------------------------------------------------------------

  var shards = {};
  var loading = {};
  var engine = null;       // {dir, pages, content, count, stop, sep}
  scope.__sourcebookShard = function (name, data) {
    shards[String(name)] = data;
  };

  function load(name) {
    if (Object.prototype.hasOwnProperty.call(shards, name)) {
      return Promise.resolve(shards[name]);
    }
    if (loading[name]) {
      return loading[name];
    }
    var url = new URL("../../search/" + engine.dir + "/" + name + ".js", ownUrl).href;
    loading[name] = new Promise(function (resolve) {
      if (!inFrame) {
        try {
          scope.importScripts(url);
        } catch (err) {
          // a missing shard answers as empty
        }
        resolve(shards[name]);
        return;
      }
      var script = document.createElement("script");
      script.src = url;
      script.onload = function () { resolve(shards[name]); };
      script.onerror = function () { resolve(undefined); };
      document.head.appendChild(script);
    });
    return loading[name];
  }

  function sums(deltas) {
    var out = [], at = 0;
    for (var i = 0; i < deltas.length; i++) {
      at += deltas[i];
      out.push(at);
    }
    return out;
  }

  function floorIndex(starts, n) {  // the last i with starts[i] <= n
    var lo = 0, hi = starts.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= n) { lo = mid; } else { hi = mid - 1; }
    }
    return lo;
  }

  // -- terms, as Material's tokenizer and pipeline make them -------------------------------------------------

  function split(text, fn) {  // Material's split(): ranges between separator matches (zero-width ones too)
    var sep = new RegExp(engine.sep.source, "g");
    var index = 0, match;
    do {
      match = sep.exec(text);
      var until = match ? match.index : text.length;
      if (index < until) {
        fn(index, until);
      }
      if (match) {
        index = match.index + match[0].length;
        if (match[0].length === 0) {
          sep.lastIndex = match.index + 1;
        }
      }
    } while (match);
  }

  function queryTerms(query) {
    var terms = [];
    String(query).trim().split(/\s+/).forEach(function (part) {
      part = part.replace(/^[+\-]+/, "").replace(/[*~^]+\d*$/, "").replace(/"/g, "");
      split(part, function (start, end) {
        var term = part.slice(start, end).toLowerCase();
        if (term && !engine.stop.has(term) && terms.indexOf(term) < 0) {
          terms.push(term);
        }
      });
    });
    return terms;
  }

  function decode(pairs, into, slot) {
    var doc = 0;
    for (var i = 0; i + 1 < pairs.length; i += 2) {
      doc += pairs[i];
      var hit = into.get(doc);
      if (!hit) {
        hit = { score: 0, terms: 0 };
        into.set(doc, hit);
      }
      hit.score += pairs[i + 1] / 100;
      hit.terms |= 1 << slot;
    }
  }

  // The postings of every term starting with `term` (Material's trailing wildcard), summed per section:
  // down the prefix tree to a leaf (all its terms) or to the node of the term's length (its summary).
  function postings(term, into, slot) {
    var chars = Array.from(term);
    function walk(name, depth) {
      return load(name).then(function (node) {
        if (!node) {
          return;
        }
        if (node.t) {
          node.t.forEach(function (entry) {  // [term, pairs]
            if (String(entry[0]).slice(0, term.length) === term) {
              decode(entry[1], into, slot);
            }
          });
          return;
        }
        if (depth === chars.length) {
          decode(node.s || [], into, slot);
          return;
        }
        var k = node.k || {};
        var child = Object.prototype.hasOwnProperty.call(k, chars[depth]) ? k[chars[depth]] : undefined;
        return child === undefined ? undefined : walk("n" + child, depth + 1);
      });
    }
    return walk("n0", 0);
  }

  // -- highlighting, as Material's: every match in a title, the first two blocks with a match in a text ------

  function mark(text, terms) {
    var out = "", last = 0;
    split(text, function (start, end) {
      var token = text.slice(start, end).toLowerCase();
      for (var i = 0; i < terms.length; i++) {
        if (token.slice(0, terms[i].length) === terms[i] && !engine.stop.has(token)) {
          out += text.slice(last, start) + "<mark>" + text.slice(start, end) + "</mark>";
          last = end;
          return;
        }
      }
    });
    return { html: out + text.slice(last), hit: last > 0 };
  }

  function blocks(html) {  // top-level elements (and the text between them), as Material's extract() cuts
    var parts = [], depth = 0, start = 0;
    var tag = /<[^>]*>/g, match;
    while ((match = tag.exec(html)) !== null) {
      if (match[0].charAt(1) === "/") {
        depth = Math.max(0, depth - 1);
        if (depth === 0) {
          parts.push(html.slice(start, tag.lastIndex));
          start = tag.lastIndex;
        }
      } else if (match[0].charAt(match[0].length - 2) !== "/") {
        depth += 1;
      }
    }
    if (start < html.length) {
      parts.push(html.slice(start));
    }
    return parts;
  }

  function highlight(html, terms) {  // -> {html, hit}: text outside tags marked, tags kept as they are
    var out = "", hit = false, last = 0;
    var tag = /<[^>]*>/g, match;
    function text(until) {
      if (until > last) {
        var marked = mark(html.slice(last, until), terms);
        out += marked.html;
        hit = hit || marked.hit;
      }
    }
    while ((match = tag.exec(html)) !== null) {
      text(match.index);
      out += match[0];
      last = tag.lastIndex;
    }
    text(html.length);
    return { html: out, hit: hit };
  }

  function teaser(html, terms) {
    var shown = [];
    var parts = blocks(html);
    for (var i = 0; i < parts.length && shown.length < 2; i++) {
      var marked = highlight(parts[i], terms);
      if (marked.hit) {
        shown.push(marked.html);
      }
    }
    return shown.length ? shown.join("") : html;
  }

  // -- a query --------------------------------------------------------------------------------------------

  function search(query) {
    var terms = queryTerms(query);
    if (!terms.length) {
      return Promise.resolve({ items: [] });
    }
    var hits = new Map();
    var lookups = terms.map(function (term, slot) {
      return postings(term, hits, slot);
    });
    // a one-word query is also looked up as a declaration's exact name (search_split.py `exact_names`):
    // its own section then ranks first, above the members whose titles hold the same words
    var word = String(query).trim().toLowerCase();
    if (word && !/\s/.test(word)) {
      lookups.push(postings("=" + word + "=", hits, terms.length));
    }
    return Promise.all(lookups).then(function () {
      var ranked = [];
      hits.forEach(function (hit, doc) {
        var page = floorIndex(engine.pages, doc);
        var matched = 0;
        for (var i = 0; i < terms.length; i++) {
          matched += (hit.terms >> i) & 1;
        }
        // Material's post-query boost: a page's own article, and the share of the query's terms matched
        var boost = (engine.pages[page] === doc ? 1 : 0) + matched / terms.length;
        ranked.push({ doc: doc, page: page, score: hit.score * (1 + boost * boost), terms: hit.terms });
      });
      ranked.sort(function (a, b) { return (b.score - a.score) || (a.doc - b.doc); });
      var groups = new Map();
      for (var r = 0; r < ranked.length; r++) {
        var group = groups.get(ranked[r].page);
        if (!group) {
          if (groups.size >= MAX_GROUPS) {
            continue;
          }
          groups.set(ranked[r].page, group = []);
        }
        if (group.length < MAX_SECTIONS) {
          group.push(ranked[r]);
        }
      }
      if (latest !== null) {
        return null;  // typed on meanwhile: the newer query's sections are the ones to load and show
      }
      var chunks = new Set();
      groups.forEach(function (group, page) {
        chunks.add(floorIndex(engine.content, engine.pages[page]));
        group.forEach(function (hit) { chunks.add(floorIndex(engine.content, hit.doc)); });
      });
      return Promise.all(Array.from(chunks).map(function (c) { return load("c" + c); })).then(function () {
        return { items: render(groups, terms) };
      });
    });
  }

  function record(doc) {
    var c = floorIndex(engine.content, doc);
    var chunk = shards["c" + c];
    var entry = chunk && chunk.d[doc - engine.content[c]];
    if (!entry) {
      return null;
    }
    var page = chunk.p[entry[0]];
    return { location: page + (entry[1] ? "#" + entry[1] : ""), title: entry[2], text: entry[3] };
  }

  function render(groups, terms) {
    var items = [];
    groups.forEach(function (group, page) {
      var docs = [];
      var hasArticle = false;
      group.forEach(function (hit) {
        var doc = record(hit.doc);
        if (!doc) {
          return;
        }
        var found = Object.create(null);  // a term `__proto__` is a key like any other
        terms.forEach(function (term, i) { found[term] = ((hit.terms >> i) & 1) === 1; });
        hasArticle = hasArticle || hit.doc === engine.pages[page];
        docs.push({
          location: doc.location, title: highlight(doc.title, terms).html, text: teaser(doc.text, terms),
          score: hit.score, terms: found,
        });
      });
      if (!docs.length) {
        return;
      }
      if (!hasArticle) {  // Material shows every group under its page's article
        var article = record(engine.pages[page]);
        if (article) {
          docs.push({ location: article.location, title: article.title, text: article.text, score: 0,
                      terms: {} });
        }
      }
      items.push(docs);
    });
    return items;
  }

  // A symbol section's title is its qualname (`ConnectionPool`, `ConnectionPool.pool_size`, `Router.ServeHTTP`).
  // Material's tokens split camelCase and every term gets a trailing wildcard, so `ConnectionPool` matches a
  // member's title `ConnectionPool.pool_size` on one more term (`pool*` on `pool_size`) than the class's own:
  // the member outranks the class. A query that is a symbol's whole qualname (2) or its last part (1) puts
  // that symbol's section first in its page's group and that page's group first.
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

  // -- sharded mode: one query at a time, always the latest ------------------------------------------------

  var latest = null, busy = false;

  function run() {
    if (busy || latest === null) {
      return;
    }
    busy = true;
    var query = latest;
    latest = null;
    search(query).then(function (result) {
      return result;
    }, function () {
      return { items: [] };
    }).then(function (result) {
      if (result !== null) {
        post({ type: RESULT, data: exactFirst(result, query) });
      }
      busy = false;
      run();
    });
  }

  function startShards(index) {
    var extra = index.config.sourcebook;
    engine = {
      dir: String(extra.dir), pages: sums(extra.pages), content: sums(extra.content),
      stop: new Set(extra.stop || []), sep: new RegExp(index.config.separator || "[\\s\\-]+"),
    };
    post({ type: READY });
  }

  // -- Material's mode: an index that is not sharded goes to Material's worker -------------------------------

  var material = null;     // Material's message listener, caught instead of registered
  var waiting = [];        // messages that arrived before Material's worker was loaded (file://)
  var asked = [];          // the queries handed to Material's worker, oldest first: one RESULT each

  function startMaterial(first) {
    waiting.push(first);
    scope.addEventListener = function (type, fn, options) {
      if (type === "message" && material === null) {
        material = fn;
        return;
      }
      addListener(type, fn, options);
    };
    scope.postMessage = function (message) {
      if (message && message.type === RESULT) {
        message = { type: RESULT, data: exactFirst(message.data, asked.shift()) };
      }
      post(message);
    };
    function ready() {
      var queued = waiting;
      waiting = [];
      queued.forEach(toMaterial);
    }
    if (!inFrame) {
      scope.importScripts(materialUrl);
      ready();
      return;
    }
    var script = document.createElement("script");
    script.src = materialUrl;
    script.onload = ready;
    (document.head || document.documentElement).appendChild(script);
  }

  function toMaterial(message) {
    if (message.type === QUERY) {
      asked.push(message.data);
    }
    material({ data: message });
  }

  var mode = null;  // null until the first SETUP: "shards" | "material"
  addListener("message", function (ev) {
    var message = ev.data;
    if (mode === null && message && message.type === SETUP) {
      var extra = message.data && message.data.config && message.data.config.sourcebook;
      mode = extra && extra.dir ? "shards" : "material";
      if (mode === "shards") {
        startShards(message.data);
      } else {
        startMaterial(message);
      }
      return;
    }
    if (mode === "shards") {
      if (message && message.type === QUERY) {
        latest = message.data;
        run();
      }
    } else if (mode === "material") {
      if (material === null) {
        waiting.push(message);
      } else {
        toMaterial(message);
      }
    }
  });
})();
