#!/usr/bin/env python3
"""`reservoir report`'s page in a real browser: headless Chromium, with every host mapped to nothing.

Writes reports with the reservoir binary (one rank with variants; two ranks with the sweep; a
900,000-event synthetic trace), opens each page through the DevTools protocol (over
--remote-debugging-pipe; the standard library only) and checks that:
  - nothing is written to the console, no exception is thrown, no request leaves the machine;
  - no src / href / url() in the rendered page points off the machine;
  - the figures of the report's JSON are in the rendered text, formatted as the CLI prints them;
  - the page's script ran ("data-drawn"), hover shows values, a drag zooms and a double-click
    restores the curves exactly as they were written;
  - it starts no timer or animation frame (it is idle once drawn);
  - it renders within 15 s (the 900k-event page) and stays within the size bounds.
Exits 77 (CTest: skipped) with a message only where Chromium is missing or cannot start.
"""

import argparse
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
RENDER_LIMIT_S = 15.0
NAMESPACES = ("http://www.w3.org/2000/svg",)

# Counts timers and animation frames the page asks for (added before any of its scripts).
TIMER_PROBE = """
(() => {
  window.__timers = 0;
  window.__frame = window.requestAnimationFrame.bind(window);  // the test's own, not counted
  for (const name of ['setTimeout', 'setInterval', 'requestAnimationFrame', 'requestIdleCallback']) {
    const orig = window[name];
    if (!orig) continue;
    window[name] = function () { window.__timers += 1; return orig.apply(this, arguments); };
  }
})();
"""

# What the rendered page refers to: every src/href attribute, every url() in its style sheets and
# style attributes.
REFS_PROBE = """
(() => {
  const refs = [];
  for (const e of document.querySelectorAll('*')) {
    for (const a of ['src', 'href', 'xlink:href', 'srcset', 'action', 'poster', 'data']) {
      const v = e.getAttribute(a);
      if (v !== null) refs.push(a + '=' + v);
    }
    const st = e.getAttribute('style');
    if (st && st.indexOf('url(') >= 0) refs.push('style=' + st);
  }
  for (const sheet of document.styleSheets) {
    let rules;
    try { rules = sheet.cssRules; } catch (e) { refs.push('sheet=' + sheet.href); continue; }
    for (const rule of rules) if (rule.cssText.indexOf('url(') >= 0) refs.push('css=' + rule.cssText);
  }
  return JSON.stringify(refs);
})()
"""


class Skip(Exception):
    pass


class Failure(Exception):
    pass


def fmt_size(b):
    """sim::formatSize: c10's format_size, two decimals rounded half to even."""
    if b < 0:
        return "-" + fmt_size(-b)
    if b <= 1024:
        return "%d bytes" % b
    for limit, div, unit in ((1048576, 1024, "KiB"), (1073741824, 1048576, "MiB"), (None, 1073741824, "GiB")):
        if limit is None or b <= limit:
            q, r = divmod(b * 100, div)
            if 2 * r > div or (2 * r == div and q % 2 == 1):
                q += 1
            return "%d.%02d %s" % (q // 100, q % 100, unit)


def _above_nine(fd):
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Browser:
    """Chromium driven over --remote-debugging-pipe (fd 3: commands in, fd 4: replies out)."""

    def __init__(self, exe, profile):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # The child's ends above 9, so that putting them at 3 and 4 (bash: dash takes one digit) closes nothing.
        to_r, from_w = _above_nine(to_r), _above_nine(from_w)
        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
                "--disable-extensions", "--mute-audio", "--user-data-dir=" + profile,
                "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-pipe", "--window-size=1280,1000",
                "about:blank"]
        shell = 'exec "$0" "$@" 3<&%d 4>&%d %d<&- %d>&-' % (to_r, from_w, to_r, from_w)
        self.proc = subprocess.Popen([shutil.which("bash") or "bash", "-c", shell] + args, pass_fds=(to_r, from_w), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_r)
        os.close(from_w)
        self.out, self.inp = to_w, from_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.out)
        os.close(self.inp)

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self.inp], [], [], left)
            if ready:
                chunk = os.read(self.inp, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed its pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, timeout=60, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise Failure("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, timeout):
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            e = self._read(deadline)
            if e.get("method") == method:
                return e
            self.events.append(e)

    def attach(self):
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        self.call("Page.addScriptToEvaluateOnNewDocument", {"source": TIMER_PROBE})

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise Failure("evaluating %r: %s" % (expression[:60], r["exceptionDetails"]))
        return r["result"].get("value")


def start_browser(work):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        raise Skip("chromium is not installed (apt-get install chromium; scripts/debian-packages.txt lists it)")
    b = Browser(exe, os.path.join(work, "profile"))
    try:
        b.call("Browser.getVersion", timeout=60, session=False)
    except (TimeoutError, EOFError, BrokenPipeError) as e:
        err = b.proc.stderr.read1(4000).decode(errors="replace") if b.proc.poll() is not None else ""
        b.proc.kill()
        raise Skip("chromium cannot run here (%s) %s" % (e, err.strip()[-500:]))
    b.attach()
    return b


def problems_in_events(events, page_url):
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled":
            out.append("console.%s: %s" % (p.get("type"), [a.get("value", a.get("description")) for a in p.get("args", [])]))
        elif m == "Runtime.exceptionThrown":
            out.append("exception: %s" % p.get("exceptionDetails", {}).get("text"))
        elif m == "Log.entryAdded":
            entry = p.get("entry", {})
            out.append("log %s: %s (%s)" % (entry.get("level"), entry.get("text"), entry.get("url", "")))
        elif m == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if url != page_url and not url.startswith("data:"):
                out.append("request: " + url)
    return out


def expected_figures(report):
    """The texts the page must show: the verdict, every table figure."""
    want = [report["verdict"]]
    for row in report["table"]:
        want.append(fmt_size(row["peak_reserved"]))
        want.append(fmt_size(row["peak_allocated"]))
        for cell in row["probes"].values():
            if cell["reserved"] is not None:
                want.append(fmt_size(cell["reserved"]))
    return want


def check_static(path, limit_bytes):
    html = open(path, encoding="utf-8").read()
    if len(html.encode()) > limit_bytes:
        raise Failure("%s: %d bytes, over %d" % (path, len(html.encode()), limit_bytes))
    rest = html
    for ns in NAMESPACES:
        rest = rest.replace(ns, "")
    m = re.search(r"https?:", rest, re.I)
    if m:
        raise Failure("%s: an URL in the file: ...%s..." % (path, rest[max(0, m.start() - 60):m.end() + 60]))
    return len(html.encode())


def interact(b):
    """Hover, drag-zoom and double-click the first chart; the curves come back exactly."""
    box = b.evaluate("""(() => { const s = document.querySelector('svg.chart'); if (!s) return null;
        s.scrollIntoView(); const r = s.getBoundingClientRect();
        return [r.left, r.top, r.width, r.height, s.querySelector('path.band').getAttribute('d')]; })()""")
    if box is None:
        raise Failure("no chart in the page")
    left, top, width, height, before = box
    y = top + height * 0.5
    for x in (left + width * 0.3, left + width * 0.5):
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    tip = b.evaluate("(() => { const t = document.getElementById('tip'); return t.hidden ? '' : t.textContent; })()")
    if "reserved" not in tip:
        raise Failure("hovering the curves shows no values: %r" % tip)
    b.call("Input.dispatchMouseEvent", {"type": "mousePressed", "x": left + width * 0.3, "y": y, "button": "left",
                                        "clickCount": 1})
    b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": left + width * 0.6, "y": y, "button": "left"})
    b.call("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": left + width * 0.6, "y": y, "button": "left",
                                        "clickCount": 1})
    zoomed = b.evaluate("document.querySelector('svg.chart path.band').getAttribute('d')")
    if zoomed == before:
        raise Failure("dragging over the curves did not zoom")
    b.evaluate("document.querySelector('svg.chart').dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))")
    after = b.evaluate("document.querySelector('svg.chart path.band').getAttribute('d')")
    if after != before:
        raise Failure("the curves redrawn at full range differ from the ones written in the page")


def check_page(b, path, report, label, screenshot=None):
    url = "file://" + os.path.abspath(path)
    b.events.clear()
    t0 = time.monotonic()
    b.call("Page.navigate", {"url": url})
    b.wait_event("Page.loadEventFired", timeout=120)
    drawn = b.evaluate("document.documentElement.getAttribute('data-drawn')")
    # Until two frames are painted: laid out and drawn, not only parsed.
    b.call("Runtime.evaluate", {"expression": "new Promise(r => __frame(() => __frame(() => r(1))))",
                                "awaitPromise": True, "returnByValue": True}, timeout=120)
    render_s = time.monotonic() - t0
    if drawn != "yes":
        raise Failure("%s: the page's script did not finish (data-drawn=%r)" % (label, drawn))
    text = b.evaluate("document.body.innerText")
    missing = [w for w in expected_figures(report) if w not in text]
    if missing:
        raise Failure("%s: not in the rendered page: %s" % (label, missing[:5]))
    refs = json.loads(b.evaluate(REFS_PROBE))
    if refs:
        raise Failure("%s: the page refers to other files: %s" % (label, refs[:5]))
    interact(b)
    timers = b.evaluate("window.__timers")
    if timers:
        raise Failure("%s: the page started %d timers or animation frames" % (label, timers))
    problems = problems_in_events(b.events, url)
    if problems:
        raise Failure("%s: %s" % (label, problems[:8]))
    if screenshot:
        b.evaluate("window.scrollTo(0, 0)")
        b.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 1500, "deviceScaleFactor": 1,
                                                       "mobile": False})
        shot = b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})["data"]
        import base64
        with open(screenshot, "wb") as f:
            f.write(base64.b64decode(shot))
        b.call("Emulation.clearDeviceMetricsOverride")
    return render_s


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def make_report(reservoir, work, name, traces, extra):
    html, md = os.path.join(work, name + ".html"), os.path.join(work, name + ".md")
    t0 = time.monotonic()
    out = run([reservoir, "report"] + traces + extra + ["--html", html, "--markdown", md, "--json"])
    return html, json.loads(out), time.monotonic() - t0


def cases(args, work):
    src = args.source_dir
    shared = args.shared if args.shared and os.path.isdir(args.shared) else None
    load = "after:state_dict_loader.py:load"
    variants = ["--probe", load, "--variant", "post-load=--cleanup " + load,
                "--variant", "pre-broadcast=--cleanup before:broadcast_weights"]
    one = [os.path.join(src, "traces/samples/resume-expandable/resume-main.rank0.pickle")]
    yield "one rank, three runs", one, variants, 3 << 20, args.screenshot
    if shared:
        two = [os.path.join(shared, "resume-expandable/resume-main.rank%d.pickle" % r) for r in (0, 1)]
    else:
        two = [os.path.join(src, "traces/samples/resume-tiny/resume-main.rank%d.pickle" % r) for r in (0, 1)]
    yield "two ranks with the sweep", two, variants + ["--sweep", "--max-candidates", "30"], 3 << 20, None
    if not args.no_big:
        big = os.path.join(work, "synth-900k.pickle")
        run([args.reservoir, "synth", big, "--events", "900000"])
        yield "900k events", [big], ["--variant", "mid=--cleanup event:450000"], \
            10 << 20, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reservoir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--shared", default="")
    ap.add_argument("--screenshot", default="", help="write a screenshot of the first page here")
    ap.add_argument("--no-big", action="store_true", help="leave out the 900k-event page")
    ap.add_argument("--keep", default="", help="write the reports into this folder and keep them")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="reservoir-browser-")
    os.makedirs(work, exist_ok=True)
    try:
        b = start_browser(work)
    except Skip as e:
        print("SKIP:", e)
        return SKIP
    try:
        for label, traces, extra, limit, shot in cases(args, work):
            html, report, made_s = make_report(args.reservoir, work, label.replace(" ", "-").replace(",", ""), traces,
                                               extra)
            size = check_static(html, limit)
            render_s = check_page(b, html, report, label, shot or None)
            print("%s: %d bytes, report written in %.1f s, rendered in %.2f s" % (label, size, made_s, render_s))
            if render_s > RENDER_LIMIT_S:
                raise Failure("%s: rendered in %.1f s, over %.0f s" % (label, render_s, RENDER_LIMIT_S))
    except Failure as e:
        print("FAIL:", e)
        return 1
    finally:
        b.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
