"""The explorers live in JupyterLab and in the classic Jupyter Notebook interface (Notebook 7):
rendered by anywidget, state synced both ways with the kernel.

Needs their servers, which are not among the course's run-time dependencies
(the `test` extra installs both): `pip install jupyterlab notebook`, or point
ATTENTION_COURSE_JUPYTER_LAB / ATTENTION_COURSE_JUPYTER_NOTEBOOK at a
`jupyter-lab` / `jupyter-notebook` executable (it may live in another
environment; the kernel is this interpreter, and the anywidget and
widget-manager extensions are taken from this environment's share/jupyter).
Without one, its test is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "live.ipynb"
"""The notebook of the explorers the server opens, in its root folder."""


@dataclass(frozen=True)
class Frontend:
    name: str
    command: str  # the server's executable
    variable: str  # an environment variable that may point at it
    path: str  # the notebook's URL path on the server
    options: tuple[str, ...]  # options of this server only
    screenshot: str
    # Errors the interface itself raises on any notebook, with none of the course's code on the page.
    known_errors: tuple[str, ...] = ()

    def knows(self, error: str) -> bool:
        """Whether an error (its text, perhaps followed by " [the URL it is about]") is one of `known_errors`."""
        return any(error == known or error.startswith(f"{known} [") for known in self.known_errors)

    def executable(self) -> str | None:
        candidates = [os.environ.get(self.variable), str(Path(sys.prefix) / "bin" / self.command),
                      shutil.which(self.command)]
        return next((c for c in candidates if c and Path(c).is_file()), None)


FRONTENDS = [
    Frontend("JupyterLab", "jupyter-lab", "ATTENTION_COURSE_JUPYTER_LAB", f"/lab/tree/{NOTEBOOK}",
             ("--LabApp.news_url=None",), "jupyterlab"),
    Frontend("Jupyter Notebook", "jupyter-notebook", "ATTENTION_COURSE_JUPYTER_NOTEBOOK", f"/notebooks/{NOTEBOOK}",
             ("--JupyterNotebookApp.news_url=None",), "notebook",
             # Notebook 7.6.5 with JupyterLab 4.6.6 throws this while loading its settings, also on an
             # empty notebook in a fresh environment with no extension of ours (Notebook 7.5.4 does not).
             known_errors=("Cannot read properties of undefined (reading 'schema')",)),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=FRONTENDS, ids=lambda f: f.command)
def frontend(request):
    return request.param


@pytest.fixture
def lab_server(tmp_path, frontend):
    """A Jupyter server on a free local port with a notebook of the explorers; yields (notebook URL, base URL)."""
    executable = frontend.executable()
    if executable is None:
        pytest.skip(f"{frontend.name} is not installed: pip install {frontend.command.removeprefix('jupyter-')}, "
                    f"or set {frontend.variable}")
    kernels = tmp_path / "data" / "kernels" / "attention-course"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "attention-course", "language": "python",
        "env": {"PYTHONPATH": str(REPO)},
    }))
    work = tmp_path / "work"
    work.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "attention-course", "display_name": "attention-course", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(code) for code in (
        "from attention_course.explorers import (\n"
        "    CostExplorer, FrontierExplorer, KVCacheExplorer, MaskExplorer, PositionsExplorer, RooflineExplorer,\n"
        "    ScalingExplorer, ScoresExplorer,\n"
        ")\n"
        "scores = ScoresExplorer()\nscores",
        "scaling = ScalingExplorer()\nscaling",
        "masks = MaskExplorer()\nmasks",
        "cost = CostExplorer()\ncost",
        "positions = PositionsExplorer()\npositions",
        "kv = KVCacheExplorer()\nkv",
        "roof = RooflineExplorer()\nroof",
        "frontier = FrontierExplorer()\nfrontier",
    )]
    nbformat.write(nb, work / NOTEBOOK)
    port = free_port()
    env = {**os.environ, "JUPYTER_PATH": os.pathsep.join([str(tmp_path / "data"), str(Path(sys.prefix) / "share" / "jupyter")])}
    server = subprocess.Popen(
        [executable, "--no-browser", "--allow-root", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
         f"--ServerApp.root_dir={work}", *frontend.options],
        env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / "lab.log").open("w"),
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180  # a loaded 2-core machine has been seen to need more than a minute
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    log = (tmp_path / "lab.log").read_text(errors="replace")[-3000:]
                    pytest.fail(f"{frontend.name} ({executable}) did not start on port {port}; its log ends:\n{log}")
                time.sleep(0.5)
        yield f"{base}{frontend.path}", base
    finally:
        server.terminate()
        server.wait(timeout=30)


def console_error(msg) -> str:
    """A console error's text, with the URL it is about when the text alone does not name one."""
    url = (msg.location or {}).get("url", "")
    return f"{msg.text} [{url}]" if url and url not in msg.text else msg.text


KERNEL_URL = re.compile(r"/api/kernels/([0-9a-f-]{36})")


def about_ended_kernel(error: str, base: str) -> bool:
    """Whether a console error is JupyterLab reconnecting to a kernel that no longer runs.

    On a busy machine the kernel first started can be replaced (the kernel
    dialog answered after a default kernel had started): the page then keeps
    trying the old kernel's websocket and logs a 404 for it. That is the
    interface's, not the explorers'. A kernel the server still runs is never
    excused.
    """
    found = KERNEL_URL.search(error)
    if found is None or "404" not in error:
        return False
    try:
        with urllib.request.urlopen(f"{base}/api/kernels", timeout=10) as response:
            running = {kernel["id"] for kernel in json.load(response)}
    except OSError:
        return False
    return found.group(1) not in running


def server_kernel_ready(base: str) -> bool:
    """Whether the server runs the notebook's kernel, idle, with the page connected to it (its websocket open).

    What the page shows is not enough: JupyterLab's execution indicator reads
    "idle" before the kernel has even started, and a "Run All Cells" sent then
    runs nothing at all (its prompts stay "[ ]:").
    """
    try:
        with urllib.request.urlopen(f"{base}/api/sessions", timeout=10) as response:
            sessions = json.load(response)
    except OSError:
        return False
    kernels = [s["kernel"] for s in sessions if s.get("path") == NOTEBOOK and s.get("kernel")]
    return any(k.get("execution_state") == "idle" and k.get("connections", 0) >= 1 for k in kernels)


def wait_for_idle_kernel(page, base: str, seconds: float = 120) -> None:
    """Wait until the notebook's kernel is idle, on the server and on the page, and no dialog is open, choosing the
    kernel if JupyterLab asks.

    JupyterLab asks which kernel to start when the notebook opens before it has
    read the kernel specs, which on a busy machine can happen seconds later, so
    the question is answered whenever it comes.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        select = page.locator(".jp-Dialog").get_by_role("button", name="Select")
        if select.count() and select.first.is_visible():
            select.first.click()
        elif (page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count()
              and not page.locator(".jp-Dialog").count() and server_kernel_ready(base)):
            return
        page.wait_for_timeout(250)
    pytest.fail(f"the kernel was not idle after {seconds:g} s")


def run_cell(page, base: str, code: str, seconds: float = 120) -> str:
    """Append a cell, run it, and return its text output (waiting up to `seconds` for it).

    A loaded 2-core machine has been seen to take more than 30 s to show a
    fresh kernel's first output (importing the explorers), so the wait is long;
    a cell that runs quickly returns as soon as its output appears.
    """
    wait_for_idle_kernel(page, base)  # a cell appended while the kernel is busy would queue behind unfinished work
    page.locator(".jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.type(code)
    # the new cell itself, wherever it is: a notebook whose cells have not run renders only those in view, so the
    # last cell rendered need not be the notebook's last
    cell = page.locator(".jp-Cell.jp-mod-active").element_handle()
    page.keyboard.press("Shift+Enter")
    # Right after the page opens, a cell run before the kernel's connection is ready is not run at all (its prompt
    # stays "[ ]:", as "Run All Cells" in test_explorers_run_live can be): run it again until it has been sent.
    for _ in range(5):
        if _was_sent(cell):
            break
        cell.query_selector(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
    return cell.wait_for_selector(".jp-OutputArea-output", timeout=seconds * 1000).inner_text()


def _was_sent(cell, seconds: float = 15) -> bool:
    """True once the cell's prompt shows it queued or run ("[*]:", "[3]:"), within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        prompt = cell.query_selector(".jp-InputPrompt")
        if prompt is not None and re.search(r"[*\d]", prompt.inner_text()):
            return True
        time.sleep(0.25)
    return False


def test_explorers_run_live(browser, lab_server, frontend, screenshots, tmp_path):
    url, base = lab_server
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    external, errors = [], []

    def route(route):
        if route.request.url.startswith((base, base.replace("http", "ws"), "data:", "blob:")):
            route.continue_()
        else:
            external.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    # a console message names the resource it is about in its location, not in its text
    page.on("console", lambda msg: msg.type == "error" and errors.append(console_error(msg)))
    page.on("pageerror", lambda error: errors.append(str(error)))
    failed = []  # the server's own errors, named by the request that met them
    page.on("response", lambda response: response.status >= 500 and failed.append(
        f"{response.status} {response.request.method} {response.url}"))
    try:
        page.goto(url)
        page.locator(".jp-Cell").first.wait_for(timeout=90000)
        # Sent once the kernel is ready (wait_for_idle_kernel asks the server), the first "Run All Cells" runs;
        # should one still run nothing (its prompts stay "[ ]:"), it is sent again when the first cell has not run
        # in 30 s.
        for attempt in range(3):
            wait_for_idle_kernel(page, base)  # before each send: the kernel dialog, too, may come late
            try:
                page.get_by_role("menuitem", name="Run", exact=True).click(timeout=15000)
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click(timeout=15000)
                page.wait_for_function(
                    "() => /\\[\\d+\\]/.test(document.querySelector('.jp-Cell .jp-InputPrompt')?.textContent ?? '')",
                    timeout=30000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
                if not page.locator(".jp-Dialog").count():  # (Escape would dismiss the kernel dialog without a kernel)
                    page.keyboard.press("Escape")  # close a menu left open
        # On a very busy machine a "Run All Cells" sent while the kernel connects may run the first
        # cell only (seen with a load average of 15 on the 2 cores): run them all again if so.
        for attempt in range(3):
            try:
                for name in ("scores", "scaling", "masks", "cost", "positions", "kv-cache", "roofline", "frontier"):
                    page.locator(f'.jp-OutputArea [data-explorer="{name}"]').wait_for(timeout=60000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
                page.keyboard.press("Escape")  # close a menu left open
                page.get_by_role("menuitem", name="Run", exact=True).click(timeout=15000)
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click(timeout=15000)
        # Rendered by the widget manager (anywidget), not from the static text/html entry
        # (which JupyterLab would show in a .jp-RenderedHTMLCommon); the sync below proves it.
        assert page.locator(".jp-OutputArea-output .ac-explorer").count() == 8
        assert page.locator(".jp-RenderedHTMLCommon .ac-explorer").count() == 0

        # Page -> kernel: the reader sets d_k; Python sees it and computes the same weights.
        box = page.locator('[data-explorer="scores"]')
        box.get_by_label("d_k", exact=True).fill("16")
        shown = box.locator('[data-role="weight"]').all_text_contents()
        printed = run_cell(page, base, "print(scores.d_k, [f'{w:.3f}' for w in scores.trace().weights])")
        assert printed.strip() == f"16 {shown}"
        box.screenshot(path=screenshots / f"{frontend.screenshot}-scores-dk16.png")

        # Kernel -> page: Python moves the slider and flips the switches.
        run_cell(page, base, "scaling.d_k = 512; scaling.scaled = True; masks.padding = False; print('set')")
        scaling = page.locator('[data-explorer="scaling"]')
        page.wait_for_function(
            "() => document.querySelector('[data-explorer=\"scaling\"] [data-role=\"d_k\"]').value === '512'")
        assert scaling.locator('[data-role="scaled"]').is_checked()
        assert not page.locator('[data-explorer="masks"] [data-role="padding"]').is_checked()
        scaling.screenshot(path=screenshots / f"{frontend.screenshot}-scaling-from-kernel.png")

        # Positions, both ways: the page moves both tokens; the kernel switches to ALiBi.
        positions = page.locator('[data-explorer="positions"]')
        positions.get_by_label("move both together (keep m − n)").check()
        positions.get_by_role("slider", name="query position m (“blocked”)").fill("40")
        shown_score = positions.locator('[data-role="rope-score"]').text_content()
        printed = run_cell(page, base, "s = positions.numbers(); print(positions.m, positions.n, f\"{s['rope_score']:.3f}\")")
        assert printed.strip() == f"40 38 {shown_score}" and shown_score == "5.492"
        run_cell(page, base, "positions.method = 'alibi'; positions.head = 1; print('set')")
        page.wait_for_function(
            "() => document.querySelector('[data-explorer=\"positions\"] [data-role=\"method\"]').value === 'alibi'")
        assert positions.locator('[data-role="bias"]').text_content() == "-0.500"  # slope 1/4, distance 2
        positions.screenshot(path=screenshots / f"{frontend.screenshot}-positions.png")
        # The KV-cache explorer both ways: the reader picks a configuration, Python moves a number.
        kv = page.locator('[data-explorer="kv-cache"]')
        kv.get_by_label("configuration").select_option("mistralai/Mistral-7B-v0.1")
        printed = run_cell(page, base, "print(kv.preset, kv.window, kv.summary_numbers()['tokens_kept'])")
        assert printed.strip() == "mistralai/Mistral-7B-v0.1 4096 4095"
        run_cell(page, base, "kv.n_kv_heads = 1; print('set')")
        page.wait_for_function(
            "() => document.querySelector('[data-explorer=\"kv-cache\"] [data-role=\"n_kv_heads\"]').value === '1'")
        assert "multi-query" in kv.locator('[data-role="groups-heading"]').text_content()
        # The roofline both ways: the reader picks a layout, Python raises the batch.
        roof = page.locator('[data-explorer="roofline"]')
        roof.get_by_label("head layout").select_option("MLA")
        shown_intensity = roof.locator('[data-role="decode-intensity"]').text_content()
        printed = run_cell(page, base, "print(roof.head_layout, f\"{roof.numbers()['decode']['intensity']:.2f}\")")
        assert printed.strip() == f"MLA {shown_intensity}"
        run_cell(page, base, "roof.batch = 64; print('set')")
        page.wait_for_function(
            "() => document.querySelector('[data-explorer=\"roofline\"] [data-role=\"batch\"]').value === '64'")
        # Attention without all the scores both ways: the reader moves k, Python picks a configuration.
        frontier = page.locator('[data-explorer="frontier"]')
        frontier.get_by_label("keys kept k", exact=True).fill("1")
        printed = run_cell(page, base, "print(frontier.k, f\"{frontier.summary_numbers()['dropped_mass']:.3f}\")")
        assert printed.strip() == "1 0.218"  # only "card" kept
        run_cell(page, base, "frontier.preset = 'GLM-5'; print('set')")
        page.wait_for_function(
            "() => document.querySelector('[data-explorer=\"frontier\"] [data-role=\"preset\"]').value === 'GLM-5'")
        assert "GlmMoeDsaConfig" in frontier.locator('[data-role="source"]').text_content()
        # The explorer of today's models, made in a cell of its own: the reader picks a configuration, Python sees it.
        run_cell(page, base, "from attention_course.explorers import TodaysModelsExplorer\n"
                             "todays = TodaysModelsExplorer()\ntodays")
        todays = page.locator('.jp-OutputArea [data-explorer="todays-models"]')
        todays.wait_for(timeout=60000)
        todays.get_by_label("configuration").select_option("openai/gpt-oss-120b")
        shown = todays.locator('[data-role="GQA-per-token"]').text_content()
        printed = run_cell(page, base, "rows = todays.numbers()['cache']['rows']\n"
                                       "print(todays.preset, todays.rope_type, rows[1]['per_token'])")
        assert printed.strip() == "openai/gpt-oss-120b yarn 73728" and shown == "72.00 KiB"
        run_cell(page, base, "todays.rope_type = 'linear'; print('set')")
        page.wait_for_function(
            "() => document.querySelector('[data-explorer=\"todays-models\"] [data-role=\"rope_type\"]').value === 'linear'")
        assert todays.locator('[data-role="slowed"]').text_content() == "32"  # every pair of d = 64
        todays.screenshot(path=screenshots / f"{frontend.screenshot}-todays-models.png")
        page.screenshot(path=screenshots / f"{frontend.screenshot}.png")
    except Exception:
        page.screenshot(path=screenshots / f"{frontend.screenshot}-failure.png")
        raise
    finally:
        context.close()
    assert not external, f"{frontend.name} page made requests leaving the machine: {external}"
    errors = [e for e in errors if not frontend.knows(e) and not about_ended_kernel(e, base)]
    # The explorers serve nothing over HTTP (their files come with the extension, their numbers over the
    # kernel's websocket): a 5xx from the Jupyter server's own REST API (contents, kernels, sessions,
    # workspaces) on a busy machine is the server's, reported with its log, not the explorers' failure.
    ours = [f for f in failed if not f.split(" ", 2)[2].startswith((f"{base}/api/", f"{base}/lab/api/"))]
    if failed and not ours:
        log = (tmp_path / "lab.log").read_text(errors="replace")[-3000:]
        warnings.warn(f"{frontend.name}'s server failed its own requests {failed}; its log ends:\n{log}")
        errors = [e for e in errors if not e.startswith("Failed to load resource: the server responded with a status of 5")]
    assert not errors, f"console errors in {frontend.name}: {errors}; server errors: {failed}"
