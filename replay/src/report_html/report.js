// reservoir report: hover values and zoom on the page's curves. The curves, ticks and marks are
// drawn into the page when it is written; this script only redraws them for a zoomed range (the
// same rule as report_html/chart.cpp) and shows values under the pointer. No timers, no requests.
(function () {
  'use strict';
  var dataEl = document.getElementById('report-data');
  if (!dataEl) return;
  var D = JSON.parse(dataEl.textContent);
  var G = D.geometry;
  var PW = G.x1 - G.x0;
  var SVGNS = 'http://www.w3.org/2000/svg';
  var tip = document.getElementById('tip');

  // Sizes as PyTorch prints them (c10's format_size), rounded half to even like the page's own text.
  function fmtSize(b) {
    if (b < 0) return '-' + fmtSize(-b);
    if (b <= 1024) return b + ' bytes';
    var d = 1073741824, u = 'GiB';
    if (b <= 1048576) { d = 1024; u = 'KiB'; } else if (b <= 1073741824) { d = 1048576; u = 'MiB'; }
    var n = b * 100, q = Math.floor(n / d), r = n - q * d;
    if (2 * r > d || (2 * r === d && q % 2 === 1)) q += 1;
    var cents = q % 100;
    return Math.floor(q / 100) + '.' + (cents < 10 ? '0' : '') + cents + ' ' + u;
  }
  function t10(v) { var i = Math.floor(v / 10), f = v - i * 10; return f ? i + '.' + f : String(i); }
  function colBegin(ax, c) { return ax.begin + Math.floor((ax.end - ax.begin) * c / ax.columns); }
  function xT(m, M) { return G.x0 * 10 + Math.floor(m * PW * 10 / M); }
  function yT(v, ymax) { return G.y1 * 10 - Math.floor(v * (G.y1 - G.y0) * 10 / ymax); }
  function drawn(view) { return Math.min(view.c1 - view.c0, PW); }
  function colsOf(view, m, M) {
    var nv = view.c1 - view.c0;
    return [view.c0 + Math.floor(m * nv / M), view.c0 + Math.floor((m + 1) * nv / M)];
  }

  function bandPath(mins, maxs, view, ymax) {
    var M = drawn(view), mx = [], mn = [], m, c;
    if (M <= 0) return '';
    for (m = 0; m < M; m++) {
      var r = colsOf(view, m, M), a = Infinity, b = -Infinity;
      for (c = r[0]; c < r[1]; c++) { if (mins[c] < a) a = mins[c]; if (maxs[c] > b) b = maxs[c]; }
      mn.push(yT(a, ymax)); mx.push(yT(b, ymax));
    }
    var d = 'M' + t10(xT(0, M)) + ' ' + t10(mx[0]);
    for (m = 1; m < M; m++) if (mx[m] !== mx[m - 1]) d += 'H' + t10(xT(m, M)) + 'V' + t10(mx[m]);
    d += 'H' + t10(xT(M, M)) + 'V' + t10(mn[M - 1]);
    for (m = M - 1; m > 0; m--) if (mn[m - 1] !== mn[m]) d += 'H' + t10(xT(m, M)) + 'V' + t10(mn[m - 1]);
    return d + 'H' + t10(xT(0, M)) + 'Z';
  }

  function niceStep(raw) {
    if (raw <= 1) return 1;
    var p = 1;
    while (p * 10 <= raw) p *= 10;
    if (p >= raw) return p;
    if (2 * p >= raw) return 2 * p;
    if (5 * p >= raw) return 5 * p;
    return 10 * p;
  }
  function tickLabel(ax, pos, step) {
    if (ax.kind === 'events') return String(pos);
    var dec = 0, s = 1000000;
    while (s > step && dec < 6) { s /= 10; dec++; }
    return ((pos - ax.begin) / 1e6).toFixed(dec) + ' s';
  }
  function posX(p, p0, p1) { return G.x0 * 10 + Math.floor((p - p0) * PW * 10 / (p1 - p0)); }

  function el(name, attrs, text) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function drawTicks(svg, ax, p0, p1) {
    var g = svg.querySelector('g.xt');
    while (g.firstChild) g.removeChild(g.firstChild);
    var rel0 = p0 - (ax.kind === 'events' ? 0 : ax.begin), span = p1 - p0;
    var step = niceStep(span / 6);
    for (var t = Math.ceil(rel0 / step) * step; t < rel0 + span; t += step) {
      var pos = t + (ax.kind === 'events' ? 0 : ax.begin), x = t10(posX(pos, p0, p1));
      g.appendChild(el('path', { d: 'M' + x + ' ' + G.y0 + 'V' + (G.y1 + 4), stroke: '#e6e6e6' }));
      g.appendChild(el('text', { x: x, y: G.y1 + 16, 'text-anchor': 'middle', 'font-size': '11', fill: '#444' },
                       tickLabel(ax, pos, step)));
    }
  }

  function redraw(svg) {
    var C = D.charts[svg.id], view = svg._view, ax = C.axis;
    var p0 = colBegin(ax, view.c0), p1 = colBegin(ax, view.c1);
    var bands = svg.querySelectorAll('path.band');
    for (var i = 0; i < bands.length; i++) {
      var run = C.runs[+bands[i].getAttribute('data-run')], q = bands[i].getAttribute('data-q');
      bands[i].setAttribute('d', q === 'r' ? bandPath(run.r, run.R, view, C.ymax) : bandPath(run.a, run.A, view, C.ymax));
    }
    drawTicks(svg, ax, p0, p1);
    var marks = svg.querySelectorAll('[data-p]');
    for (var k = 0; k < marks.length; k++) {
      var p = +marks[k].getAttribute('data-p'), inside = p >= p0 && p < p1;
      marks[k].setAttribute('visibility', inside ? 'visible' : 'hidden');
      if (inside) marks[k].setAttribute('d', marks[k].getAttribute('data-d').split('#').join(t10(posX(p, p0, p1))));
    }
    var reset = document.querySelector('button.reset[data-chart="' + svg.id + '"]');
    if (reset) reset.hidden = view.c0 === 0 && view.c1 === ax.columns;
  }

  function svgX(svg, clientX) {
    var r = svg.getBoundingClientRect();
    return (clientX - r.left) * G.w / r.width;
  }
  function rangeText(ax, lo, hi) {
    var a = colBegin(ax, lo), b = colBegin(ax, hi) - 1;
    if (ax.kind === 'events') return b > a ? 'events ' + a + '-' + b : 'event ' + a;
    var sa = ((a - ax.begin) / 1e6).toFixed(6), sb = ((b - ax.begin) / 1e6).toFixed(6);
    return b > a ? 'time ' + sa + '-' + sb + ' s' : 'time ' + sa + ' s';
  }
  function span(lo, hi) { return lo === hi ? fmtSize(lo) : fmtSize(lo) + ' - ' + fmtSize(hi); }
  function hover(svg, ev) {
    var C = D.charts[svg.id], view = svg._view, x = svgX(svg, ev.clientX), M = drawn(view);
    var guide = svg.querySelector('path.guide');
    if (M <= 0 || x < G.x0 || x >= G.x1) { tip.hidden = true; guide.setAttribute('visibility', 'hidden'); return; }
    var m = Math.min(M - 1, Math.floor((x - G.x0) * M / PW)), r = colsOf(view, m, M);
    var lines = [rangeText(C.axis, r[0], r[1])];
    for (var i = 0; i < C.runs.length; i++) {
      var run = C.runs[i], a = Infinity, b = -Infinity, c0 = Infinity, c1 = -Infinity;
      for (var c = r[0]; c < r[1]; c++) {
        a = Math.min(a, run.r[c]); b = Math.max(b, run.R[c]); c0 = Math.min(c0, run.a[c]); c1 = Math.max(c1, run.A[c]);
      }
      lines.push(run.n + ': reserved ' + span(a * D.unit, b * D.unit) + ', allocated ' + span(c0 * D.unit, c1 * D.unit));
    }
    tip.textContent = lines.join('\n');
    tip.hidden = false;
    var left = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, left) + 'px';
    tip.style.top = Math.min(ev.clientY + 14, window.innerHeight - tip.offsetHeight - 4) + 'px';
    var gx = t10(xT(m, M));
    guide.setAttribute('d', 'M' + gx + ' ' + G.y0 + 'V' + G.y1);
    guide.setAttribute('visibility', 'visible');
  }

  function zoomTo(svg, xa, xb) {
    var view = svg._view, M = drawn(view);
    var ma = Math.max(0, Math.floor((Math.min(xa, xb) - G.x0) * M / PW));
    var mb = Math.min(M, Math.ceil((Math.max(xa, xb) - G.x0) * M / PW));
    if (mb <= ma) return;
    var c0 = colsOf(view, ma, M)[0], c1 = colsOf(view, mb - 1, M)[1];
    if (c1 - c0 < 2) return;
    svg._view = { c0: c0, c1: c1 };
    redraw(svg);
  }
  function resetZoom(svg) { svg._view = { c0: 0, c1: D.charts[svg.id].axis.columns }; redraw(svg); }

  function wire(svg) {
    svg._view = { c0: 0, c1: D.charts[svg.id].axis.columns };
    var sel = svg.querySelector('rect.sel'), start = null;
    svg.addEventListener('mousemove', function (ev) {
      hover(svg, ev);
      if (start === null) return;
      var x = Math.max(G.x0, Math.min(G.x1, svgX(svg, ev.clientX)));
      sel.setAttribute('x', Math.min(start, x));
      sel.setAttribute('width', Math.abs(x - start));
    });
    svg.addEventListener('mouseleave', function () {
      tip.hidden = true;
      svg.querySelector('path.guide').setAttribute('visibility', 'hidden');
      start = null;
      sel.setAttribute('visibility', 'hidden');
    });
    svg.addEventListener('mousedown', function (ev) {
      var x = svgX(svg, ev.clientX);
      if (ev.button !== 0 || x < G.x0 || x >= G.x1) return;
      start = x;
      sel.setAttribute('x', x);
      sel.setAttribute('width', 0);
      sel.setAttribute('visibility', 'visible');
      ev.preventDefault();
    });
    svg.addEventListener('mouseup', function (ev) {
      if (start === null) return;
      var x = Math.max(G.x0, Math.min(G.x1, svgX(svg, ev.clientX)));
      sel.setAttribute('visibility', 'hidden');
      if (Math.abs(x - start) > 4) zoomTo(svg, start, x);
      start = null;
    });
    svg.addEventListener('dblclick', function () { resetZoom(svg); });
  }

  var charts = document.querySelectorAll('svg.chart');
  for (var i = 0; i < charts.length; i++) if (D.charts[charts[i].id]) wire(charts[i]);
  var resets = document.querySelectorAll('button.reset');
  for (var r = 0; r < resets.length; r++) {
    resets[r].addEventListener('click', function () {
      var svg = document.getElementById(this.getAttribute('data-chart'));
      if (svg) resetZoom(svg);
    });
  }
  var copies = document.querySelectorAll('button.copy');
  for (var k = 0; k < copies.length; k++) {
    copies[k].addEventListener('click', function () {
      var code = document.getElementById(this.getAttribute('data-for'));
      if (!code) return;
      var select = function () {
        var range = document.createRange();
        range.selectNodeContents(code);
        var s = window.getSelection();
        s.removeAllRanges();
        s.addRange(range);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(code.textContent).then(function () {}, select);
      } else {
        select();
      }
    });
  }
  document.documentElement.setAttribute('data-drawn', 'yes');
})();
