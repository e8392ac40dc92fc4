#!/usr/bin/env python3
"""Writes the files that follow LLMOptions' table (BATON_ENGINE_OPTIONS in
include/baton/llm_options.h), as the built extension module reports it: the LLMOptions class of
python/baton/_baton.pyi and docs/engine-options.md.

Usage: PYTHONPATH=build/python generate_engine_options.py [--check]

Run it after changing a row. With --check it writes nothing and exits 1 naming each file that
is not what the table makes (python/tests/test_engine_options.py runs this in the suite).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUB = os.path.join(ROOT, "python", "baton", "_baton.pyi")
DOC = os.path.join(ROOT, "docs", "engine-options.md")
STUB_CLASS = re.compile(r"^class LLMOptions:\n(?:    .*\n)*", re.MULTILINE)


DOC_HEAD = """\
# Engine options

Every option a model is loaded with, one row each of the table `BATON_ENGINE_OPTIONS` in
`include/baton/llm_options.h`, from which `LLMOptions`' fields, the CLI flags of `baton run`,
`batch`, `chat` and `serve`, the Python binding, the ranks' start-up agreement and this page
come. A new option is one row there plus the code that uses it (docs/architecture.md, "Where does
my change go"); `scripts/generate_engine_options.py` then writes this page and the Python stub,
and the suite fails until it has.

- **C++**: `LLMOptions{.model = path, .max_seqs = 16}`; enum options are enums
  (`SchedulingPolicy::kSjf`), their names as the table lists them in `baton/option_values.h`.
- **Python**: `LLM(model, max_seqs=16, scheduling_policy="sjf")`; the Python column gives vLLM's
  name where it differs, and both are taken (`None` asks for the default). `kv_cache_dtype` and
  the LoRA options keep vLLM's meanings there: `kv_cache_dtype="auto"` is f32 and `"fp8"` is
  fp8_e4m3, and `max_loras`, `max_lora_rank`, `max_cpu_loras` and `lora_dtype` apply with
  `enable_lora=True`.
- **Distributed runs**: the options marked "all ranks" must be the same on every rank; start-up
  fails naming the first that differs (docs/distributed.md).

An option outside its range is refused with an error naming the option, whichever of the three
set it.

| Option | Python | Flag | Type | Default | Ranks | Meaning |
|---|---|---|---|---|---|---|
"""


def type_text(row):
    # A number's range beside its type: "int ≥ 1", "float > 0".
    if row["min"] is None:
        return row["type"]
    bound = "%g" % row["min"]
    return "%s %s %s" % (row["type"], ">" if row["min_exclusive"] else "≥", bound)


def default_text(row):
    value = row["default"]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"%s"' % value
    return repr(value)


def flag_text(row):
    # CLI11's "--no-x{false}" sets the value in braces; "-t,--threads" lists short and long.
    return ", ".join("`%s`" % f for f in re.sub(r"\{.*\}", "", row["flag"]).split(","))


def render_stub(rows, stub_text):
    lines = ["class LLMOptions:", "    model: str"]
    lines += ["    %s: %s" % (row["name"], row["type"]) for row in rows]
    lines += ["    def __init__(self) -> None: ...", ""]
    block = "\n".join(lines)
    if not STUB_CLASS.search(stub_text):
        raise SystemExit("%s has no class LLMOptions to replace" % STUB)
    return STUB_CLASS.sub(block, stub_text, count=1)


def render_doc(rows, python_names):
    out = [DOC_HEAD]
    for row in rows:
        python = python_names.get(row["name"])
        python = "`%s`, `%s`" % (python, row["name"]) if python else "`%s`" % row["name"]
        out.append("| `%s` | %s | %s | %s | `%s` | %s | %s |\n" % (
            row["name"], python, flag_text(row), type_text(row), default_text(row),
            "all" if row["all_ranks"] else "each", row["help"].replace("|", "\\|")))
    return "".join(out)


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        raise SystemExit(__doc__)
    from baton import _baton  # the built module; PYTHONPATH names its folder
    from baton.engine_args import _OPTION_NAMES

    rows = list(_baton.ENGINE_OPTIONS)
    python_names = {option: name for name, option in _OPTION_NAMES.items()}
    with open(STUB) as f:
        stub = f.read()
    wanted = {STUB: render_stub(rows, stub), DOC: render_doc(rows, python_names)}
    stale = []
    for path, text in wanted.items():
        current = open(path).read() if os.path.exists(path) else None
        if current == text:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not check:
            with open(path, "w") as f:
                f.write(text)
    if check and stale:
        print("not what LLMOptions' table makes: %s; run PYTHONPATH=build/python "
              "scripts/generate_engine_options.py" % ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
