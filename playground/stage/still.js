// Figures that only show: tensors under the stage (a layer's Details, the spec's documented output) drawn as the
// stage draws its own (figures.js, heatmap.js: the same cells, numbers, colours, captions, tooltip and PNG), on the
// ranges the server gives (protocol.figure_ranges' rule: one range for figures of one quantity). No controls, no
// requests: every plane drawn comes with the page. ui/figures.py mounts it.
import { Figures } from "./figures.js";
import { Tensors } from "./store.js";

export default function mount(component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(".pg-still");
  if (root && root.__key === data.key) return undefined; // a rerun of the page with the same figures: kept as drawn
  if (!root) {
    root = document.createElement("div");
    root.className = "pg-still";
    parentElement.append(root);
  }
  root.__key = data.key;
  root.classList.toggle("pg-presenter", Boolean(data.presenter));
  root.innerHTML = `<div class="pg-figures"><div class="pg-row"></div></div>`;
  const tip = Object.assign(document.createElement("div"), { className: "pg-tip" });
  tip.setAttribute("role", "tooltip"); root.append(tip);
  const answer = { figures: data.figures, blob: data.blob };
  new Tensors(Infinity).resolve(answer);
  const still = new Still(root, answer, data, tip);
  root.__still = still; // for tests
  still.draw();
  let width = 0; // refitted as the page's width changes (a sidebar opening), not as the drawing changes its height
  const resize = new ResizeObserver(([entry]) => {
    const w = Math.round(entry.contentRect.width);
    if (w !== width && width) { still.resized = true; still.draw(); }
    width = w;
  });
  resize.observe(root);
  return () => resize.disconnect();
}

// The stage's figures row without a stage: nothing picked, every plane held, the height the page gives it.
class Still extends Figures {
  constructor(root, answer, data, tip) {
    const stage = { root, answer, data: { presenter: data.presenter }, pick: null, cellEl: null, askPlanes() {} };
    super(stage, root.querySelector(".pg-row"), tip);
    this.height = data.height;
  }

  room() { return { width: this.rowEl.clientWidth || 800, height: this.height }; }
}
