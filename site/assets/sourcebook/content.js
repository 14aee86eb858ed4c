// sourcebook: when the URL's fragment names a tab of a tabbed block, open that tab (Material does this inline).
(function () {
  "use strict";
  var target = document.getElementById(location.hash.slice(1));
  if (target && target.name) {
    target.checked = target.name.startsWith("__tabbed_");
  }
})();
