// sourcebook: lets Material's search worker run when the site is opened from file:// (no server at all).
// Browsers refuse `new Worker("file://…")`, so on file:// the worker script runs in a hidden iframe that
// shares this page's origin, with postMessage bridged both ways. Over http(s) this file does nothing.
// (The name contains "iframe-worker" so that Material's offline plugin does not add a CDN shim instead.)
(function () {
  "use strict";
  if (location.protocol !== "file:") {
    return;
  }

  class FileWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.pending = [];
      this.frame = document.createElement("iframe");
      this.frame.style.display = "none";
      this.frame.setAttribute("aria-hidden", "true");
      document.documentElement.appendChild(this.frame);
      const scope = this.frame.contentWindow;
      // the worker's global postMessage(x) answers the page
      scope.postMessage = (data) => {
        const event = new MessageEvent("message", { data: data });
        this.dispatchEvent(event);
        if (typeof this.onmessage === "function") {
          this.onmessage(event);
        }
      };
      scope.importScripts = function () {
        throw new Error("importScripts is not available when the site is opened from file://");
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = () => {
        const queued = this.pending;
        this.pending = null;
        queued.forEach((data) => this.deliver(data));
      };
      (scope.document.head || scope.document.documentElement).appendChild(script);
    }

    deliver(data) {
      const scope = this.frame.contentWindow;
      scope.dispatchEvent(new scope.MessageEvent("message", { data: data }));
    }

    postMessage(data) {
      if (this.pending) {
        this.pending.push(data);
      } else {
        this.deliver(data);
      }
    }

    terminate() {
      this.frame.remove();
    }
  }

  window.Worker = FileWorker;
})();
