// laraworker dashboard: charts (uPlot) and small conveniences. The pages
// work without it; htmx refreshes the live panels.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

  function draw(el, data) {
    var lines = data[el.dataset.kind] || [];
    var series = [{}];
    var values = [data.t];
    lines.forEach(function (l, i) {
      series.push({ label: l.label, stroke: palette[i % palette.length], width: 1.5 });
      values.push(l.data);
    });
    if (lines.length === 0) {
      series.push({ label: "none", stroke: "#ccc" });
      values.push(data.t.map(function () { return 0; }));
    }
    el.innerHTML = "";
    // The legend names the classes (no live values: off the plot they read
    // "--"); the counts' axis steps by whole jobs.
    el.uplot = new uPlot({ title: el.dataset.title, width: el.clientWidth - 16, height: 220, series: series,
      legend: { live: false },
      axes: [{}, { size: 50, incrs: countSteps, values: function (u, ticks) { return ticks.map(function (t) { return String(Math.round(t)); }); } }],
      scales: { y: { range: function (u, lo, hi) { return [0, Math.max(hi, 1)]; } } } }, values, el);
  }

  // countSteps are the y axis' tick spacings: whole numbers only.
  var countSteps = [];
  [1, 10, 100, 1000, 10000, 100000, 1000000].forEach(function (p) { countSteps.push(p, 2 * p, 5 * p); });

  function load() {
    var charts = document.querySelectorAll(".chart");
    if (!charts.length || typeof uPlot === "undefined") return;
    ["hour", "day"].forEach(function (span) {
      fetch("/api/series?span=" + span, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (data) {
        charts.forEach(function (el) { if (el.dataset.span === span) draw(el, data); });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    load();
    setInterval(load, 60000);
    var all = document.getElementById("checkall");
    if (all) all.addEventListener("change", function () {
      document.querySelectorAll("#failedlist input[name=id]").forEach(function (c) { c.checked = all.checked; });
    });
  });
})();
