"""scripts/check_exports.py on made-up headers and symbols: the public API passes, internals and
standard-library instances fail."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import check_exports  # noqa: E402

HEADERS = {
    "llm.h": "enum class FinishReason { kStop };\nclass BATON_API LLM {\n public:\n"
             "  int generate();\n};\nBATON_API const char* to_string(FinishReason reason);\n",
    "error.h": "class BATON_API Error : public std::runtime_error {};\n",
    "baton.h": "baton_status baton_model_open(const char* path);\nvoid baton_model_free(void*);\n",
    "tensor.h": "class Tensor {};\n",
}


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    with tempfile.TemporaryDirectory(prefix="baton-exports-") as root:
        os.makedirs(os.path.join(root, "baton"))
        for name, text in HEADERS.items():
            with open(os.path.join(root, "baton", name), "w") as f:
                f.write(text)
        names = check_exports.public_names(root)
    classes, functions, c_functions = names
    expect(classes == {"LLM", "Error"}, "classes: %s" % classes)
    expect(functions == {"baton::to_string(baton::FinishReason)"}, "functions: %s" % functions)
    expect(c_functions == {"baton_model_open", "baton_model_free"}, "C: %s" % c_functions)
    public = ["baton::LLM::generate()", "baton::LLM::~LLM()", "baton::to_string(baton::FinishReason)",
              "typeinfo for baton::Error", "vtable for baton::Error", "baton_model_open"]
    private = ["baton::Tensor::reshape(std::vector<long>)", "typeinfo for baton::Tensor",
               "std::vector<int, std::allocator<int> >::_M_realloc_insert(int&&)",
               "baton::LLMOptions::LLMOptions()", "baton_internal_helper", "baton::detail::x()",
               "baton::to_string(baton::OpKind)"]
    for symbol in public:
        expect(check_exports.is_public(symbol, *names), "refused public " + symbol)
    for symbol in private:
        expect(not check_exports.is_public(symbol, *names), "accepted private " + symbol)
    print("the checker accepts the public API and refuses %d kinds of internal symbol"
          % len(private))


if __name__ == "__main__":
    main()
