// sourcebook's layer over Material: links that leave the wiki open without handing it a window reference.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll('.md-content a[href^="http"]').forEach(function (a) {
    a.setAttribute("rel", "noopener noreferrer");
  });
});
