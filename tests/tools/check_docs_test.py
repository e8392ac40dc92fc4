"""scripts/check_docs.py on made-up trees: docs that name existing files, tests and flags pass;
each kind of stale reference (a missing path or link, test, test target or flag, a layer folder
missing from architecture.md's diagram, a result file missing from the index or without its
date, commit, host and command) fails naming the doc and the line."""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_docs.py")

ARCHITECTURE = """# Architecture

```
2 api         core/api
1 runtime     core/runtime, ops/
```

## Where does my change go

| change | where |
|---|---|
| a new op | `core/runtime/op.h`, `ops/reference.h` |
"""

TREE = {
    "cmake/layers.cmake": "set(BATON_LAYERS runtime api)\n"
                          "set(baton_layer_folders_runtime core/runtime ops)\n"
                          "set(baton_layer_folders_api core/api)\n",
    "core/runtime/op.h": "",
    "core/runtime/quantize/quantize_k.cpp": "",
    "core/runtime/quantize/quantize_legacy.cpp": "",
    "core/api/llm.h": "",
    "ops/reference.h": "",
    "models/llama.cpp": "",
    "tools/model_flags.cpp": 'cmd.add_option("--sjf-overtake", o.sjf_overtake, "ratio");\n'
                             'cmd.add_option("-m,--model", o.model, "file");\n'
                             'cmd.add_flag("--no-prefix-cache{false}", o.prefix, "off");\n',
    "tools/bench/compare_servers.py": 'parser.add_argument("--rounds", type=int)\n',
    "scripts/test.sh": 'case "$1" in --quick) quick=1 ;; esac\n',
    "tests/CMakeLists.txt": "function(baton_add_test name)\nendfunction()\n"
                            "baton_add_test(test_engine SOURCES engine_test.cpp)\n"
                            "add_test(NAME Layers.EveryIncludePointsDownTheLayers COMMAND x)\n"
                            "foreach(ranks 2 4)\n  add_test(NAME Distributed.Over${ranks}Ranks"
                            " COMMAND y)\nendforeach()\n",
    "tests/core/engine_test.cpp": "TEST(Scheduler, AdmitsInOrder) {}\n"
                                  "TEST_F(EngineBatching, BatchedOutputsEqualEachPromptAlone) {}\n",
    "docs/architecture.md": ARCHITECTURE,
    "docs/results/README.md": "# Results\n\n- [2026-01-01-run.md](2026-01-01-run.md): a run\n",
    "docs/results/2026-01-01-run.md": "# A run\n\n- Date: 2026-01-01\n- Commit: not recorded\n"
                                      "- Host: 2 cores\n- Command: `baton bench`\n\n| a |\n",
    "README.md": "# Baton\n\nSee [the guide](docs/guide.md#usage).\n",
}

GOOD_GUIDE = """# Guide

## Usage

The op schemas are in `core/runtime/op.h` and the API in `core/api/`; quantizers in
`core/runtime/quantize/quantize*.cpp` and `core/runtime/{quantize,op.h}`, per family
`models/<family>.cpp` (a placeholder: `models/` must exist)...
Results: [a run](results/2026-01-01-run.md),
[the index](results/README.md), [the table](architecture.md#where-does-my-change-go).
Tests: `Scheduler.AdmitsInOrder`, `EngineBatching.*`, `Layers.EveryIncludePointsDownTheLayers`,
`Distributed.Over4Ranks`, `test_engine`; `baton_add_test` is a function. Flags:
`--sjf-overtake R`, `--model`, `--no-prefix-cache`, `scripts/test.sh --quick`,
`tools/bench/compare_servers.py --rounds 2`, cmake's `--build`; `llama.*` keys are GGUF's.

```sh
build/bin/baton serve -m model.gguf --sjf-overtake 4 \\
  --no-prefix-cache   # a comment --not-a-flag
mpirun -np 2 --oversubscribe build/bin/baton run -m m.gguf
```
"""

STALE = [
    ("a missing path", "The engine is `core/engine/engine.h`.", "`core/engine/engine.h`"),
    ("a missing link", "See [the old doc](old.md).", "link to old.md"),
    ("a missing section", "See [usage](guide.md#no-such-section).",
     "guide.md#no-such-section"),
    ("a missing glob", "Kernels: `ops/reference/*.cpp`.", "`ops/reference/*.cpp`"),
    ("a missing test", "Checked by `Scheduler.PreemptsTheNewest`.",
     "`Scheduler.PreemptsTheNewest`"),
    ("a missing ctest", "Checked by `Layers.CheckerRefusesWrongWayIncludes`.",
     "`Layers.CheckerRefusesWrongWayIncludes`"),
    ("a missing test suite", "Checked by `LengthPredictor.*`.", "`LengthPredictor.*`"),
    ("a missing test target", "Run `test_llama_model`.", "`test_llama_model`"),
    ("a missing flag", "Pass `--kv-reservation predicted`.", "`--kv-reservation`"),
    ("a missing flag after baton", "Run `baton serve -m m.gguf --sjf-aging 2`.", "`--sjf-aging`"),
    ("a missing flag in a code block", "```\nbuild/bin/baton run \\\n  --max-wait 3\n```",
     "`--max-wait`"),
    ("a missing script flag", "Run `scripts/test.sh --sanitize`.", "`--sanitize`"),
]


def run(files):
    with tempfile.TemporaryDirectory(prefix="baton-docs-") as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        result = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
        return result.returncode, result.stdout + result.stderr


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    code, out = run(dict(TREE, **{"docs/guide.md": GOOD_GUIDE}))
    expect(code == 0 and out == "", "a doc naming what exists was refused:\n" + out)

    for kind, text, named in STALE:
        guide = GOOD_GUIDE + "\n" + text + "\n"
        line = GOOD_GUIDE.count("\n") + 2 + (text.count("\n") if "```" in text else 0) - (
            1 if "```" in text else 0)
        code, out = run(dict(TREE, **{"docs/guide.md": guide}))
        expect(code == 1, "%s was accepted:\n%s" % (kind, out))
        expected = "docs/guide.md:%d: " % line
        expect(any(l.startswith(expected) and named in l for l in out.splitlines()),
               "%s: expected a line starting %r naming %s in:\n%s" % (kind, expected, named, out))

    layers = TREE["cmake/layers.cmake"].replace("core/api)", "core/api core/replicas)")
    code, out = run(dict(TREE, **{"docs/guide.md": GOOD_GUIDE, "cmake/layers.cmake": layers,
                                  "core/replicas/replica.h": ""}))
    expect(code == 1 and "docs/architecture.md:3: " in out and "core/replicas" in out,
           "a layer folder missing from the diagram was accepted:\n" + out)

    code, out = run(dict(TREE, **{"docs/guide.md": GOOD_GUIDE,
                                  "docs/results/2026-01-02-other.md": "# Another run\n"}))
    expect(code == 1 and "docs/results/README.md:1: does not list 2026-01-02-other.md" in out,
           "a result file missing from the index was accepted:\n" + out)
    expect("docs/results/2026-01-02-other.md:1: no \"- Host:\" line" in out,
           "a result without its host was accepted:\n" + out)

    no_table = ARCHITECTURE.split("## Where")[0]
    code, out = run(dict(TREE, **{"docs/guide.md": GOOD_GUIDE, "docs/architecture.md": no_table}))
    expect(code == 1 and "Where does my change go" in out,
           "architecture.md without its table was accepted:\n" + out)

    print("check_docs.py: a doc naming what exists passes; %d kinds of stale reference, a layer "
          "folder missing from the diagram, an unlisted or headerless result and a missing "
          "table fail" % len(STALE))


if __name__ == "__main__":
    main()
