// Runs the site's own search worker (site/assets/sourcebook/search-worker.js, as the built site ships it) in
// Node: `self` is a shim whose importScripts reads the shard files from disk. Reads queries on stdin (one
// JSON string a line) and prints each query's result list (Material's RESULT message data) as a JSON line.
// Used by bench/site_search_rank.py; a measuring tool, not part of the product.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const { pathToFileURL, fileURLToPath } = require("url");

const site = path.resolve(process.argv[2]);
const workerFile = path.join(site, "assets", "sourcebook", "search-worker.js");
const listeners = [];
let onResult = null;
const self = {
  location: { href: pathToFileURL(workerFile).href + "?material=x" },
  postMessage: (message) => { if (message.type === 3 && onResult) { onResult(message.data); } },
  addEventListener: (type, fn) => { if (type === "message") { listeners.push(fn); } },
  importScripts: (url) => { vm.runInContext(fs.readFileSync(fileURLToPath(url), "utf8"), context); },
};
Object.assign(self, { URL, Map, Set, Promise, JSON, Math, String, Array, Object, RegExp });
self.self = self;
const context = vm.createContext(self);
vm.runInContext(fs.readFileSync(workerFile, "utf8"), context);
const index = JSON.parse(fs.readFileSync(path.join(site, "search", "search_index.json"), "utf8"));
const send = (message) => listeners.forEach((fn) => fn({ data: message }));
send({ type: 0, data: index });

const queries = fs.readFileSync(0, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
(async () => {
  for (const q of queries) {
    const data = await new Promise((resolve) => { onResult = resolve; send({ type: 2, data: q }); });
    const items = (data.items || []).map((group) => group.map((d) => d.location));
    process.stdout.write(JSON.stringify({ q, items }) + "\n");
  }
})();
