// Render the formulas that pymdownx.arithmatex (generic mode) leaves as \( \) and \[ \] spans,
// on the first page and on every page loaded by mkdocs-material's instant navigation.
function renderFormulas(root) {
  renderMathInElement(root, {
    delimiters: [
      { left: "\\(", right: "\\)", display: false },
      { left: "\\[", right: "\\]", display: true },
    ],
    throwOnError: false,
  });
}
if (typeof document$ !== "undefined") {
  document$.subscribe(({ body }) => renderFormulas(body));
} else {
  document.addEventListener("DOMContentLoaded", () => renderFormulas(document.body));
}
