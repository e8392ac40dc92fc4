#!/usr/bin/env python3
"""Fails when a doc names a file, test or flag that no longer exists.

Usage: check_docs.py [ROOT]   (ROOT defaults to the repository this script is in)

Reads README.md and docs/**/*.md under ROOT and prints one line per problem,
"docs/x.md:LINE: ...", exiting 1 when there is one. What it checks:

- Paths. A word of inline code, a word of a fenced code block or a markdown link's target that
  looks like a repository path: it starts with a top-level folder (core/, ops/, models/, ...), or
  it holds a '/' and ends in a source or doc suffix. Inline code and fenced words resolve against
  ROOT (a suffix-only path such as `hf_import/llama_config.cpp` may also be the tail of a longer
  one); links resolve against the doc's folder, and a link's #section must be a heading of the
  doc it points to. Globs (`quantize*.cpp`) must match something, `{a,b}` braces expand, and a
  placeholder (`<family>`, `$type`, `…`) leaves its literal folder to check. URLs, absolute
  paths, ../ paths and build outputs (build*/) are not checked.
- Tests. Inline code of the form `Suite.Name` (or `Suite.*`, `Prefix/Suite.Name/*`) must be a
  GoogleTest test, TEST/TEST_F/TEST_P in tests/**/*.cpp, or a ctest name, add_test(NAME ...) in
  a CMakeLists.txt. Inline code of the form `test_x`, `x_test` or `fuzz_x` must be a target of
  tests/ (baton_add_test, baton_add_fuzz_target, add_executable) or a ctest name.
- Flags. A `--flag` in inline code that starts with it (`--sjf-overtake R`), or after the word
  `baton` on a line of inline code or of a fenced block (`baton serve --kv-reservation
  predicted`), must be a string literal in tools/, core/, include/ or python/ sources
  (CLI11's add_option/add_flag, LLMOptions' table), or a flag of a repository script
  (scripts/*.sh, the Python tools and tests); after a script's own path (`scripts/test.sh --quick`,
  `tools/bench/compare_llamacpp.py --llama-bench`) it must appear in that script. Flags of
  other programs that docs name in inline code are in OTHER_PROGRAMS_FLAGS below.
- docs/architecture.md. Its first fenced block, the layer diagram, names every layer of
  cmake/layers.cmake (set(baton_layer_folders_<layer> ...)) and every folder of it, and the doc
  has its "Where does my change go" table (whose paths the path rule checks).
- docs/results/: README.md lists every file, and each file is named <date>-<topic>.md and starts
  with its "- Date:", "- Commit:", "- Host:" and "- Command:" (or "- Commands:") lines.
"""
import fnmatch
import glob
import itertools
import os
import re
import sys

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_LEVEL = ("core/", "ops/", "models/", "backends/", "tools/", "tests/", "docs/", "include/",
             "python/", "scripts/", "cmake/", "assets/", ".ci/")
PATH_SUFFIXES = (".h", ".hpp", ".cpp", ".c", ".cu", ".cuh", ".hip", ".py", ".pyi", ".sh", ".md",
                 ".cmake", ".map", ".supp", ".json", ".jsonl", ".gguf", ".txt", ".toml", ".html")
# Flags of other programs that docs name in inline code on their own, so that the flag rule
# cannot tell them from Baton's: llama.cpp's tools (llama-bench, llama-quantize, llama-server,
# llama-perplexity), ctest, cmake, pip, mpirun, GCC and libFuzzer.
OTHER_PROGRAMS_FLAGS = {
    "--pure",               # llama-quantize --pure (Baton's quantize has it too)
    "--no-mmap",            # llama.cpp
    "--build", "--target",  # cmake --build
    "--output-on-failure",  # ctest
    "--oversubscribe",      # mpirun
    "--no-build-isolation",  # pip
    "--offload-arch",       # hipcc
}
EXTERNAL_LINK = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, mailto:, ...
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# A link's target; its text may have begun on an earlier line.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
TEST_NAME = re.compile(r"^(?:[A-Za-z0-9_]+/)?([A-Z][A-Za-z0-9_]*)\.([A-Z][A-Za-z0-9_]*|\*)"
                       r"(?:/[A-Za-z0-9_*]+)?$")
LOWER_SUITE = re.compile(r"^([a-z][a-z0-9_]*)\.\*$")
TARGET_NAME = re.compile(r"^(?:test_[a-z0-9_]+|[a-z0-9_]+_test|fuzz_[a-z0-9_]+)$")
GTEST = re.compile(r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\s*\(\s*(\w+)\s*,"
                   r"\s*(\w+)\s*\)")
ADD_TEST = re.compile(r"\badd_test\s*\(\s*NAME\s+([^\s)]+)")
TARGET = re.compile(r"\b(?:baton_add_test|baton_add_fuzz_target|add_executable)\s*\(\s*(\w+)")
TEST_PREFIX = re.compile(r"\bTEST_PREFIX\s+([^\s)]+)")
FOREACH = re.compile(r"\bforeach\s*\(\s*(\w+)\s+(?!IN\b|RANGE\b)([^()]*)\)")
CMAKE_VARIABLE = re.compile(r"\$\{(\w+)\}")
CMAKE_FUNCTION = re.compile(r"\b(?:function|macro)\s*\(\s*(\w+)", re.IGNORECASE)
STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
FLAG = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]*\*?", re.IGNORECASE)
BATON_COMMAND = re.compile(r"(?:.*/)?baton")  # the command, as a word: baton, build/bin/baton
LAYER_FOLDERS = re.compile(r"^\s*set\(\s*baton_layer_folders_(\w+)((?:\s+[^\s()]+)*)\s*\)",
                           re.MULTILINE)
# <family>, $type, …, ..., and a folder named in capitals (backends/NAME/).
PLACEHOLDER = re.compile(r"<[^>]*>|\$|…|\.\.\.|(?<![^/])[A-Z][A-Z_]+(?=/|$)")
GLOB_CHARS = re.compile(r"[*?\[]")
RESULT_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-[a-z0-9.-]+\.md$")
RESULT_FIELDS = ("Date:", "Commit:", "Host:", "Command")  # "Command:" or "Commands:"


def files_under(root, folders, suffixes):
    for folder in folders:
        for directory, subdirs, names in os.walk(os.path.join(root, folder)):
            subdirs[:] = [d for d in subdirs if not d.startswith(("build", "."))]
            for name in names:
                if name.endswith(suffixes):
                    yield os.path.join(directory, name)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


class Repository:
    """What exists under ROOT: files, tests, targets, flags, layer folders."""

    def __init__(self, root):
        self.root = root
        self.files = []
        for directory, subdirs, names in os.walk(root):
            relative = os.path.relpath(directory, root)
            if relative == ".":
                subdirs[:] = [d for d in subdirs if not d.startswith("build") and d != ".git"]
                relative = ""
            self.files.extend(os.path.join(relative, name) for name in names)
        self.gtests = set()
        self.suites = set()
        for path in files_under(root, ["tests"], (".cpp", ".cc", ".cu")):
            for suite, name in GTEST.findall(read(path)):
                self.gtests.add((suite, name))
                self.suites.add(suite)
        self.ctests = []      # ctest names (add_test), with ${var} expanded where known
        self.prefixes = []    # gtest_discover_tests(... TEST_PREFIX p): ctest names p + a test
        self.targets = set()
        self.functions = set()  # CMake functions (baton_add_test), whose names look like targets
        for path in itertools.chain(self.cmake_lists(), files_under(root, ["cmake"], (".cmake",))):
            text = read(path)
            values = {}
            for variable, items in FOREACH.findall(text):
                values.setdefault(variable, []).extend(items.split())
            for name in ADD_TEST.findall(text):
                self.ctests.extend(self.expand(name, values))
            for prefix in TEST_PREFIX.findall(text):
                self.prefixes.extend(self.expand(prefix, values))
            self.functions.update(CMAKE_FUNCTION.findall(text))
            if os.path.relpath(path, root).startswith("tests"):
                self.targets.update(TARGET.findall(text))
        self.baton_flags = set()
        for path in files_under(root, ["tools", "core", "include", "python"],
                                (".cpp", ".h", ".cc", ".def", ".inc")):
            for literal in STRING_LITERAL.findall(read(path)):
                self.baton_flags.update(FLAG.findall(literal))
        self.script_flags = {}
        for path in itertools.chain(files_under(root, ["scripts"], (".sh", ".py")),
                                    files_under(root, ["tools", "tests", "python"], (".py",))):
            text = read(path)
            flags = set(FLAG.findall(text)) if path.endswith(".sh") else set(
                flag for literal in STRING_LITERAL.findall(text) for flag in FLAG.findall(literal))
            self.script_flags[os.path.relpath(path, root)] = flags
        self.any_script_flag = set().union(set(), *self.script_flags.values())
        self.layers = {}
        layers_cmake = os.path.join(root, "cmake", "layers.cmake")
        if os.path.exists(layers_cmake):
            for layer, folders in LAYER_FOLDERS.findall(read(layers_cmake)):
                self.layers[layer] = folders.split()

    def cmake_lists(self):
        for directory, subdirs, names in os.walk(self.root):
            subdirs[:] = [d for d in subdirs if not d.startswith(("build", "."))]
            if "CMakeLists.txt" in names:
                yield os.path.join(directory, "CMakeLists.txt")

    @staticmethod
    def expand(name, values):
        """A CMake name as regular expressions, one per value of its foreach variables; a
        variable without known values matches anything."""
        known = [v for v in dict.fromkeys(CMAKE_VARIABLE.findall(name)) if v in values]
        out = []
        for choice in itertools.product(*(values[v] for v in known)):
            text = name
            for variable, value in zip(known, choice):
                text = text.replace("${%s}" % variable, value)
            parts = re.split(r"\$\{[^}]*\}", text)
            out.append(re.compile(".+".join(re.escape(part) for part in parts)))
        return out

    def exists(self, relative):
        return os.path.exists(os.path.join(self.root, relative))

    def has_test(self, suite, name):
        """Whether ctest runs Suite.Name (name "*": any test of Suite, or of the prefix Suite.)."""
        if name == "*":
            start = re.escape(suite + ".")
            return (suite in self.suites
                    or any(p.pattern.startswith(start) for p in self.ctests + self.prefixes)
                    or any(p.fullmatch(suite + ".") for p in self.prefixes))
        whole = suite + "." + name
        return (suite, name) in self.gtests or any(p.fullmatch(whole) for p in self.ctests)


def expand_braces(text):
    match = re.search(r"\{([^{}]*)\}", text)
    if not match:
        return [text]
    out = []
    for choice in match.group(1).split(","):
        out.extend(expand_braces(text[:match.start()] + choice + text[match.end():]))
    return out


def clean_path(word):
    """The path a word of code names, or None when the word names no repository path."""
    word = word.strip("\"'`()[],;")
    if "=" in word:
        word = word.split("=", 1)[1]
    word = re.sub(r":\d+(?:-\d+)?$", "", word).rstrip(".,;:")
    if word.startswith("./"):
        word = word[2:]
    if not word or "://" in word or word.startswith(("/", "~", "../", "-", "$", "build")):
        return None
    if word.startswith(TOP_LEVEL):
        return word
    first = word.split("/", 1)[0]
    if "/" in word and "." not in first and word.split("#")[0].endswith(PATH_SUFFIXES):
        return word
    return None


class Checker:
    def __init__(self, root):
        self.root = root
        self.repo = Repository(root)
        self.problems = []
        self.headings = {}

    def report(self, doc, line, message):
        self.problems.append((doc, line, message))

    # Paths ------------------------------------------------------------------------------------

    def path_exists(self, path, base_dirs, tail_match):
        """Whether `path` (relative, maybe with globs or placeholders) names something."""
        for candidate in expand_braces(path):
            placeholder = PLACEHOLDER.search(candidate)
            if placeholder and tail_match:
                continue  # a pattern of paths outside the repository, as often as not
            if placeholder:
                literal = candidate[:placeholder.start()]
                candidate = literal if literal.endswith("/") else os.path.dirname(literal)
                if not candidate:
                    return True
            for base in base_dirs:
                full = os.path.normpath(os.path.join(base, candidate))
                if GLOB_CHARS.search(candidate):
                    if glob.glob(os.path.join(self.root, full)):
                        break
                elif self.repo.exists(full):
                    break
            else:
                if tail_match:
                    tail = "*/" + candidate.rstrip("/")
                    if any(fnmatch.fnmatchcase("/" + f, tail)
                           or fnmatch.fnmatchcase("/" + os.path.dirname(f), tail)
                           for f in self.repo.files):
                        continue
                return False
        return True

    def check_code_path(self, doc, line, word):
        path = clean_path(word)
        if path is None:
            return
        path = path.split("#", 1)[0]
        strict = path.startswith(TOP_LEVEL)
        bases = [""] if strict else ["", os.path.dirname(doc)]
        if not self.path_exists(path, bases, tail_match=not strict):
            self.report(doc, line, "`%s` names no file or folder of the repository" % path)

    def check_link(self, doc, line, target):
        if EXTERNAL_LINK.match(target) or target.startswith("//"):
            return
        path, _, anchor = target.partition("#")
        if path:
            relative = os.path.normpath(os.path.join(os.path.dirname(doc), path))
            if relative.startswith("..") or relative.startswith("build"):
                return
            if not self.repo.exists(relative):
                self.report(doc, line, "link to %s: no such file or folder (%s)"
                            % (path, relative))
                return
        else:
            relative = doc
        if anchor and relative.endswith(".md") and anchor not in self.anchors(relative):
            self.report(doc, line, "link to %s#%s: no such section" % (path or doc, anchor))

    def anchors(self, doc):
        if doc not in self.headings:
            slugs, counts, fenced = set(), {}, False
            for text in read(os.path.join(self.root, doc)).splitlines():
                if FENCE.match(text):
                    fenced = not fenced
                    continue
                heading = None if fenced else HEADING.match(text)
                if not heading:
                    continue
                title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(2))
                slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
                n = counts.get(slug, 0)
                counts[slug] = n + 1
                slugs.add(slug if n == 0 else "%s-%d" % (slug, n))
            self.headings[doc] = slugs
        return self.headings[doc]

    # Tests ------------------------------------------------------------------------------------

    def check_test(self, doc, line, code, text=""):
        test = TEST_NAME.match(code)
        if test:
            if not self.repo.has_test(test.group(1), test.group(2)):
                self.report(doc, line, "`%s` is no test (no TEST(%s, %s) in tests/, no ctest of "
                            "that name)" % (code, test.group(1), test.group(2)))
            return
        lower = LOWER_SUITE.match(code)
        if lower:
            # Lower-case `x.*` is also how docs write GGUF key namespaces (`llama.*`): only a
            # line about tests makes it a test name.
            if not self.repo.has_test(lower.group(1), "*") and "test" in text.lower():
                self.report(doc, line, "`%s`: no ctest name starts with %s."
                            % (code, lower.group(1)))
            return
        if TARGET_NAME.match(code) and code not in self.repo.functions:
            known = code in self.repo.targets or any(p.fullmatch(code) for p in self.repo.ctests)
            if not known:
                self.report(doc, line, "`%s` is no test target of tests/ (baton_add_test, "
                            "add_executable) and no ctest name" % code)

    # Flags ------------------------------------------------------------------------------------

    def flag_known(self, flag, flags=None):
        """Whether `flag` is one of `flags` (default: Baton's, the scripts' and OTHER_PROGRAMS'); a
        trailing * (`--chat-template-max-*`) stands for any rest."""
        if flags is None:
            flags = self.repo.baton_flags | self.repo.any_script_flag | OTHER_PROGRAMS_FLAGS
        if flag.endswith("*"):
            return any(known.startswith(flag[:-1]) for known in flags)
        return flag in flags

    def check_command_flags(self, doc, pieces, lone_code):
        """Flags on one command: inline code, or a fenced line with its continuations, as
        (line number, text) pieces. A comment, a pipe or a second command ends it."""
        words = []
        for line, text in pieces:
            for word in text.split():
                if word.startswith("#") or word in ("|", "||", "&&", ";"):
                    break
                words.append((line, word))
            else:
                continue
            break
        if not words:
            return
        if lone_code and words[0][1].startswith("--"):
            for line, word in words:
                for flag in FLAG.findall(word.split("=")[0]):
                    if word.startswith("--") and not self.flag_known(flag):
                        self.report(doc, line, "`%s` is no flag of baton or of a script of the "
                                    "repository" % flag)
            return
        plain = [word for _, word in words]
        script = next((w for w in plain[:3] if clean_path(w) in self.repo.script_flags), None)
        if script is not None:
            own = self.repo.script_flags[clean_path(script)]
            for line, word in words[plain.index(script) + 1:]:
                flag = FLAG.match(word) if word.startswith("--") else None
                if flag and not self.flag_known(flag.group(0), own):
                    self.report(doc, line, "`%s` is no flag of %s"
                                % (flag.group(0), clean_path(script)))
            return
        start = next((i for i, word in enumerate(plain)
                      if BATON_COMMAND.fullmatch(word.strip("\"'(")) and i + 1 < len(plain)), None)
        if start is None:
            return
        for line, word in words[start + 1:]:
            flag = FLAG.match(word) if word.startswith("--") else None
            if flag and not self.flag_known(flag.group(0), self.repo.baton_flags):
                self.report(doc, line, "`%s` is no flag of baton (no \"%s\" string in tools/, "
                            "core/ or python/)" % (flag.group(0), flag.group(0)))

    # Docs -------------------------------------------------------------------------------------

    def docs(self):
        found = ["README.md"] if self.repo.exists("README.md") else []
        for directory, subdirs, names in os.walk(os.path.join(self.root, "docs")):
            subdirs.sort()
            for name in sorted(names):
                if name.endswith(".md"):
                    found.append(os.path.relpath(os.path.join(directory, name), self.root))
        return found

    def check_doc(self, doc):
        lines = read(os.path.join(self.root, doc)).splitlines()
        fence_start, pending = None, []
        for number, text in enumerate(lines, 1):
            if FENCE.match(text):
                fence_start = None if fence_start else number
                continue
            if fence_start:
                for word in text.split():
                    if clean_path(word) and clean_path(word).startswith(TOP_LEVEL):
                        self.check_code_path(doc, number, word)
                continued = text.rstrip().endswith("\\")
                pending.append((number, text.rstrip().rstrip("\\")))
                if not continued:
                    self.check_command_flags(doc, pending, lone_code=False)
                    pending = []
                continue
            for _, code in INLINE_CODE.findall(text):
                code = code.strip()
                self.check_test(doc, number, code, text)
                self.check_command_flags(doc, [(number, code)], lone_code=True)
                for word in code.split():
                    self.check_code_path(doc, number, word)
            for target in LINK.findall(INLINE_CODE.sub(" ", text)):
                self.check_link(doc, number, target)

    def check_architecture(self):
        doc = "docs/architecture.md"
        if not self.repo.exists(doc):
            return
        lines = read(os.path.join(self.root, doc)).splitlines()
        start = next((i for i, text in enumerate(lines) if FENCE.match(text)), None)
        if start is None:
            self.report(doc, 1, "no layer diagram (a fenced block) to check against "
                        "cmake/layers.cmake")
            return
        end = next((i for i in range(start + 1, len(lines)) if FENCE.match(lines[i])), len(lines))
        diagram = "\n".join(lines[start + 1:end])
        for layer, folders in self.repo.layers.items():
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(layer), diagram):
                self.report(doc, start + 1, "the layer diagram does not name layer %s of "
                            "cmake/layers.cmake" % layer)
            for folder in folders:
                folder = folder.rstrip("/")
                if not re.search(r"(?<![\w/-])%s(?![\w-])" % re.escape(folder), diagram):
                    self.report(doc, start + 1, "the layer diagram does not name %s, a folder of "
                                "layer %s in cmake/layers.cmake" % (folder, layer))
        table = re.compile(r"#+\s+Where does my change go", re.IGNORECASE)
        if not any(table.match(text) for text in lines):
            self.report(doc, 1, "no \"Where does my change go\" section")

    def check_results_index(self):
        index = "docs/results/README.md"
        folder = os.path.join(self.root, "docs", "results")
        if not os.path.isdir(folder):
            return
        text = read(os.path.join(self.root, index)) if self.repo.exists(index) else ""
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".md") or name == "README.md":
                continue
            if "(%s)" % name not in text:
                self.report(index, 1, "does not list %s" % name)
            doc = "docs/results/" + name
            if not RESULT_NAME.match(name):
                self.report(doc, 1, "a result's name is <date>-<topic>.md, as 2026-12-06-topic.md")
            head = read(os.path.join(folder, name)).split("\n\n|", 1)[0]
            for field in RESULT_FIELDS:
                if not re.search(r"^- %s" % field, head, re.MULTILINE):
                    self.report(doc, 1, "no \"- %s\" line before the figures" % field)

    def run(self):
        for doc in self.docs():
            self.check_doc(doc)
        self.check_architecture()
        self.check_results_index()
        seen = set()
        for doc, line, message in sorted(self.problems):
            if (doc, line, message) not in seen:
                seen.add((doc, line, message))
                print("%s:%d: %s" % (doc, line, message))
        return 1 if self.problems else 0


def main():
    root = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else REPOSITORY
    return Checker(root).run()


if __name__ == "__main__":
    sys.exit(main())
