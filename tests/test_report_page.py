"""``spare report``: the advice as a page to forward (HTML and Markdown).

The page is checked for what it promises (each section, every figure embedded, every number's
interval, the parts of the wall time adding up to it, the levers from advise's own JSON) and
opened in a real headless browser (Chromium, when the machine has it: CI installs it).
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess

import pytest

from spare_core.cli import main
from spare_core.commands.report import build_report
from spare_core.sim.results import KEPT_STEPS, TIME_PARTS, time_breakdown

pytest.importorskip("matplotlib")

TINY = """
name = "tiny-report"

[cluster]
gpus = 64
gpus_per_node = 4
gpus_per_group = 8

[job]
step_time = "10 s"
steps = 300

[failures]
mtbf = "40 min"

[costs]
restart = "2 min"
checkpoint_save = "10 s"
gpu_hour = 2.0

[repair]
swap = "1 min"
time = "2 h"
spares = 2

[checkpoint]
memory_save = "1 s"
memory_restore = "20 s"

[compare]
policies = ["ckpt", "spare", "elastic"]
r_max = 3
seeds = 3
processes = 1
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    f = d / "tiny.toml"
    f.write_text(TINY)
    out = {"html": d / "r.html", "md": d / "r.md", "json": d / "advise.json", "file": f, "dir": d}
    code = main(["report", str(f), "--html", str(out["html"]), "--md", str(out["md"]), "--json", str(out["json"])])
    assert code == 0
    return out


def test_the_page_has_every_section_and_its_figures_embedded(page):
    text = page["html"].read_text()
    for anchor in ("recommendation", "breakdown", "levers", "figures", "assumptions", "data", "reading", "reproduce"):
        assert f'id="{anchor}"' in text, anchor
    # no network: every image is a data URI, and there is nothing else to fetch
    imgs = re.findall(r'<img src="([^"]+)"', text)
    assert len(imgs) >= 4 and all(src.startswith("data:image/png;base64,") for src in imgs)
    assert "http://" not in text and "https://" not in text
    doc = json.loads(page["json"].read_text())
    a = doc["advice"]
    # the headline's time-to-train and its interval are advise's, to the printed digits
    m, lo, hi = a["ttt_days"]
    assert f"{m:.2f} [{lo:.2f}, {hi:.2f}] days" in text


def test_the_breakdown_adds_up_to_the_wall_time_and_is_advises_runs(page):
    doc = json.loads(page["json"].read_text())
    rep = build_report(doc, "")
    assert rep["breakdown"], "no breakdown"
    for row in rep["breakdown"]:
        parts = [row[k] for k, _ in TIME_PARTS] + [row[KEPT_STEPS]]
        assert all(p >= -1e-6 * row["wall"] for p in parts), row
        assert math.fsum(parts) == pytest.approx(row["wall"], rel=1e-12)
    # the recommended strategy's row is the mean over its runs at the chosen interval
    a = doc["advice"]
    runs = [x for x in doc["runs"] if x["grid"] == "interval scan" and x["policy"] == a["policy"]
            and math.isclose(x["checkpoint_interval"], a["checkpoint_interval"], rel_tol=1e-9)]
    assert runs and rep["breakdown"][0]["wall"] == pytest.approx(time_breakdown(runs)["wall"])
    assert rep["breakdown"][0]["strategy"].endswith("(recommended)")
    # each run's own parts: none exceeds its wall time, and kept steps is what is left
    for x in runs:
        spent = math.fsum(x[k] for k, _ in TIME_PARTS)
        assert spent <= x["wall_time"] * (1 + 1e-9)


def test_the_levers_are_advises_paired_levers(page):
    doc = json.loads(page["json"].read_text())
    rep = build_report(doc, "")
    a = doc["advice"]
    assert [lv["change"] for lv in rep["levers"]] == [lv["label"] for lv in a["levers"]]
    assert "without the in-memory tier" in {lv["change"] for lv in rep["levers"]}
    # each (key, value) once, best first
    keys = [(lv["key"], json.dumps(lv["value"])) for lv in a["levers"]]
    assert len(keys) == len(set(keys))
    gains = [lv["time_percent"][0] for lv in a["levers"]]
    assert gains == sorted(gains)
    # and a lever is what its runs say: the recommended policy on that variant, paired with the headline
    from spare_core._stats import paired_ratio_ci

    first = a["levers"][0]
    base = {x["seed"]: x["ratio"] for x in doc["runs"] if x["grid"] == "interval scan" and x["policy"] == a["policy"]
            and math.isclose(x["checkpoint_interval"], a["checkpoint_interval"], rel_tol=1e-9)}
    var = [x for x in doc["runs"] if x["grid"] in ("sensitivity", "spares sweep") and x["policy"] == a["policy"]
           and x["scenario"].endswith(f"[{first['label']}]") and x["redundancy"] == a["redundancy"]]
    assert var
    want = paired_ratio_ci([x["ratio"] for x in var], [base[x["seed"]] for x in var])
    assert first["time_percent"] == pytest.approx([100 * w for w in want])


def test_the_markdown_has_the_same_report_and_its_figures_beside_it(page):
    md = page["md"].read_text()
    figs = page["dir"] / "r_figures"
    names = re.findall(r"\]\(r_figures/([^)]+)\)", md)
    assert len(names) >= 4 and all((figs / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names)
    for heading in ("## Recommendation", "## Where the time goes", "## What moves the answer", "## Assumptions",
                    "## Failure data", "## How to read the numbers", "## Reproduce"):
        assert heading in md


def test_bad_requests_are_refused_before_any_run(tmp_path, capsys):
    f = tmp_path / "tiny.toml"
    f.write_text(TINY)
    assert main(["report", str(f)]) == 2
    assert "give --html" in capsys.readouterr().err
    bad = tmp_path / "notmap.json"
    bad.write_text('{"command": "spare run"}')
    assert main(["report", str(f), "--html", str(tmp_path / "x.html"), "--map", str(bad)]) == 2
    assert "not the --json output of 'spare map'" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Chromium (CI installs Debian's chromium)")
def test_a_real_browser_opens_the_page(page, tmp_path):
    # Chromium, headless, from the file: the DOM it builds holds the headline and every figure,
    # and the screenshot is a page, not a blank
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1100,1600"]
    url = page["html"].resolve().as_uri()
    dom = subprocess.run(["chromium", *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    assert "Recommendation:" in dom and len(re.findall(r"<img ", dom)) >= 4
    shot = tmp_path / "page.png"
    subprocess.run(["chromium", *flags, f"--screenshot={shot}", url], capture_output=True, timeout=120)
    import matplotlib.image as mpimg

    px = mpimg.imread(shot)
    assert px.shape[0] == 1600 and px.shape[1] == 1100
    assert float(px[..., :3].std()) > 0.05  # text, tables and figures, not an empty page
