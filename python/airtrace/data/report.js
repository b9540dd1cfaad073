// airtrace report viewer: canvas plots with a shared time axis, zoom and pan, and
// level-of-detail drawing (per pixel column: min and max of every series, so a gap stays
// a gap; retransmissions, timeouts and resets are always drawn one by one).
// Data: JSON in #airtrace-meta, series arrays in #airtrace-blob (zlib, base64).
// The page opens on the first connection's focus (where its data flowed); a connection
// row, a finding's span and an evidence frame each select their connection and zoom.
// API for tests and scripts: window.airtrace = {ready, range(), setRange(a, b), reset(),
// whole(), panels, selectConnection(id), current(), showing(), highlighted}.
"use strict";
(function () {
  const meta = JSON.parse(document.getElementById("airtrace-meta").textContent);
  const AT = (window.airtrace = { ready: false, panels: [], drawCount: 0, error: null });
  const PAD = { l: 64, r: 12, t: 8, b: 28 };
  AT.PAD = PAD;

  async function inflate(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return await new Response(stream).arrayBuffer();
  }

  const decoded = new Map();  // series may share arrays (the overview reuses each connection's)
  function arrays(buf, s) {
    let x = decoded.get(s.x);
    if (!x) {
      x = new Float64Array(s.n);
      if (s.n) {
        const u = new Uint32Array(buf, s.x, s.n);
        for (let i = 0; i < s.n; i++) x[i] = meta.x0 + u[i] * meta.xscale;
      }
      decoded.set(s.x, x);
    }
    s.X = x;
    s.Y = s.n ? new Float32Array(buf, s.y, s.n) : new Float32Array(0);
    s.Y2 = s.y2 != null && s.n ? new Float32Array(buf, s.y2, s.n) : null;
    s.visible = true;
  }

  // ---- numbers and ticks ----
  function niceStep(span, n) {
    const raw = span / Math.max(n, 1);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }
  // The decimals that write x exactly (2.5 needs one, 0.25 two): a tick label is the
  // value at its tick, never rounded to its neighbour's.
  function decimals(x) {
    for (let d = 0; d < 10; d++) { const v = x * Math.pow(10, d); if (Math.abs(Math.round(v) - v) < 1e-6 * Math.max(1, v)) return d; }
    return 10;
  }
  function fmt(v, step) {
    const a = Math.abs(step);
    const [u, p] = a >= 1e9 ? [1e9, "G"] : a >= 1e6 ? [1e6, "M"] : a >= 1e3 ? [1e3, "k"] : [1, ""];
    const text = (v / u).toFixed(Math.min(decimals(a / u), 9));
    return (/^-0(\.0*)?$/.test(text) ? text.slice(1) : text) + p;
  }
  AT.fmt = fmt;
  function lowerBound(arr, v) {
    let lo = 0, hi = arr.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < v) lo = m + 1; else hi = m; }
    return lo;
  }

  // ---- one panel ----
  class Panel {
    constructor(spec, host) {
      this.spec = spec;
      this.series = spec.series;
      const box = document.createElement("section");
      box.className = "panel";
      box.innerHTML = `<h3>${spec.title}</h3><div class="legend"></div><div class="plotwrap"><canvas></canvas><div class="sel"></div></div>`;
      host.appendChild(box);
      this.box = box;
      this.canvas = box.querySelector("canvas");
      this.sel = box.querySelector(".sel");
      this.canvas.dataset.panel = spec.id;
      this.drawn = 0;
      const legend = box.querySelector(".legend");
      for (const s of this.series) {
        const item = document.createElement("span");
        item.className = "item";
        item.innerHTML = `<i style="background:${s.color}"></i>${s.label}<span class="shift"></span> <small>[${s.n.toLocaleString()}]</small>`;
        s.legend = item.querySelector(".shift");
        item.title = "click to hide or show";
        item.onclick = () => { s.visible = !s.visible; item.classList.toggle("off", !s.visible); this.draw(); };
        legend.appendChild(item);
      }
      this.installMouse();
    }

    size() {
      const r = this.canvas.getBoundingClientRect();
      const dpr = window.devicePixelRatio || 1;
      const w = Math.max(200, Math.round(r.width)), h = Math.max(120, Math.round(r.height));
      if (this.canvas.width !== w * dpr || this.canvas.height !== h * dpr) {
        this.canvas.width = w * dpr; this.canvas.height = h * dpr;
      }
      return { w, h, dpr };
    }

    // Multi-layer panels shift groups of series apart by a round number of bytes that
    // follows the zoom (as MultiTracer's fixed offsets do for a whole trace).
    offsetGap(x0, x1) {
      if (!this.spec.offset) return 0;
      const base = this.series.filter((s) => !s.shift && s.style !== "vlines" && s.style !== "spans");
      this.gap = 0;
      const [lo, hi] = this.yRange(x0, x1, base);
      const raw = Math.max((hi - lo) * 0.08, 1000);
      const mag = Math.pow(10, Math.floor(Math.log10(raw)));
      const gap = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= raw);
      for (const s of this.series) if (s.shift && s.legend) s.legend.textContent = ` (${s.shift > 0 ? "+" : "−"}${fmt(gap, gap)}B)`;
      return gap;
    }

    yRange(x0, x1, only) {
      let lo = Infinity, hi = -Infinity;
      for (const s of only || this.series) {
        if (!s.visible || s.style === "vlines" || s.style === "spans" || !s.n) continue;
        const sh = (s.shift || 0) * (this.gap || 0);
        let a = lowerBound(s.X, x0), b = lowerBound(s.X, x1);
        if (s.style === "step" && a > 0) a--;
        if (b < s.n) b++;
        const step = Math.max(1, Math.floor((b - a) / 20000));
        for (let i = a; i < b; i += step) {
          const y = s.Y[i] + sh;
          if (y === y) { if (y < lo) lo = y; if (y > hi) hi = y; }
          if (s.Y2) { const y2 = s.Y2[i] + sh; if (y2 === y2 && y2 > hi) hi = y2; }
        }
        // exact extremes at the strided ends
        if (b > a) for (const i of [a, b - 1]) if (s.Y[i] === s.Y[i]) { lo = Math.min(lo, s.Y[i] + sh); hi = Math.max(hi, s.Y[i] + sh); }
      }
      if (!isFinite(lo)) { lo = 0; hi = 1; }
      if (this.spec.zero) lo = Math.min(lo, 0);
      if (hi === lo) { hi += 1; lo -= 1; }
      const pad = (hi - lo) * 0.05;
      return [lo - pad, hi + pad];
    }

    draw() {
      const { w, h, dpr } = this.size();
      const ctx = this.canvas.getContext("2d");
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, w, h);
      const [x0, x1] = view;
      this.gap = this.offsetGap(x0, x1);
      const [y0, y1] = this.yRange(x0, x1);
      const pw = w - PAD.l - PAD.r, ph = h - PAD.t - PAD.b;
      const sx = pw / (x1 - x0), sy = ph / (y1 - y0);
      const X = (x) => PAD.l + (x - x0) * sx;
      const Y0 = (y) => PAD.t + ph - (y - y0) * sy;
      this.axes(ctx, w, h, x0, x1, y0, y1, X, Y0);
      ctx.save();
      ctx.beginPath(); ctx.rect(PAD.l, PAD.t, pw, ph); ctx.clip();
      let drawn = 0;
      const order = this.series.slice().sort((a, b) => (a.important ? 1 : 0) - (b.important ? 1 : 0));
      for (const s of order) {
        if (!s.visible || !s.n) continue;
        let a = s.style === "spans" ? 0 : lowerBound(s.X, x0), b = lowerBound(s.X, x1);
        if (s.style === "step" && a > 0) a--;
        if (b < s.n) b++;
        s.drawn = 0;
        if (b <= a) continue;
        ctx.strokeStyle = ctx.fillStyle = s.color;
        ctx.lineWidth = 1;
        const sh = (s.shift || 0) * this.gap;
        const Y = sh ? (y) => Y0(y + sh) : Y0;
        let k;
        if (s.style === "vlines") k = this.vlines(ctx, s, a, b, X, ph);
        else if (s.style === "spans") k = this.spans(ctx, s, a, b, X, ph, x0);
        else if (s.important || b - a <= pw * 2) k = this.exact(ctx, s, a, b, X, Y);
        else k = this.lod(ctx, s, a, b, X, Y, pw, x0, sx);
        s.drawn = k;
        drawn += k;
      }
      this.highlight(ctx, X, Y0, ph);
      ctx.restore();
      this.drawn = drawn;
      AT.drawCount++;
    }

    vlines(ctx, s, a, b, X, ph) {
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      for (let i = a; i < b; i++) { const x = Math.round(X(s.X[i])) + 0.5; ctx.moveTo(x, PAD.t); ctx.lineTo(x, PAD.t + ph); }
      ctx.stroke();
      ctx.setLineDash([]);
      return b - a;
    }

    // Spans (x: start, y: length in seconds) as shaded bands behind the data.
    spans(ctx, s, a, b, X, ph, x0) {
      ctx.save();
      ctx.globalAlpha = 0.13;
      let n = 0;
      for (let i = a; i < b; i++) {
        if (s.X[i] + s.Y[i] < x0) continue;
        const l = X(s.X[i]), r = X(s.X[i] + s.Y[i]);
        ctx.fillRect(l, PAD.t, Math.max(r - l, 1), ph); n++;
      }
      ctx.restore();
      return n;
    }

    // The evidence frames picked in the findings: a band at their time in every panel,
    // a ring at their sequence number in the sequence plots.
    highlight(ctx, X, Y, ph) {
      if (!AT.highlighted.length) return;
      ctx.save();
      ctx.strokeStyle = "#e6007e"; ctx.fillStyle = "rgba(230, 0, 126, 0.18)"; ctx.lineWidth = 2;
      for (const f of AT.highlighted) {
        const x = X(f.t);
        ctx.fillRect(x - 2, PAD.t, 4, ph);
        if (f.y != null && (this.spec.id === "tsg" || this.spec.id === "multilayer")) {
          ctx.beginPath(); ctx.arc(x, Y(f.y), 7, 0, 6.2832); ctx.stroke();
        }
      }
      ctx.restore();
    }

    mark(ctx, s, x, y) {
      if (s.marker === "o") { ctx.moveTo(x + 3.5, y); ctx.arc(x, y, 3.5, 0, 6.2832); }
      else if (s.marker === "x") { ctx.moveTo(x - 3, y - 3); ctx.lineTo(x + 3, y + 3); ctx.moveTo(x - 3, y + 3); ctx.lineTo(x + 3, y - 3); }
      else if (s.marker === "v") { ctx.moveTo(x - 4, y - 6); ctx.lineTo(x + 4, y - 6); ctx.lineTo(x, y); ctx.closePath(); }
      else ctx.rect(x - 1, y - 1, 2, 2);
    }

    exact(ctx, s, a, b, X, Y) {
      ctx.beginPath();
      if (s.style === "step" || s.style === "line") {
        let started = false, py = 0;
        for (let i = a; i < b; i++) {
          const y = s.Y[i];
          if (y !== y) { started = false; continue; }
          const x = X(s.X[i]), yy = Y(y);
          if (!started) { ctx.moveTo(x, yy); started = true; }
          else { if (s.style === "step") ctx.lineTo(x, py); ctx.lineTo(x, yy); }
          py = yy;
        }
        ctx.stroke();
      } else if (s.style === "bars" && s.Y2) {
        for (let i = a; i < b; i++) { const x = Math.round(X(s.X[i])) + 0.5; ctx.moveTo(x, Y(s.Y[i])); ctx.lineTo(x, Math.min(Y(s.Y2[i]), Y(s.Y[i]) - 1)); }
        ctx.stroke();
      } else {
        for (let i = a; i < b; i++) { const y = s.Y[i]; if (y === y) this.mark(ctx, s, X(s.X[i]), Y(y)); }
        if (s.marker === "o" || s.marker === "x") ctx.stroke(); else ctx.fill();
      }
      return b - a;
    }

    // Per pixel column: the min and max of every point in it (y2 too), drawn as one vertical
    // stroke; steps also join columns with the last value. Empty columns stay empty.
    lod(ctx, s, a, b, X, Y, pw, x0, sx) {
      const cols = Math.ceil(pw) + 1;
      const mn = new Float32Array(cols).fill(Infinity), mx = new Float32Array(cols).fill(-Infinity);
      const last = new Float32Array(cols).fill(NaN);
      for (let i = a; i < b; i++) {
        const c = Math.floor((s.X[i] - x0) * sx);
        if (c < 0 || c >= cols) continue;
        const y = s.Y[i];
        if (y !== y) continue;
        if (y < mn[c]) mn[c] = y;
        const top = s.Y2 ? s.Y2[i] : y;
        if (top > mx[c]) mx[c] = top;
        last[c] = y;
      }
      let n = 0;
      ctx.beginPath();
      if (s.style === "step" || s.style === "line") {
        let prev = NaN;
        if (a > 0 || s.X[a] < x0) prev = s.Y[a];
        for (let c = 0; c < cols; c++) {
          const x = PAD.l + c + 0.5;
          if (mn[c] === Infinity) {
            if (prev === prev) { ctx.moveTo(x - 0.5, Y(prev)); ctx.lineTo(x + 0.5, Y(prev)); }
            continue;
          }
          if (prev === prev) { ctx.moveTo(x - 0.5, Y(prev)); ctx.lineTo(x, Y(prev)); }
          ctx.moveTo(x, Y(mn[c])); ctx.lineTo(x, Y(mx[c]) - 0.5);
          prev = last[c]; n++;
        }
      } else {
        for (let c = 0; c < cols; c++) {
          if (mn[c] === Infinity) continue;
          const x = PAD.l + c + 0.5;
          ctx.moveTo(x, Y(mn[c]) + 1); ctx.lineTo(x, Y(mx[c]) - 1); n++;
        }
        ctx.lineWidth = 2;
      }
      ctx.stroke();
      ctx.lineWidth = 1;
      return n;
    }

    axes(ctx, w, h, x0, x1, y0, y1, X, Y) {
      ctx.strokeStyle = "#bbb"; ctx.fillStyle = "#333"; ctx.lineWidth = 1;
      ctx.font = "11px system-ui, sans-serif";
      ctx.strokeRect(PAD.l + 0.5, PAD.t + 0.5, w - PAD.l - PAD.r, h - PAD.t - PAD.b);
      ctx.textAlign = "center"; ctx.textBaseline = "top";
      const xs = niceStep(x1 - x0, Math.max(2, (w - PAD.l) / 90));
      ctx.beginPath();
      for (let i = Math.ceil(x0 / xs), v = i * xs; v <= x1; v = ++i * xs) {
        const x = Math.round(X(v)) + 0.5;
        ctx.moveTo(x, PAD.t); ctx.lineTo(x, h - PAD.b);
        ctx.fillText(fmt(v, xs), x, h - PAD.b + 4);
      }
      const ys = niceStep(y1 - y0, Math.max(2, (h - PAD.t - PAD.b) / 40));
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      for (let i = Math.ceil(y0 / ys), v = i * ys; v <= y1; v = ++i * ys) {
        const y = Math.round(Y(v)) + 0.5;
        ctx.moveTo(PAD.l, y); ctx.lineTo(w - PAD.r, y);
        ctx.fillText(fmt(v, ys), PAD.l - 4, y);
      }
      ctx.strokeStyle = "#eee"; ctx.stroke();
      ctx.save(); ctx.translate(12, PAD.t + (h - PAD.t - PAD.b) / 2); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "center"; ctx.textBaseline = "middle"; ctx.fillText(this.spec.ylabel, 0, 0); ctx.restore();
      ctx.textAlign = "right"; ctx.textBaseline = "bottom"; ctx.fillText("time (s)", w - PAD.r, h - 1);
    }

    // drag: zoom to the selected time range; shift-drag (or right button): pan; wheel: zoom; double-click: reset
    installMouse() {
      const c = this.canvas;
      let start = null, panFrom = null;
      const toX = (ev) => {
        const r = c.getBoundingClientRect();
        const pw = r.width - PAD.l - PAD.r;
        return view[0] + ((ev.clientX - r.left - PAD.l) / pw) * (view[1] - view[0]);
      };
      c.addEventListener("contextmenu", (ev) => ev.preventDefault());
      c.addEventListener("mousedown", (ev) => {
        if (ev.shiftKey || ev.button === 2) panFrom = { x: ev.clientX, view: view.slice() };
        else start = { x: ev.clientX, t: toX(ev) };
      });
      window.addEventListener("mousemove", (ev) => {
        if (panFrom) {
          const r = c.getBoundingClientRect();
          const dt = ((ev.clientX - panFrom.x) / (r.width - PAD.l - PAD.r)) * (panFrom.view[1] - panFrom.view[0]);
          setView(panFrom.view[0] - dt, panFrom.view[1] - dt);
        } else if (start) {
          const r = c.getBoundingClientRect();
          const a = Math.min(start.x, ev.clientX) - r.left, b = Math.max(start.x, ev.clientX) - r.left;
          Object.assign(this.sel.style, { display: "block", left: a + "px", width: b - a + "px" });
        }
      });
      window.addEventListener("mouseup", (ev) => {
        if (start) {
          const t = toX(ev);
          this.sel.style.display = "none";
          if (Math.abs(ev.clientX - start.x) > 3) setView(Math.min(start.t, t), Math.max(start.t, t));
        }
        start = null; panFrom = null;
      });
      c.addEventListener("wheel", (ev) => {
        ev.preventDefault();
        const t = toX(ev), k = Math.exp(ev.deltaY * 0.0015);
        setView(t - (t - view[0]) * k, t + (view[1] - t) * k);
      }, { passive: false });
      c.addEventListener("dblclick", () => AT.reset());
    }
  }

  // ---- the page ----
  let view = [0, 1], full = [0, 1], home = [0, 1], current = null, buffer = null, frame = 0;
  AT.highlighted = [];
  function setView(a, b) {
    if (!(b > a)) return;
    const minSpan = 1e-6;
    if (b - a < minSpan) { const m = (a + b) / 2; a = m - minSpan / 2; b = m + minSpan / 2; }
    view = [a, b];
    document.getElementById("range").textContent = `${a.toFixed(3)} s – ${b.toFixed(3)} s`;
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; drawAll(); });
  }
  function drawAll() { for (const p of AT.panels) p.draw(); }
  function padded(a, b) { const pad = Math.max((b - a) * 0.01, 0.05); return [a - pad, b + pad]; }
  function plotted(conn) { return meta.connections_views.find((v) => v.conn === conn); }

  // Plots connection `conn` (the first plotted one if it is not), on its focus.
  function show(conn) {
    const c = plotted(conn) || meta.connections_views[0];
    current = c.conn;
    const host = document.getElementById("panels");
    host.innerHTML = "";
    AT.panels = [];
    let lo = Infinity, hi = -Infinity;
    for (const spec of (meta.overview || []).concat(c.panels)) {
      for (const s of spec.series) {
        if (!s.X) arrays(buffer, s);
        if (s.n) { lo = Math.min(lo, s.X[0]); hi = Math.max(hi, s.X[s.n - 1]); }
      }
      AT.panels.push(new Panel(spec, host));
    }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    const pad = (hi - lo) * 0.01 || 0.5;
    full = [lo - pad, hi + pad];
    home = padded(c.focus[0], c.focus[1]);
    document.getElementById("showing").textContent = c.label;
    document.querySelectorAll("#conns tbody").forEach((tb) => tb.classList.toggle("current", +tb.dataset.conn === current));
    view = home.slice();
    setView(home[0], home[1]);
    drawAll();
  }

  AT.range = () => view.slice();
  AT.setRange = (a, b) => { setView(a, b); if (frame) { cancelAnimationFrame(frame); frame = 0; } drawAll(); };
  AT.reset = () => AT.setRange(home[0], home[1]);
  AT.whole = () => AT.setRange(full[0], full[1]);
  AT.selectConnection = (id) => show(id);
  AT.current = () => current;
  AT.showing = () => document.getElementById("showing").textContent;

  // A finding: its connection plotted, zoomed to its span.
  function openFinding(f) {
    if (f.conn != null && f.conn !== current) show(f.conn);
    AT.highlighted = [];
    if (f.span) { const [a, b] = padded(f.span[0], f.span[1]); AT.setRange(a, b); } else drawAll();
  }
  // An evidence frame: its connection plotted, the frame in view and highlighted.
  function openFrame(f, n) {
    const fr = f.frames.find((x) => x.frame === n);
    const conn = fr.conn != null ? fr.conn : f.conn;
    if (conn != null && conn !== current) show(conn);
    AT.highlighted = [fr];
    let [a, b] = view;
    if (!(fr.t >= a && fr.t <= b)) {
      const p = f.span ? padded(f.span[0], f.span[1]) : [a, b], w = Math.min(p[1] - p[0], b - a);
      a = fr.t - w / 2; b = fr.t + w / 2;
    }
    AT.setRange(a, b);
  }

  async function main() {
    const t0 = performance.now();
    buffer = await inflate(document.getElementById("airtrace-blob").textContent.trim());
    document.getElementById("reset").onclick = () => AT.reset();
    document.getElementById("whole").onclick = () => AT.whole();
    document.querySelectorAll("#conns tbody").forEach((tb) => {
      if (plotted(+tb.dataset.conn)) tb.onclick = () => { show(+tb.dataset.conn); document.getElementById("plots").scrollIntoView(); };
      else { tb.classList.add("unplotted"); tb.title = "not plotted: only the busiest connections are"; }
    });
    document.querySelectorAll("#findings a[data-finding]").forEach((el) => {
      el.onclick = (ev) => {
        ev.preventDefault();
        const f = meta.findings[+el.dataset.finding];
        if (el.dataset.frame != null) openFrame(f, +el.dataset.frame); else openFinding(f);
        document.getElementById("plots").scrollIntoView();
      };
    });
    window.addEventListener("resize", () => drawAll());
    if (meta.connections_views.length) show(meta.connections_views[0].conn);
    AT.loadMs = performance.now() - t0;  // inflate, decode and first draw
    AT.readyAt = performance.now();      // since navigation start: parse and everything
    AT.ready = true;
    document.body.dataset.ready = "1";
  }
  main().catch((e) => { AT.error = String(e); console.error(e); });
})();
