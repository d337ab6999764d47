"""Lighthouse 12 (mobile) and axe-core on the app's four kinds of screen, against Debian's Chromium.

Installs `lighthouse@12 @axe-core/playwright playwright-core` from the npm registry into a scratch
folder (once; reused), starts a real server on a temporary SQLite file, makes the pages and runs:

- **Lighthouse** (mobile form factor, its default simulated slow 4G and 4× CPU slowdown) on the cover,
  a Classic page in play (opened with its seat), the same page watched, and a finished page, each
  `--runs` times (3 by default, interleaved: one run of each screen per round, so a busy moment of the
  machine does not fall on one screen's runs). Prints the median score of every category, the median
  total blocking time and cumulative layout shift (with every run's), and every audit that lost points
  in the median run.
- **axe-core** (through Playwright on a 390 × 844 phone) on the same pages, with each page's sheet
  closed or open as a player would see it. Prints every violation.

Targets (issues 10 and 21): the median run scores 100 in every category on all four screens, CLS ≤ 0.02,
no axe violation. Exits 1 if one is missed. Lighthouse's performance score is timing: on a machine busy
with other work it drops by itself, so quote figures from a quiet machine (or say the machine was busy).

    python3 benchmarks/lighthouse.py                       # about 5 minutes
    python3 benchmarks/lighthouse.py --runs 1              # one run of each screen
    python3 benchmarks/lighthouse.py --scratch /tmp/lh     # where npm installs (default below)
    python3 benchmarks/lighthouse.py --only cover          # one screen
    python3 benchmarks/lighthouse.py --only "in play" --against /tmp/base --long-tasks
                                                           # interleaved with another tree
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

# A script, not a package: the shared harness lives in tests/support under the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.pages import page_ready_to_play
from tests.support.server_process import quiet_servers

NPM_PACKAGES = ["lighthouse@12", "@axe-core/playwright", "playwright-core"]
DEFAULT_SCRATCH = Path(tempfile.gettempdir()) / "dotfight-lighthouse"
CLS_TARGET = 0.02

# axe-core in Debian's Chromium through playwright-core: one phone, each URL, all violations as JSON.
AXE_SCRIPT = """
const { chromium } = require('playwright-core');
const { AxeBuilder } = require('@axe-core/playwright');
(async () => {
  const [exe, argsJson, urlsJson] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: exe, args: JSON.parse(argsJson) });
  const out = {};
  for (const [name, url] of Object.entries(JSON.parse(urlsJson))) {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 3,
      isMobile: true, hasTouch: true });
    const page = await ctx.newPage();
    await page.goto(url);
    await page.waitForFunction(() => window.dotfight !== undefined);
    await page.evaluate(() => window.dotfight.idle());
    await page.waitForTimeout(500);
    const result = await new AxeBuilder({ page }).analyze();
    out[name] = result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 6) }));
    await ctx.close();
  }
  await browser.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(2); });
"""


def npm_ready(scratch: Path) -> None:
    """Installs the npm packages into `scratch` unless they are already there."""
    scratch.mkdir(parents=True, exist_ok=True)
    wanted = [scratch / "node_modules" / p for p in ("lighthouse", "@axe-core/playwright", "playwright-core")]
    if all(p.is_dir() for p in wanted):
        return
    if not (scratch / "package.json").exists():
        (scratch / "package.json").write_text('{"name": "dotfight-lighthouse-scratch", "private": true}\n')
    print(f"npm install {' '.join(NPM_PACKAGES)} in {scratch} …", flush=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", *NPM_PACKAGES], cwd=scratch, check=True)


def make_pages(base: str) -> dict[str, str]:
    """The four screens: the cover, a Classic page in play (with its seat), watched, and finished."""
    with httpx.Client(base_url=base, timeout=10) as http:
        playing, token = page_ready_to_play(http)
        finished, token2 = page_ready_to_play(http)
        http.post(
            f"/api/pages/{finished}/actions",
            json={"action": {"type": "resign"}, "version": 3},
            headers={"Authorization": f"Bearer {token2}"},
        ).raise_for_status()
    return {
        "cover": f"{base}/",
        "in play": f"{base}/p/{playing}#seat={token}",
        "watched": f"{base}/p/{playing}",
        "finished": f"{base}/p/{finished}",
    }


def lighthouse(scratch: Path, url: str, out: Path) -> dict[str, Any]:
    """Runs Lighthouse (mobile) on one URL; returns its JSON report."""
    flags = " ".join(["--headless=new", *CHROMIUM_ARGS])
    subprocess.run(
        [
            str(scratch / "node_modules" / ".bin" / "lighthouse"),
            url,
            f"--chrome-flags={flags}",
            "--form-factor=mobile",
            "--output=json",
            f"--output-path={out}",
            "--quiet",
        ],
        cwd=scratch,
        env={**os.environ, "CHROME_PATH": CHROMIUM},
        check=True,
    )
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def lost_points(report: dict[str, Any]) -> list[str]:
    """The audits that cost a category points: `category: audit id (score) title`."""
    lines = []
    for cid, cat in report["categories"].items():
        for ref in cat["auditRefs"]:
            audit = report["audits"][ref["id"]]
            if ref.get("weight", 0) > 0 and audit.get("score") is not None and audit["score"] < 1:
                lines.append(f"{cid}: {ref['id']} ({audit['score']}) {audit.get('displayValue', '')}")
    return lines


def median_run(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The run whose performance score is the median (the others' categories may differ by noise)."""
    ranked = sorted(reports, key=lambda r: r["categories"]["performance"]["score"] or 0)
    return ranked[(len(ranked) - 1) // 2]


def long_tasks(report: dict[str, Any], top: int = 6) -> list[str]:
    """The longest main-thread tasks Lighthouse saw (as measured, before its 4x CPU multiplier), with
    the script each is charged to, and the scripts that took the most time: what blocks the page."""
    lines = []
    tasks = report["audits"].get("long-tasks", {}).get("details", {}).get("items", [])
    for task in sorted(tasks, key=lambda t: -t["duration"])[:top]:
        where = str(task.get("url", "")).rsplit("/", 1)[-1] or "(no script)"
        lines.append(f"long task {task['duration']:.0f} ms at {task.get('startTime', 0):.0f} ms: {where}")
    scripts = report["audits"].get("bootup-time", {}).get("details", {}).get("items", [])
    for item in scripts[:top]:
        where = str(item.get("url", "")).rsplit("/", 1)[-1] or item.get("url", "")
        scripting, total = item.get("scripting", 0), item.get("total", 0)
        lines.append(f"script {where}: {scripting:.0f} ms scripting, {total:.0f} ms total")
    return lines


def print_runs(label: str, reports: dict[str, list[dict[str, Any]]], show_tasks: bool) -> list[str]:
    """Prints each screen's median scores, TBT and CLS (and every run's); returns the screens missed."""
    missed = []
    print(f"Lighthouse 12, mobile{label} (median of {len(next(iter(reports.values())))}):")
    for name, runs in reports.items():
        scores = {
            cid: round(statistics.median(100 * (r["categories"][cid]["score"] or 0) for r in runs))
            for cid in runs[0]["categories"]
        }
        tbts = [r["audits"]["total-blocking-time"]["numericValue"] for r in runs]
        clss = [r["audits"]["cumulative-layout-shift"]["numericValue"] for r in runs]
        cls = statistics.median(clss)
        line = "  ".join(f"{cid} {s:3d}" for cid, s in scores.items())
        every = ", ".join(
            f"{round(100 * (r['categories']['performance']['score'] or 0))}/{t:.0f} ms"
            for r, t in zip(runs, tbts, strict=True)
        )
        print(
            f"  {name:9s} {line}  TBT {statistics.median(tbts):.0f} ms  CLS {cls:.3f}"
            f"  (performance/TBT of each run: {every})"
        )
        for lost in lost_points(median_run(runs)):
            print(f"      - {lost}")
        if show_tasks:
            for task in long_tasks(median_run(runs)):
                print(f"      · {task}")
        if any(s < 100 for s in scores.values()) or cls > CLS_TARGET:
            missed.append(f"lighthouse {name}{label}")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH, help="npm scratch folder")
    parser.add_argument(
        "--only", action="append", help="only these screens (cover, 'in play', watched, finished)"
    )
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per screen (median)")
    parser.add_argument(
        "--against",
        type=Path,
        help="another source tree (git archive <commit> | tar -x -C DIR), run interleaved with this one",
    )
    parser.add_argument(
        "--long-tasks", action="store_true", help="print the median run's longest tasks and scripts"
    )
    args = parser.parse_args()
    npm_ready(args.scratch)
    missed: list[str] = []
    trees = {"": Path(__file__).resolve().parents[1]}
    if args.against is not None:
        trees[" [against]"] = args.against.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        servers = quiet_servers(Path(tmp), trees)
        try:
            urls_of: dict[str, dict[str, str]] = {}
            for label, server in servers.items():
                server.start()
                urls = make_pages(server.base_url)
                urls_of[label] = {k: v for k, v in urls.items() if not args.only or k in args.only}
            reports: dict[str, dict[str, list[dict[str, Any]]]] = {
                label: {name: [] for name in screens} for label, screens in urls_of.items()
            }
            # Interleaved: a round runs each screen of each tree once, the trees' order alternating.
            for round_no in range(args.runs):
                labels = list(urls_of) if round_no % 2 == 0 else list(reversed(urls_of))
                for name in urls_of[""]:
                    for label in labels:
                        url = urls_of[label][name]
                        report = lighthouse(args.scratch, url, Path(tmp) / "report.json")
                        reports[label][name].append(report)
            for label in urls_of:
                missed += print_runs(label, reports[label], args.long_tasks)
            urls = urls_of[""]
            script = args.scratch / "axe-run.cjs"
            script.write_text(AXE_SCRIPT)
            run = subprocess.run(
                ["node", str(script), CHROMIUM, json.dumps(CHROMIUM_ARGS), json.dumps(urls)],
                cwd=args.scratch,
                capture_output=True,
                text=True,
                check=True,
            )
            print("axe-core:")
            for name, violations in json.loads(run.stdout).items():
                print(f"  {name:9s} {len(violations)} violation(s)")
                for v in violations:
                    print(f"      - {v['id']} ({v['impact']}): {v['help']} — {', '.join(v['nodes'])}")
                if violations:
                    missed.append(f"axe {name}")
        finally:
            for server in servers.values():
                server.stop()
    if missed:
        print("targets missed: " + ", ".join(missed))
        sys.exit(1)
    print("every target met: 100 in every category, CLS ≤ 0.02, no axe violation")


if __name__ == "__main__":
    main()
