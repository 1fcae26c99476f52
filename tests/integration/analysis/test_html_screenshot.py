"""The self-contained HTML report opens in headless Chromium with every image decoded, and renders non-blank.

Install on CI: `apt-get update && apt-get install -y chromium`. Skipped only where Chromium is absent and the
`CI` environment variable is unset; on CI a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

CHECK = (
    "<script>function specqualCheck(){var a=Array.from(document.images);document.body.setAttribute("
    "'data-images',a.filter(function(i){return i.complete&&i.naturalWidth>0}).length+'/'+a.length)}"
    "window.addEventListener('load',specqualCheck);specqualCheck();</script>"
)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("Chromium is not installed (apt-get install -y chromium) and CI is set")
    pytest.skip("Chromium is not installed (apt-get install -y chromium)")


def run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", *args]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def test_every_image_loads(motivating_run: Path, motivating_report: object, tmp_path: Path) -> None:
    html = (motivating_run / "report.html").read_text()
    images = len(re.findall(r"<img ", html))
    assert images >= 6
    probe = tmp_path / "check.html"
    probe.write_text(html.replace("</body>", CHECK + "</body>"))
    dom = run_chromium(tmp_path, "--dump-dom", probe.as_uri()).stdout
    assert f'data-images="{images}/{images}"' in dom


def test_screenshot_is_not_blank(motivating_run: Path, motivating_report: object, tmp_path: Path) -> None:
    import matplotlib.image

    shot = tmp_path / "report.png"
    proc = run_chromium(
        tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", (motivating_run / "report.html").as_uri()
    )
    assert shot.exists(), proc.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    not_white = np.mean(pixels.min(axis=2) < 0.9)
    assert not_white > 0.05, f"only {not_white:.1%} of the screenshot is not white"
    colours = {tuple(np.round(p, 1)) for p in pixels.reshape(-1, 3)[::97]}
    assert len(colours) > 20  # text, tables, verdict colours and a plot, not a flat page
