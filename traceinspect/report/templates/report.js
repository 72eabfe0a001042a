"use strict";
// Builds the report page from the JSON in #traceinspect-data. Text from the trace (kernel and
// range names) only ever goes into the DOM through textContent, and into plotly (which reads a
// subset of HTML in its strings) through plotText(), so it always shows as text.
(function () {
  var DATA_ID = "traceinspect-data";
  var LANE_PX = 24;          // height of one timeline lane
  var BAR_PX = 14;           // thickness of an activity bar
  var MIN_BAR_PX = 1.5;      // shortest drawn bar, so sub-pixel kernels stay visible zoomed out
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

  // x: [start, middle, end, gap] per activity; the middle point lets hover find long bars.
  function barX(s, minWidth) {
    var n = s.start_us.length, x = new Array(4 * n);
    for (var i = 0; i < n; i++) {
      var a = s.start_us[i], b = Math.max(s.end_us[i], a + minWidth);
      x[4 * i] = a; x[4 * i + 1] = (a + b) / 2; x[4 * i + 2] = b; x[4 * i + 3] = null;
    }
    return x;
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
    var nLanes = tl.lanes.length;
    var pad = Math.max(tl.span_us * 0.01, 0.001);
    var range = [-pad, tl.span_us + pad];
    var plotWidth = function () {
      var axis = div._fullLayout && div._fullLayout.xaxis;
      return (axis && axis._length) || Math.max(200, div.clientWidth - MARGIN.l - MARGIN.r);
    };
    var minWidth = function (r) { return (r[1] - r[0]) / plotWidth() * MIN_BAR_PX; };
    var traces = tl.series.map(function (s) {
      var n = s.start_us.length, y = new Array(4 * n), text = new Array(4 * n);
      for (var i = 0; i < n; i++) {
        var lane = s.lane[i], label = hoverText(tl, s, i);
        y[4 * i] = y[4 * i + 1] = y[4 * i + 2] = lane; y[4 * i + 3] = null;
        text[4 * i] = text[4 * i + 1] = text[4 * i + 2] = label; text[4 * i + 3] = null;
      }
      return {
        type: "scatter", mode: "lines", name: plotText(s.label), x: barX(s, minWidth(range)),
        y: y, text: text, hovertemplate: "%{text}<extra></extra>", connectgaps: false,
        line: { color: s.color, width: BAR_PX, simplify: false },
      };
    });
    // Shade every other group of lanes (one host thread, one GPU) to guide the eye.
    var shapes = [], blockIndex = -1, previous = null;
    tl.lanes.forEach(function (lane, i) {
      if (lane.block !== previous) { blockIndex += 1; previous = lane.block; }
      if (blockIndex % 2 === 0) {
        shapes.push({ type: "rect", xref: "paper", x0: 0, x1: 1, y0: i - 0.5, y1: i + 0.5,
          fillcolor: "#f0f3f8", line: { width: 0 }, layer: "below" });
      }
    });
    // The legend sits above the lanes; reserve its rows so lanes keep their height.
    var legendPx = 36 + LEGEND_ROW_PX * Math.ceil(traces.length / LEGEND_PER_ROW);
    var layout = {
      height: nLanes * LANE_PX + legendPx + MARGIN.b,
      margin: { l: MARGIN.l, r: MARGIN.r, t: legendPx, b: MARGIN.b },
      showlegend: true,
      legend: { orientation: "h", x: 0, y: 1, xanchor: "left", yanchor: "bottom" },
      hovermode: "closest",
      dragmode: "zoom",
      xaxis: { range: range, title: { text: "µs since trace start" }, zeroline: false,
        showgrid: true, gridcolor: "#e3e7ee", exponentformat: "none", separatethousands: true },
      yaxis: { range: [nLanes - 0.5, -0.5], fixedrange: true, zeroline: false, showgrid: false,
        tickvals: tl.lanes.map(function (_, i) { return i; }),
        ticktext: tl.lanes.map(function (lane) { return plotText(lane.label); }),
        tickfont: { size: 11 } },
      shapes: shapes,
      plot_bgcolor: "#ffffff",
    };
    var config = { displaylogo: false, responsive: true, scrollZoom: true,
      modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"] };
    Plotly.newPlot(div, traces, layout, config).then(function () {
      timelineView.highlight = function (spans) {
        var first = spans[0], width = Math.max(first[1] - first[0], 0.001);
        var marks = spans.map(function (span) {
          return { type: "rect", xref: "x", yref: "paper", x0: span[0], x1: span[1], y0: 0,
            y1: 1, fillcolor: "rgba(255, 190, 0, 0.16)", line: { color: "rgba(230, 150, 0, 0.8)",
            width: 1 }, layer: "below" };
        });
        Plotly.relayout(div, { shapes: shapes.concat(marks),
          "xaxis.range": [first[0] - 0.05 * width, first[1] + 0.05 * width] });
        document.getElementById("timeline-section").scrollIntoView({ behavior: "smooth" });
      };
      var timer = null;
      div.on("plotly_relayout", function (event) {
        var keys = Object.keys(event || {});
        if (!keys.some(function (k) { return k.indexOf("xaxis") === 0; })) return;
        clearTimeout(timer);
        timer = setTimeout(function () {
          var w = minWidth(div.layout.xaxis.range);
          Plotly.restyle(div, { x: tl.series.map(function (s) { return barX(s, w); }) });
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
