"use strict";
// Builds the report page from the JSON in #traceinspect-data. Text from the trace (kernel and
// range names) only ever goes into the DOM through textContent, and into plotly (which reads a
// subset of HTML in its strings) through plotText(), so it always shows as text.
(function () {
  var DATA_ID = "traceinspect-data";
  var LANE_PX = 24;          // height of one timeline lane
  var BAR_PX = 14;           // thickness of an activity bar
  var MIN_BAR_PX = 1;        // shortest drawn bar (only lanes with few activities in view)
  var MARGIN = { l: 250, r: 24, b: 50 };
  var LEGEND_ROW_PX = 20;    // one row of legend entries
  var LEGEND_PER_ROW = 5;    // legend entries that fit a row on a laptop-width page

  var data = JSON.parse(document.getElementById(DATA_ID).textContent);

  function h(tag, props, children) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        if (key === "text") node.textContent = props[key];
        else if (key === "cls") { if (props[key]) node.className = props[key]; }
        else node.setAttribute(key, props[key]);
      });
    }
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function plotText(value) {
    return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // One formatter each: toLocaleString(options) builds a new one per call, far too slow for
  // the hover text of 50,000 activities.
  var US_FORMAT = new Intl.NumberFormat("en-US",
    { minimumFractionDigits: 3, maximumFractionDigits: 3 });
  var INT_FORMAT = new Intl.NumberFormat("en-US");

  function fmt(us) { return US_FORMAT.format(us); }

  function int(n) { return INT_FORMAT.format(n); }

  function renderCell(cell, column) {
    var td = h("td", { cls: column.num ? "num" : "" });
    if (cell === null || typeof cell !== "object") {
      td.textContent = cell === null || cell === undefined ? "" : String(cell);
      return td;
    }
    td.appendChild(h("span", { text: cell.text }));
    if (cell.cls) cell.cls.split(" ").forEach(function (c) { if (c) td.classList.add(c); });
    if (cell.indent) td.style.paddingLeft = (0.5 + 1.2 * Number(cell.indent)) + "em";
    if (cell.details && cell.details.length) {
      td.appendChild(h("ul", { cls: "details" }, cell.details.map(function (d) {
        return h("li", { text: d });
      })));
    }
    return td;
  }

  // A full-width row under a table row: titled lists (evidence, estimate, blockers); open
  // under the first row (the outermost region), folded under the others.
  function renderDetailRow(detail, span, open) {
    var titles = detail.sections.map(function (sec) {
      return sec.title + " (" + sec.items.length + ")";
    });
    var box = h("details", open ? { open: "" } : null, [h("summary", { text: titles.join(" · ") })]);
    detail.sections.forEach(function (sec) {
      box.appendChild(h("div", { cls: "detail-section" }, [
        h("h4", { text: sec.title }),
        h("ul", null, sec.items.map(function (item) { return h("li", { text: item }); })),
      ]));
    });
    return h("tr", { cls: "detail-row" }, [h("td", { colspan: String(span) }, [box])]);
  }

  // Set once the timeline is drawn: highlight(spans) marks a region's occurrences on it.
  var timelineView = { highlight: null };

  function showButton(spans) {
    var button = h("button", { type: "button", cls: "show",
      text: "show " + (spans.length === 1 ? "in timeline" : int(spans.length) + " in timeline"),
      title: "Zoom the timeline to the first occurrence and shade every occurrence" });
    button.addEventListener("click", function () {
      if (timelineView.highlight) timelineView.highlight(spans);
    });
    return button;
  }

  function renderTable(spec, id) {
    if (!spec.rows.length) return h("p", { cls: "empty", text: spec.empty });
    var head = h("tr", null, spec.columns.map(function (col) {
      return h("th", { cls: col.num ? "num" : "", text: col.label });
    }));
    var body = h("tbody");
    spec.rows.forEach(function (row, r) {
      var tr = h("tr", null, row.map(function (cell, i) {
        return renderCell(cell, spec.columns[i]);
      }));
      var spans = spec.spans && spec.spans[r];
      if (spans && spans.length) tr.firstChild.appendChild(showButton(spans));
      body.appendChild(tr);
      var detail = spec.details && spec.details[r];
      if (detail) body.appendChild(renderDetailRow(detail, spec.columns.length, r === 0));
    });
    var table = h("table", id ? { id: id } : null, [h("thead", null, [head]), body]);
    var wrap = h("div", { cls: "table-wrap" }, [table]);
    if (spec.note) wrap.appendChild(h("p", { cls: "note", text: spec.note }));
    return wrap;
  }

  function renderHeader() {
    var t = data.trace;
    var name = t.path.split(/[\\/]/).pop() || t.path;
    document.title = "traceinspect · " + name;
    var header = document.getElementById("header");
    header.appendChild(h("h1", { text: "traceinspect report" }));
    header.appendChild(h("div", { cls: "path", text: t.path }));
    var devices = t.devices.length ? t.devices.join(", ") : "none listed";
    header.appendChild(h("div", { cls: "meta",
      text: t.format + " (" + t.generation + ") · devices: " + devices }));
  }

  function renderHealth() {
    var section = document.getElementById("health");
    if (!data.health.length) {
      section.appendChild(h("p", { cls: "empty", text: "No trace health warnings." }));
      return;
    }
    section.appendChild(h("ul", { cls: "health" }, data.health.map(function (group) {
      var badge = h("span", { cls: "badge", text: group.kind || "note" });
      if (group.messages.length === 1) {
        return h("li", { cls: "warning" }, [badge, h("span", { text: group.messages[0] })]);
      }
      return h("li", { cls: "warning" }, [h("details", null, [
        h("summary", null, [badge, h("span", { text: group.messages.length + " warnings, e.g. " +
          group.messages[0] })]),
        h("ul", null, group.messages.map(function (m) { return h("li", { text: m }); })),
      ])]);
    })));
  }

  function renderRegions() {
    document.getElementById("regions").appendChild(renderTable(data.regions, "regions-table"));
  }

  function renderSummary() {
    var section = document.getElementById("summary");
    var s = data.summary;
    section.appendChild(h("ul", { cls: "facts" }, s.facts.map(function (f) {
      return h("li", { text: f });
    })));
    s.tables.forEach(function (spec) {
      section.appendChild(h("h3", { text: spec.title }));
      section.appendChild(renderTable(spec));
    });
  }

  // ------------------------------------------------------------------------------ timeline
  //
  // Each lane is drawn one of two ways, decided per lane for the time window in view:
  //  - activities: one bar per activity (or merged block), when the lane has few enough in
  //    view to draw them apart (at most one per BLOCK_PX pixels);
  //  - busy share: the share of each bin of BIN_PX pixels during which the lane was busy,
  //    stacked by kind, the band's full height being 100 %. A minimum bar width would paint
  //    a dense lane full of whatever is most numerous; the share stays true at any zoom.
  // The whole-trace view uses the exact shares computed with the report (data.timeline.
  // overview); zoomed windows are binned here from the activities.

  var BLOCK_PX = 3;          // a lane shows activities when each gets this many pixels
  var BIN_PX = 2;            // width of one busy-share bin
  var BAND = 0.7;            // lane band height used by bars and the busy-share area
  var FULL_VIEW = 0.995;     // a window covering this share of the trace is "the whole trace"

  function hoverText(tl, s, i) {
    var start = s.start_us[i], end = s.end_us[i], count = s.count[i];
    var lane = tl.lanes[s.lane[i]].label;
    var name = tl.names[s.name[i]];
    if (count > 1) {
      return plotText(int(count) + " × " + s.label + " merged (first: " + name + ")") +
        "<br>" + fmt(start) + " – " + fmt(end) + " µs, busy " + fmt(s.busy_us[i]) + " µs" +
        "<br>" + plotText(lane);
    }
    return plotText(name) + "<br>" + plotText(s.label) + " · start " + fmt(start) +
      " µs · " + fmt(end - start) + " µs<br>" + plotText(lane);
  }

  function lowerBound(values, x, lo, hi) {  // first index in [lo, hi) with values[i] >= x
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      if (values[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // Per series, its runs of one lane: {series, lane, lo, hi, maxDur}; and per series the
  // running total of activities (merged blocks count what they hold), s.before[i].
  function laneGroups(tl) {
    var groups = [];
    tl.series.forEach(function (s, si) {
      var n = s.lane.length, lo = 0;
      s.before = new Float64Array(n + 1);
      for (var c = 0; c < n; c++) s.before[c + 1] = s.before[c] + s.count[c];
      for (var i = 1; i <= n; i++) {
        if (i === n || s.lane[i] !== s.lane[lo]) {
          var maxDur = 0;
          for (var j = lo; j < i; j++) maxDur = Math.max(maxDur, s.end_us[j] - s.start_us[j]);
          groups.push({ series: si, lane: s.lane[lo], lo: lo, hi: i, maxDur: maxDur });
          lo = i;
        }
      }
    });
    return groups;
  }

  // Index range of a group's activities that may overlap [a, b].
  function visibleRange(s, g, a, b) {
    return [lowerBound(s.start_us, a - g.maxDur, g.lo, g.hi),
            lowerBound(s.start_us, b, g.lo, g.hi)];
  }

  // Busy share per bin of [a, b] for one group, from its activities (merged blocks spread
  // their busy time evenly over their span).
  function binGroup(s, g, a, b, bins) {
    var share = new Float64Array(bins), width = (b - a) / bins;
    var r = visibleRange(s, g, a, b);
    for (var i = r[0]; i < r[1]; i++) {
      var x0 = Math.max(s.start_us[i], a), x1 = Math.min(s.end_us[i], b);
      if (x1 <= x0) continue;
      var span = s.end_us[i] - s.start_us[i];
      var density = s.count[i] > 1 && span > 0 ? s.busy_us[i] / span : 1;
      var k0 = Math.floor((x0 - a) / width), k1 = Math.min(bins - 1, Math.floor((x1 - a) / width));
      for (var k = k0; k <= k1; k++) {
        var lo = Math.max(x0, a + k * width), hi = Math.min(x1, a + (k + 1) * width);
        if (hi > lo) share[k] += density * (hi - lo) / width;
      }
    }
    for (var m = 0; m < bins; m++) if (share[m] > 1) share[m] = 1;
    return share;
  }

  // What each lane shows for the window [a, b] drawn over px pixels.
  function computeView(tl, groups, a, b, px) {
    var nLanes = tl.lanes.length, counts = new Array(nLanes).fill(0);
    groups.forEach(function (g) {
      var s = tl.series[g.series], r = visibleRange(s, g, a, b);
      counts[g.lane] += s.before[r[1]] - s.before[r[0]];
    });
    var blockLane = counts.map(function (c) { return c <= px / BLOCK_PX; });
    var full = tl.overview && (b - a) >= FULL_VIEW * tl.span_us && a <= 0 && b >= tl.span_us;
    var bins, binUs, start, shares = [];
    if (full) {
      bins = tl.overview.bins; binUs = tl.overview.bin_us; start = tl.overview.start_us;
      tl.overview.lanes.forEach(function (entry) {
        if (!blockLane[entry.lane]) shares.push({ series: entry.series, lane: entry.lane,
          share: entry.share });
      });
    } else {
      bins = Math.max(10, Math.round(px / BIN_PX)); binUs = (b - a) / bins; start = a;
      groups.forEach(function (g) {
        if (!blockLane[g.lane]) shares.push({ series: g.series, lane: g.lane,
          share: binGroup(tl.series[g.series], g, a, b, bins) });
      });
    }
    return { a: a, b: b, counts: counts, blockLane: blockLane, bins: bins, binUs: binUs,
      start: start, shares: shares, exact: full };
  }

  // x: [start, middle, end, gap] per activity; the middle point lets hover find long bars.
  function blockTrace(tl, s, view, minWidth) {
    var x = [], y = [], text = [];
    for (var i = 0; i < s.lane.length; i++) {
      var lane = s.lane[i];
      if (!view.blockLane[lane]) continue;
      var a = s.start_us[i], e = s.end_us[i];
      if (e < view.a || a > view.b) continue;
      var b = Math.max(e, a + minWidth), label = hoverText(tl, s, i);
      x.push(a, (a + b) / 2, b, null); y.push(lane, lane, lane, null);
      text.push(label, label, label, null);
    }
    return x.length ? { x: x, y: y, text: text } : null;
  }

  // Stacked busy-share areas: one closed polygon per (lane, series), steps per bin.
  function shareTraces(tl, view) {
    var perSeries = {}, cumulative = {};
    view.shares.forEach(function (entry) {
      var lane = entry.lane, share = entry.share;
      var below = cumulative[lane] || new Float64Array(view.bins), above = new Float64Array(view.bins);
      var any = false;
      for (var k = 0; k < view.bins; k++) {
        above[k] = Math.min(1, below[k] + share[k]);
        if (share[k] > 0) any = true;
      }
      cumulative[lane] = above;
      if (!any) return;
      var xs = [], ys = [], base = lane + BAND / 2;
      var edge = function (k) { return view.start + k * view.binUs; };
      for (var i = 0; i < view.bins; i++) {
        xs.push(edge(i), edge(i + 1)); ys.push(base - BAND * above[i], base - BAND * above[i]);
      }
      for (var j = view.bins - 1; j >= 0; j--) {
        xs.push(edge(j + 1), edge(j)); ys.push(base - BAND * below[j], base - BAND * below[j]);
      }
      xs.push(null); ys.push(null);
      var acc = perSeries[entry.series] || (perSeries[entry.series] = { x: [], y: [] });
      Array.prototype.push.apply(acc.x, xs); Array.prototype.push.apply(acc.y, ys);
    });
    return perSeries;
  }

  // Invisible markers at the bin centres of busy-share lanes, carrying the hover text.
  function shareHover(tl, view) {
    var byLane = {};
    view.shares.forEach(function (entry) {
      (byLane[entry.lane] || (byLane[entry.lane] = [])).push(entry);
    });
    var x = [], y = [], text = [];
    Object.keys(byLane).forEach(function (key) {
      var lane = Number(key), entries = byLane[key];
      for (var k = 0; k < view.bins; k++) {
        var total = 0, parts = [];
        entries.forEach(function (entry) {
          var v = entry.share[k];
          if (v > 0) { total += v; parts.push(tl.series[entry.series].label + " " + pct(v)); }
        });
        if (!total) continue;
        var a = view.start + k * view.binUs;
        x.push(a + view.binUs / 2); y.push(lane);
        text.push(plotText(tl.lanes[lane].label) + "<br>" + fmt(a) + " – " +
          fmt(a + view.binUs) + " µs: busy " + pct(Math.min(1, total)) +
          (parts.length > 1 ? " (" + plotText(parts.join(", ")) + ")" : " · " +
          plotText(parts[0])));
      }
    });
    return { x: x, y: y, text: text };
  }

  function pct(v) {
    if (v > 0 && v < 0.0005) return "<0.1%";
    return (100 * v).toFixed(v < 0.1 ? 1 : 0) + "%";
  }

  // What is drawn now, as text beside the chart: per lane, how it is shown and its busy share
  // by kind over the window (a text alternative to the plot, and what a test can read).
  function renderViewSummary(tl, view, node) {
    var totals = {};
    view.shares.forEach(function (entry) {
      var sum = 0;
      for (var k = 0; k < view.bins; k++) sum += entry.share[k];
      var t = totals[entry.lane] || (totals[entry.lane] = []);
      t.push([tl.series[entry.series].label, sum / view.bins]);
    });
    var rows = tl.lanes.map(function (lane, i) {
      var shown = view.blockLane[i] ? "activities (" + int(view.counts[i]) + ")" : "busy share";
      var parts = (totals[i] || []).filter(function (p) { return p[1] > 0; });
      var busy = parts.reduce(function (acc, p) { return acc + p[1]; }, 0);
      return h("tr", null, [
        h("td", { text: lane.label }), h("td", { text: shown }),
        h("td", { cls: "num", text: view.blockLane[i] ? "" : pct(Math.min(1, busy)) }),
        h("td", { text: parts.map(function (p) { return p[0] + " " + pct(p[1]); }).join(", ") }),
      ]);
    });
    var table = h("table", { id: "timeline-view" }, [
      h("thead", null, [h("tr", null, ["lane", "drawn as", "busy", "busy by kind"].map(
        function (label) { return h("th", { text: label }); }))]),
      h("tbody", null, rows)]);
    node.textContent = "";
    node.appendChild(h("p", { cls: "note", text: "In view: " + fmt(view.a) + " – " +
      fmt(view.b) + " µs. Busy share " + (view.exact ? "over " + int(view.bins) +
      " bins of the whole trace (exact)" : "per " + BIN_PX + "-pixel bin of " +
      fmt(view.binUs) + " µs") + "." }));
    node.appendChild(table);
  }

  function renderTimeline() {
    var tl = data.timeline;
    var notes = document.getElementById("timeline-notes");
    var div = document.getElementById("timeline");
    if (tl.downsampled) {
      notes.appendChild(h("p", { cls: "warning", text:
        "Downsampled: " + int(tl.total) + " activities are drawn as " + int(tl.drawn) +
        " blocks (cap " + int(tl.downsampled.cap) + "). Runs of activities shorter than " +
        fmt(tl.downsampled.resolution_us) + " µs and at most that far apart were merged per " +
        "lane and kind; hover a block to see how many it holds." }));
    }
    if (tl.annotations_not_drawn) {
      notes.appendChild(h("p", { cls: "note", text: int(tl.annotations_not_drawn) +
        " annotation ranges nested deeper than the drawn region lanes are not drawn." }));
    }
    if (!tl.series.length) {
      div.appendChild(h("p", { cls: "empty", text: "Nothing to draw: the trace holds no GPU " +
        "activity, API calls or annotations." }));
      return;
    }
    if (typeof Plotly === "undefined") {
      div.appendChild(h("p", { cls: "warning", text: "The plotting library failed to load." }));
      return;
    }
    var groups = laneGroups(tl);
    var nLanes = tl.lanes.length;
    var pad = Math.max(tl.span_us * 0.01, 0.001);
    var fullRange = [-pad, tl.span_us + pad];
    var plotWidth = function () {
      var axis = div._fullLayout && div._fullLayout.xaxis;
      return (axis && axis._length) || Math.max(200, div.clientWidth - MARGIN.l - MARGIN.r);
    };
    var viewNode = h("details", { cls: "timeline-view" }, [
      h("summary", { text: "What the timeline shows now, lane by lane" })]);
    var viewBody = h("div");
    viewNode.appendChild(viewBody);
    div.parentNode.insertBefore(viewNode, div.nextSibling);

    // Shade every other group of lanes (one host thread, one GPU) to guide the eye.
    var bands = [], blockIndex = -1, previous = null;
    tl.lanes.forEach(function (lane, i) {
      if (lane.block !== previous) { blockIndex += 1; previous = lane.block; }
      if (blockIndex % 2 === 0) {
        bands.push({ type: "rect", xref: "paper", x0: 0, x1: 1, y0: i - 0.5, y1: i + 0.5,
          fillcolor: "#f0f3f8", line: { width: 0 }, layer: "below" });
      }
    });
    var marks = [];

    function traces(view) {
      var minWidth = (view.b - view.a) / plotWidth() * MIN_BAR_PX;
      var areas = shareTraces(tl, view);
      var out = [];
      tl.series.forEach(function (s, si) {
        // The legend entry: two points above the plot (the y axis never shows them), so every
        // kind is listed whether it is drawn as bars, as busy share, or not in view.
        out.push({
          type: "scatter", mode: "lines", name: plotText(s.label), uid: "l" + si,
          legendgroup: s.key, showlegend: true, x: [0, 0], y: [-10, -10], hoverinfo: "skip",
          line: { color: s.color, width: 10 },
        });
        var blocks = blockTrace(tl, s, view, minWidth) || { x: [], y: [], text: [] };
        out.push({
          type: "scatter", mode: "lines", name: plotText(s.label), uid: "b" + si,
          legendgroup: s.key, showlegend: false, x: blocks.x, y: blocks.y, text: blocks.text,
          hovertemplate: "%{text}<extra></extra>", connectgaps: false,
          line: { color: s.color, width: BAR_PX, simplify: false },
        });
        var area = areas[si] || { x: [], y: [] };
        out.push({
          type: "scatter", mode: "lines", name: plotText(s.label), uid: "u" + si,
          legendgroup: s.key, showlegend: false, x: area.x, y: area.y, fill: "toself",
          fillcolor: s.color, line: { width: 0, color: s.color }, hoverinfo: "skip",
        });
      });
      var hover = shareHover(tl, view);
      out.push({ type: "scatter", mode: "markers", uid: "hover", showlegend: false,
        x: hover.x, y: hover.y, text: hover.text, hovertemplate: "%{text}<extra></extra>",
        marker: { size: 8, opacity: 0 } });
      return out;
    }

    var legendPx = 36 + LEGEND_ROW_PX * Math.ceil(tl.series.length / LEGEND_PER_ROW);
    function layout(range) {
      return {
        height: nLanes * LANE_PX + legendPx + MARGIN.b,
        margin: { l: MARGIN.l, r: MARGIN.r, t: legendPx, b: MARGIN.b },
        showlegend: true, uirevision: "timeline",
        legend: { orientation: "h", x: 0, y: 1, xanchor: "left", yanchor: "bottom" },
        hovermode: "closest", dragmode: "zoom",
        xaxis: { range: range.slice(), title: { text: "µs since trace start" }, zeroline: false,
          showgrid: true, gridcolor: "#e3e7ee", exponentformat: "none", separatethousands: true },
        yaxis: { range: [nLanes - 0.5, -0.5], fixedrange: true, zeroline: false,
          showgrid: false, tickvals: tl.lanes.map(function (_, i) { return i; }),
          ticktext: tl.lanes.map(function (lane) { return plotText(lane.label); }),
          tickfont: { size: 11 } },
        shapes: bands.concat(marks),
        plot_bgcolor: "#ffffff",
      };
    }

    var current = fullRange;
    function draw(range) {
      current = range;
      var view = computeView(tl, groups, range[0], range[1], plotWidth());
      renderViewSummary(tl, view, viewBody);
      div.setAttribute("data-view", view.blockLane.map(function (b) {
        return b ? "activities" : "share"; }).join(" "));
      return Plotly.react(div, traces(view), layout(range), config);
    }

    var config = { displaylogo: false, responsive: true, scrollZoom: true,
      modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"] };
    // #range=START,END (µs since the trace start) opens the page at that window.
    var asked = /range=(-?[0-9.]+),(-?[0-9.]+)/.exec(window.location.hash);
    var first = asked && Number(asked[2]) > Number(asked[1]) ?
      [Number(asked[1]), Number(asked[2])] : fullRange;
    draw(first).then(function () {
      div.setAttribute("data-first-plot-ms", String(Math.round(performance.now())));
      timelineView.highlight = function (spans) {
        var first = spans[0], width = Math.max(first[1] - first[0], 0.001);
        marks = spans.map(function (span) {
          return { type: "rect", xref: "x", yref: "paper", x0: span[0], x1: span[1], y0: 0,
            y1: 1, fillcolor: "rgba(255, 190, 0, 0.16)", line: { color: "rgba(230, 150, 0, 0.8)",
            width: 1 }, layer: "below" };
        });
        draw([first[0] - 0.05 * width, first[1] + 0.05 * width]);
        document.getElementById("timeline-section").scrollIntoView({ behavior: "smooth" });
      };
      var timer = null;
      div.on("plotly_relayout", function (event) {
        var keys = Object.keys(event || {});
        if (!keys.some(function (k) { return k.indexOf("xaxis") === 0; })) return;
        clearTimeout(timer);
        timer = setTimeout(function () {
          var r = event["xaxis.autorange"] ? fullRange : div.layout.xaxis.range;
          if (r[0] === current[0] && r[1] === current[1]) return;
          draw([Number(r[0]), Number(r[1])]);
        }, 120);
      });
    });
  }

  renderHeader();
  renderHealth();
  renderRegions();
  renderSummary();
  renderTimeline();
})();
