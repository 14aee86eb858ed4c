// sourcebook: re-applies the colour palette the reader chose last time (Material keeps it in storage), before
// the page paints. Runs from the header, after the palette toggles exist.
(function () {
  "use strict";
  var saved = window.__md_get("__palette");
  if (!saved || !saved.color) {
    return;
  }
  var color = saved.color;
  if (color.media === "(prefers-color-scheme)") {
    // "follow the system": take the toggle that matches the system's current scheme
    var light = window.matchMedia("(prefers-color-scheme: light)").matches;
    var toggle = document.querySelector("[data-md-color-media='(prefers-color-scheme: " +
                                        (light ? "light" : "dark") + ")']");
    if (toggle) {
      ["media", "scheme", "primary", "accent"].forEach(function (name) {
        color[name] = toggle.getAttribute("data-md-color-" + name);
      });
    }
  }
  Object.keys(color).forEach(function (name) {
    document.body.setAttribute("data-md-color-" + name, color[name]);
  });
})();
