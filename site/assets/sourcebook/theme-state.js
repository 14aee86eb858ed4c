// sourcebook: what Material's inline start-up script defines, from a file, so that no page needs inline script
// (the served wiki's Content-Security-Policy allows scripts from the site itself only). Material's bundle reads
// these globals: the site's scope (its root URL) and storage helpers whose keys are prefixed with that scope.
(function () {
  "use strict";
  var scope = new URL(document.currentScript.dataset.scope || ".", location);
  window.__md_scope = scope;
  window.__md_hash = function (text) {
    var hash = 0;
    for (var ch of text) {
      hash = (hash << 5) - hash + ch.charCodeAt(0);
    }
    return hash;
  };
  window.__md_get = function (key, storage = localStorage, base = window.__md_scope) {
    return JSON.parse(storage.getItem(base.pathname + "." + key));
  };
  window.__md_set = function (key, value, storage = localStorage, base = window.__md_scope) {
    try {
      storage.setItem(base.pathname + "." + key, JSON.stringify(value));
    } catch (err) {
      // storage disabled or full: the preference is simply not remembered
    }
  };
})();
