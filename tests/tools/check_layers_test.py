"""scripts/check_layers.py on made-up trees: an include that points down passes, each kind of
wrong-way include fails naming the file, the line and both layers."""
import json
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_layers.py")


def run(files):
    with tempfile.TemporaryDirectory(prefix="baton-layers-") as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        result = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
        return result.returncode, result.stdout


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    downward = {
        "core/runtime/tensor.h": '#include "core/runtime/dtype.h"\n',
        "models/llama.cpp": '#include "core/runtime/graph.h"\n#include "core/formats/gguf/gguf_file.h"\n',
        "core/serving/engine/engine.h": '#include "baton/generation.h"\n#include "models/model.h"\n',
        "core/api/llm.cpp": '#include "baton/llm.h"\n#include "core/serving/engine/engine.h"\n',
        "backends/cpu/cpu.cpp": '#include "core/runtime/quantize/quantize.h"\n#include "core/runtime/graph.h"\n',
        "tools/cmd.cpp": '#include "backends/cpu/cpu.h"\n#include "core/api/llm.h"\n',
    }
    code, out = run(downward)
    expect(code == 0, "downward includes were refused:\n" + out)

    upward = {
        "core/runtime/graph.h": ("core/serving/engine/engine.h", "runtime", "serving"),
        "core/serving/engine/engine.h": ("baton/llm.h", "serving", "api"),
        "models/model.h": ("core/serving/kv_cache/paged_kv_cache.h", "models", "serving"),
        "ops/reference/attention_ops.cpp": ("models/model.h", "reference", "models"),
        "backends/cpu/cpu.cpp": ("ops/reference.h", "backend", "reference"),
        "core/formats/tokenizer/tokenizer.cpp": ("backends/cpu/cpu.h", "formats", "backend"),
    }
    for path, (included, own, other) in upward.items():
        code, out = run({path: '#include <vector>\n\n#include "%s"\n' % included})
        expect(code == 1, "%s including %s was accepted:\n%s" % (path, included, out))
        expected = '%s:3: %s (%s) includes %s (%s)' % (path, path, own, included, other)
        expect(expected in out, "expected %r in:\n%s" % (expected, out))
    check_compile_commands()
    print("check_layers.py: %d downward includes pass, %d wrong-way includes fail, and a layer "
          "compiled with the root on its include path fails" % (len(downward), len(upward)))


def check_compile_commands():
    with tempfile.TemporaryDirectory(prefix="baton-layers-") as root:
        os.makedirs(os.path.join(root, "core", "runtime"))
        with open(os.path.join(root, "core", "runtime", "tensor.cpp"), "w") as f:
            f.write('#include "core/runtime/tensor.h"\n')
        commands = os.path.join(root, "compile_commands.json")

        def run_with(flags):
            with open(commands, "w") as f:
                json.dump([{"directory": root, "file": "core/runtime/tensor.cpp",
                            "command": "c++ %s -c core/runtime/tensor.cpp" % flags}], f)
            return subprocess.run([sys.executable, CHECKER, root, "--compile-commands", commands],
                                  capture_output=True, text=True)

        staged = run_with("-I%s/build/layer_includes/runtime" % root)
        expect(staged.returncode == 0, "a staged include path was refused:\n" + staged.stdout)
        leaked = run_with("-I%s -I%s/include" % (root, root))
        expect(leaked.returncode == 1, "the root on the include path was accepted")
        expect("core/runtime/tensor.cpp (runtime) compiles with" in leaked.stdout, leaked.stdout)


if __name__ == "__main__":
    main()
