"""A wheel built from the source tree in a clean virtualenv installs, imports and generates.

Builds the library again from scratch (several minutes on two cores; ctest runs this test
alone). The GPU plugins are left out to save time: this checks the packaging, which is the same
for them. Skips when the Python package index cannot be reached for the build's requirements.
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
llm = LLM(model=sys.argv[1], backend="cpu", threads=2)
output = llm.generate(["In the beginning"], SamplingParams(temperature=0, max_tokens=12))[0]
print(output.outputs[0].text)
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
        "-Ccmake.define.BATON_BUILD_GPUSIM=OFF",
    ]
    run(pip + ["wheel", "--no-deps", "-w", str(wheels)] + options + [str(SOURCE_DIR)])
    (wheel,) = wheels.glob("baton_llm-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "baton/__init__.py" in names and "baton/py.typed" in names
    assert "baton/libbaton.so" in names
    assert any(n.startswith("baton/_baton.") and n.endswith(".so") for n in names)
    assert all(n.startswith(("baton/", "baton_llm-")) for n in names), names

    run(pip + ["install", "-q", str(wheel)])
    text = run(
        [str(venv / "bin" / "python"), "-c", SCRIPT, str(DEMO_MODEL)],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert text.strip()
