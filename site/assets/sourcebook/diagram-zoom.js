// Pan and zoom for diagrams bigger than their box. The wiki's diagrams are drawn at their natural size (labels
// at Mermaid's 16 px, not shrunk to the column); one wider or taller than the column sits in a box that
// clips it, with buttons (zoom in, zoom out, fit, reset), Ctrl/⌘ + wheel to zoom at the pointer and a drag
// to pan. Material draws each diagram into a closed shadow root, so the transform goes on its host element.
(function () {
  "use strict";
  var MAX_HEIGHT = 0.75; // of the window: a taller diagram is clipped and panned

  function mount(host) {
    if (host.parentElement && host.parentElement.classList.contains("sb-zoom")) return;
    var box = document.createElement("div");
    box.className = "sb-zoom";
    host.parentNode.insertBefore(box, host);
    box.appendChild(host);
    var width = host.offsetWidth, height = host.offsetHeight;
    if (!width || !height) return; // not drawn (hidden): nothing to fit
    if (width <= box.clientWidth && height <= window.innerHeight * MAX_HEIGHT) return; // fits: left alone
    box.classList.add("sb-zoom--on");
    box.style.height = Math.min(height, window.innerHeight * MAX_HEIGHT) + "px";
    var view = { x: 0, y: 0, k: 1 };
    function apply() {
      host.style.transform = "translate(" + view.x + "px," + view.y + "px) scale(" + view.k + ")";
    }
    function zoom(factor, cx, cy) { // about the point (cx, cy) of the box
      var k = Math.min(4, Math.max(0.1, view.k * factor));
      view.x = cx - (cx - view.x) * (k / view.k);
      view.y = cy - (cy - view.y) * (k / view.k);
      view.k = k;
      apply();
    }
    function fit() {
      var k = Math.min(1, box.clientWidth / width, box.clientHeight / height);
      view = { x: (box.clientWidth - width * k) / 2, y: 0, k: k };
      apply();
    }
    var bar = document.createElement("div");
    bar.className = "sb-zoom__bar";
    [["+", "Zoom in", function () { zoom(1.25, box.clientWidth / 2, box.clientHeight / 2); }],
     ["\u2212", "Zoom out", function () { zoom(0.8, box.clientWidth / 2, box.clientHeight / 2); }],
     ["\u2922", "Fit the whole diagram", fit],
     ["1:1", "Actual size", function () { view = { x: 0, y: 0, k: 1 }; apply(); }]
    ].forEach(function (b) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = b[0];
      button.title = b[1];
      button.setAttribute("aria-label", b[1]);
      button.addEventListener("click", b[2]);
      bar.appendChild(button);
    });
    box.appendChild(bar);
    box.addEventListener("wheel", function (e) {
      if (!e.ctrlKey && !e.metaKey) return; // a plain wheel scrolls the page
      e.preventDefault();
      var r = box.getBoundingClientRect();
      zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    var drag = null;
    box.addEventListener("pointerdown", function (e) {
      if (e.button !== 0 || bar.contains(e.target)) return;
      drag = { x: e.clientX - view.x, y: e.clientY - view.y, moved: false };
    });
    box.addEventListener("pointermove", function (e) {
      if (!drag) return;
      if (!drag.moved && Math.abs(e.clientX - drag.x - view.x) + Math.abs(e.clientY - drag.y - view.y) < 4) return;
      drag.moved = true; // past a few pixels: a pan, not a click on a box's link
      box.setPointerCapture(e.pointerId);
      view.x = e.clientX - drag.x;
      view.y = e.clientY - drag.y;
      apply();
    });
    box.addEventListener("pointerup", function () { drag = null; });
    box.addEventListener("pointercancel", function () { drag = null; });
    apply();
  }

  function scan(root) {
    root.querySelectorAll("div.mermaid").forEach(mount);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var content = document.querySelector(".md-content");
    if (!content) return;
    scan(content);
    // Material replaces each <pre class="mermaid"> with its drawn host once Mermaid has rendered it
    new MutationObserver(function (records) {
      records.forEach(function (r) {
        r.addedNodes.forEach(function (n) {
          if (n.nodeType === 1 && n.matches("div.mermaid")) mount(n);
        });
      });
    }).observe(content, { childList: true, subtree: true });
  });
})();
