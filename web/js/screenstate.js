// What the page's canvas shows, apart from how it is drawn (render.js) and how it is touched (input.js),
// as chessground keeps its state apart from its drawing and its input: the page model, the marks and
// what moves over the page (`overlay`: the setup marks, a base being drawn, soldiers on their way,
// crosses being drawn, the line being drawn and the pen's tip, an aim, the loupe), and how the page
// sits in its canvas (`view`: turned half a turn for red, zoomed, panned). The flows, the gestures, the
// keys and the animator write here; the renderer reads it, and draws again when told it `changed`.

const DEFAULT_PAGE = { page_width: 1000, page_height: 1400, dot_radius: 7 };

export class ScreenState {
  /** The state of the page shown in `canvas` (whose box is where the page is on screen). */
  constructor(canvas) {
    this.canvas = canvas;
    this.model = null;
    this.overlay = {};
    // Pan in CSS px; zoom ≥ 1 keeps the page covering the canvas.
    this.view = { flip: false, zoom: 1, panX: 0, panY: 0 };
    // The canvas's size in CSS px, as it was last laid out (the pan is kept within it).
    this.size = { width: 0, height: 0 };
    // During a gesture the page-to-screen transform is frozen: the finger measures against the page
    // as it was when it touched down (and the renderer's resizes wait until it lifts).
    this.frozen = null;
    this.listeners = [];
  }

  get rules() {
    return { ...DEFAULT_PAGE, ...(this.model ? this.model.rules : {}) };
  }

  /** Calls `listener()` after each change (the renderer: a frame is due). */
  listen(listener) {
    this.listeners.push(listener);
  }

  /** Says the state changed (the writers' last word after writing the overlay or the model in place). */
  changed() {
    for (const listener of this.listeners) listener();
  }

  /** Shows another model (or the same page anew from a snapshot). */
  setModel(model) {
    this.model = model;
    this.changed();
  }

  /** Sets some of the overlay's marks (the others stay). */
  mark(marks) {
    Object.assign(this.overlay, marks);
    this.changed();
  }

  /** Clears the overlay (a replay's seek: nothing is moving). */
  clearMarks() {
    this.overlay = {};
    this.changed();
  }

  /** The canvas was laid out at this CSS size: the pan is kept within it. */
  laidOut(width, height) {
    this.size = { width, height };
    this.setView(this.view);
  }

  /** Freezes the page-to-screen transform for a gesture (see `frozen`). */
  freeze() {
    const r = this.canvas.getBoundingClientRect();
    this.frozen = { rect: { left: r.left, top: r.top, width: r.width }, view: { ...this.view } };
  }

  /** Ends a gesture's freeze (a resize that waited for it is done now: see the renderer's listener). */
  unfreeze() {
    this.frozen = null;
    this.changed();
  }

  /** Converts a client (CSS pixel) point to page units (with the frozen transform during a gesture). */
  toPage(clientX, clientY) {
    const { rect, view } = this.frozen || { rect: this.canvas.getBoundingClientRect(), view: this.view };
    const { page_width: w, page_height: h } = this.rules;
    const k = (rect.width / w) * view.zoom;
    const u = (clientX - rect.left - view.panX) / k;
    const v = (clientY - rect.top - view.panY) / k;
    return view.flip ? { x: w - u, y: h - v } : { x: u, y: v };
  }

  /** Converts a page point to client (CSS pixel) coordinates. */
  toClient(x, y) {
    const rect = this.canvas.getBoundingClientRect();
    const { page_width: w, page_height: h } = this.rules;
    const view = this.view;
    const k = (rect.width / w) * view.zoom;
    const u = view.flip ? w - x : x;
    const v = view.flip ? h - y : y;
    return { x: rect.left + view.panX + u * k, y: rect.top + view.panY + v * k };
  }

  /** Page units per CSS pixel (at the current zoom). */
  unitsPerCssPx() {
    return this.rules.page_width / ((this.size.width || 1) * this.view.zoom);
  }

  /** Turns the page half a turn (true: red's seat, red at the bottom) or back. */
  setFlip(flip) {
    if (this.view.flip !== flip) this.setView({ ...this.view, flip });
  }

  /** Zooms to `zoom` (1 … 5) keeping the page point under client point (cx, cy) where it is. */
  zoomAt(cx, cy, zoom) {
    const rect = this.canvas.getBoundingClientRect();
    const z = Math.min(5, Math.max(1, zoom));
    const v = this.view;
    const fx = cx - rect.left;
    const fy = cy - rect.top;
    const panX = fx - ((fx - v.panX) * z) / v.zoom;
    const panY = fy - ((fy - v.panY) * z) / v.zoom;
    this.setView({ ...v, zoom: z, panX, panY });
  }

  /** Moves the zoomed page by (dx, dy) CSS px. */
  panBy(dx, dy) {
    const v = this.view;
    this.setView({ ...v, panX: v.panX + dx, panY: v.panY + dy });
  }

  /** Back to the whole page. */
  resetZoom() {
    this.setView({ ...this.view, zoom: 1, panX: 0, panY: 0 });
  }

  /** Takes `view`, its pan kept so that the zoomed page still covers the canvas. */
  setView(view) {
    const { width, height } = this.size;
    const clamp = (p, size) => Math.min(0, Math.max(size * (1 - view.zoom), p));
    this.view = { ...view, panX: clamp(view.panX, width || 1), panY: clamp(view.panY, height || 1) };
    this.changed();
  }
}
