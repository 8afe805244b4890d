// The agent graph at a readable size: drawn at its natural scale inside a viewport that
// zooms (wheel, the buttons) and pans (drag), instead of being shrunk to the panel's width.

import { h } from "./render.js";

const MIN = 0.2;
const MAX = 4;

export function zoomable(svg) {
  const view = { scale: 1, x: 0, y: 0 };
  const stage = h("div", { class: "graph-stage" }, svg);
  const readout = h("span", { class: "muted small graph-scale", id: "graph-scale" }, "100%");
  const apply = () => {
    stage.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.scale})`;
    readout.textContent = `${Math.round(view.scale * 100)}%`;
  };
  const zoom = (factor) => {
    view.scale = Math.min(MAX, Math.max(MIN, view.scale * factor));
    apply();
  };
  const viewport = h("div", { class: "graph-viewport", id: "graph-viewport", tabindex: "0",
    "aria-label": "Agent graph: scroll or +/- to zoom, drag to move" }, stage);
  viewport.addEventListener("wheel", (e) => {
    e.preventDefault();
    zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15);
  }, { passive: false });
  viewport.addEventListener("keydown", (e) => {
    if (e.key === "+" || e.key === "=") zoom(1.25);
    else if (e.key === "-") zoom(0.8);
  });
  let drag = null;
  viewport.addEventListener("pointerdown", (e) => {
    drag = { x: e.clientX - view.x, y: e.clientY - view.y };
    viewport.setPointerCapture(e.pointerId);
  });
  viewport.addEventListener("pointermove", (e) => {
    if (!drag) return;
    view.x = e.clientX - drag.x;
    view.y = e.clientY - drag.y;
    apply();
  });
  viewport.addEventListener("pointerup", () => { drag = null; });
  const controls = h("div", { class: "graph-controls" },
    h("button", { type: "button", class: "button ghost", id: "graph-zoom-in", onclick: () => zoom(1.25) }, "+"),
    h("button", { type: "button", class: "button ghost", id: "graph-zoom-out", onclick: () => zoom(0.8) }, "−"),
    h("button", { type: "button", class: "button ghost", id: "graph-reset", onclick: () => {
      Object.assign(view, { scale: 1, x: 0, y: 0 });
      apply();
    } }, "Reset"),
    readout);
  apply();
  return h("div", { class: "graph-box" }, controls, viewport);
}
