"""A wheel built from the source tree in a clean virtualenv installs, imports and generates.

Builds the library again from scratch (a few minutes on two cores; ctest runs this test alone).
The CUDA and ROCm plugins are left out to save time; the gpusim plugin, packaged the same way, is
kept and used, so the wheel's own plugin search is checked too. Skips when the Python package
index cannot be reached for the build's requirements.
"""

import os
import subprocess
import sys
import zipfile

import pytest

from conftest import BUILD_DIR, DEMO_MODEL, SOURCE_DIR

SCRIPT = """
import sys
from baton import LLM, SamplingParams
for backend in ("cpu", "gpusim"):
    llm = LLM(model=sys.argv[1], backend=backend, threads=2)
    params = SamplingParams(temperature=0, max_tokens=12)
    print(repr(llm.generate(["In the beginning"], params, use_tqdm=False)[0].outputs[0].text))
"""


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{command[:3]} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_a_wheel_built_in_a_clean_virtualenv_imports_and_runs(tmp_path):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    probe = subprocess.run(
        pip + ["download", "--no-deps", "-q", "-d", str(tmp_path / "probe"), "scikit-build-core"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot reach the Python package index: {probe.stderr.strip()[-200:]}")

    wheels = tmp_path / "wheels"
    options = [
        "-Cbuild-dir=" + str(BUILD_DIR / "wheel-build"),
        "-Ccmake.define.BATON_BUILD_CUDA=OFF",
        "-Ccmake.define.BATON_BUILD_ROCM=OFF",
    ]
    run(pip + ["wheel", "--no-deps", "-w", str(wheels)] + options + [str(SOURCE_DIR)])
    (wheel,) = wheels.glob("baton_llm-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "baton/__init__.py" in names and "baton/py.typed" in names
    assert "baton/libbaton.so" in names
    assert any(n.startswith("baton/_baton.") and n.endswith(".so") for n in names)
    assert all(n.startswith(("baton/", "baton_llm-")) for n in names), names

    assert "baton/libbaton-backend-gpusim.so" in names

    run(pip + ["install", "-q", str(wheel)])
    package = next((venv / "lib").glob("python3*/site-packages/baton"))
    for library in package.glob("*.so"):
        dynamic = run(["readelf", "-d", str(library)])
        assert str(BUILD_DIR) not in dynamic, f"{library.name} looks into the build tree"
    environment = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BATON_BACKEND_PATH")
    }
    cpu, gpusim = run(
        [str(venv / "bin" / "python"), "-c", SCRIPT, str(DEMO_MODEL)],
        cwd=tmp_path,
        env=environment,
    ).splitlines()
    assert cpu.strip()
    assert gpusim == cpu
