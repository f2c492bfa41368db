// Runs before the page paints: the theme a person chose (light or dark) wins over the system's; none: the system's.
(function () {
  try {
    var chosen = window.localStorage.getItem("console-theme");
    if (chosen === "light" || chosen === "dark") { document.documentElement.setAttribute("data-theme", chosen); }
  } catch (e) { /* storage refused: the system's theme */ }
})();
