"""`PKG:V1,V2,...` or `PKG:FROM..TO` to an ordered list of package specs (releases from the package index)."""

from __future__ import annotations

import re
import subprocess
import sys

from packaging.version import InvalidVersion, Version


def index_versions(package: str) -> list[str]:
    """Every release of `package` the configured index lists (`pip index versions`), oldest first."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package], capture_output=True, text=True, timeout=120
    )
    m = re.search(r"Available versions:\s*(.+)", done.stdout)
    if not m:
        raise ValueError(f"the index lists no versions of {package}: {done.stderr.strip()[-300:]}")
    return sorted((v.strip() for v in m.group(1).split(",")), key=Version)


def expand(text: str, available: list[str] | None = None) -> list[str]:
    """Final releases only for a range (no .postN / pre-releases): a bisect wants one build per release."""
    package, sep, rest = text.partition(":")
    if not sep or not package or not rest:
        raise ValueError(f"expected PKG:V1,V2 or PKG:FROM..TO, got {text!r}")
    if ".." not in rest:
        chosen = [v.strip() for v in rest.split(",") if v.strip()]
    else:
        lo_text, _, hi_text = rest.partition("..")
        try:
            lo, hi = Version(lo_text), Version(hi_text)
        except InvalidVersion as e:
            raise ValueError(str(e)) from e
        versions = available if available is not None else index_versions(package)
        chosen = [v for v in versions if lo <= Version(v) <= hi and not Version(v).is_postrelease]
        chosen = [v for v in chosen if not Version(v).is_prerelease]
    if not chosen:
        raise ValueError(f"no versions of {package} in {rest!r}")
    return [f"{package}=={v}" for v in sorted(chosen, key=Version)]
