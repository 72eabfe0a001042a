"""Time to the first timeline plot of the HTML report in a real browser (headless chromium).

    python bench/html_first_paint.py TRACE [TRACE ...] [--runs 3]

For each trace: ``traceinspect analyze TRACE --html`` (timed), then the page is opened in
headless chromium (no network) and the page's own record of when its first plot was done is
read back: ``data-first-plot-ms`` on ``#timeline``, ms since navigation start (HTML parse,
JSON parse of the embedded data, plotly draw). Build a big trace first with
``bench/make_big_trace.py``. Needs Debian's chromium.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIRST_PLOT = re.compile(r'data-first-plot-ms="(\d+)"')
VIEW = re.compile(r'data-view="([^"]*)"')


def first_plot_ms(page: Path, profile: Path) -> tuple[int, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("chromium not found (Debian: apt-get install -y chromium)")
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=300, check=True,
    )
    match, view = FIRST_PLOT.search(done.stdout), VIEW.search(done.stdout)
    if match is None:
        sys.exit(f"{page}: the timeline did not draw")
    return int(match.group(1)), view.group(1) if view else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3, help="browser runs per page")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for trace in args.traces:
            page = Path(tmp) / f"{trace.name}.html"
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "traceinspect", "analyze", str(trace), "--html",
                 str(page), "-q"],
                check=True, stdout=subprocess.DEVNULL,
            )
            analyze_s = time.perf_counter() - started
            times = []
            view = ""
            for run in range(args.runs):
                ms, view = first_plot_ms(page, Path(tmp) / f"profile{run}")
                times.append(ms)
            print(
                f"{trace.name}: {trace.stat().st_size / 1e6:,.1f} MB trace, page "
                f"{page.stat().st_size / 1e6:,.1f} MB, analyze --html {analyze_s:.1f} s; "
                f"first plot {statistics.median(times):,.0f} ms (median of {args.runs}: "
                f"{', '.join(str(t) for t in times)}); lanes drawn as: {view}"
            )


if __name__ == "__main__":
    main()
