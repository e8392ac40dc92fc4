#!/usr/bin/env python3
"""Expected token ids for texts with special tokens, from implementations other than Baton's.

For every vocabulary in ../shared/models/vocab this writes <name>.json beside this script:
texts built from the chat or fill-in-the-middle templates of the model family that uses the
vocabulary, plus special tokens at the start, middle and end of text with and without
whitespace around them, each with the ids of encode(text, add_special=False,
parse_special=True).

- SentencePiece vocabularies (llama-spm, phi-3, baichuan): the GGUF's pieces, scores and types
  become a SentencePiece BPE model, and the `sentencepiece` library tokenizes the text between
  special tokens, each run as a fresh sentence (its dummy prefix is the space llama.cpp puts
  after a special token).
- Byte-level BPE and WordPiece vocabularies: the GGUF becomes a Hugging Face `tokenizers`
  tokenizer (vocabulary, merges, the model family's published pre-tokenizer, special tokens as
  added tokens) and that library does all of it.

Special tokens take the whitespace beside them as Hugging Face's added-token lstrip / rstrip
flags say. GGUFs do not record those flags, so the flags below are the ones the families'
tokenizer.json files publish (Phi-3: rstrip on its chat tokens and "</s>").

Run: pip install gguf sentencepiece protobuf tokenizers, then
    python3 tests/core/formats/tokenizer/special_tokens/make_vectors.py [../shared/models/vocab]
"""

import json
import pathlib
import re
import sys

import gguf
import sentencepiece
from sentencepiece import sentencepiece_model_pb2 as sp_model
from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers

HERE = pathlib.Path(__file__).resolve().parent
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# Phi-3-mini's tokenizer.json: these added tokens have "rstrip": true.
PHI3_RSTRIP = {"</s>", "<|assistant|>", "<|system|>", "<|end|>", "<|user|>"} | {
    f"<|placeholder{i}|>" for i in range(1, 7)
}

# Per family: the special tokens the generic texts put around words, then template texts.
FAMILIES = {
    "llama-spm": (
        ["<s>", "</s>"],
        [
            "<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nHi there [/INST]"
            " Hello! How can I help? </s><s>[INST] Tell me a joke. [/INST]",
            "<s>[INST] What is 2+2? [/INST] 4 </s>",
        ],
    ),
    "phi-3": (
        ["<|user|>", "<|end|>", "<|assistant|>", "</s>", "<s>", "<|endoftext|>"],
        [
            "<|user|>\nHello, who are you?<|end|>\n<|assistant|>\nI am Phi.<|end|>\n<|user|>\n"
            "Tell me more.<|end|>\n<|assistant|>\n",
            "<|system|>\nYou are brief.<|end|>\n<|user|>\n  spaced  out  <|end|>\n<|assistant|>",
            "<s><|user|> What is 2+2? <|end|> <|assistant|> 4<|end|><|endoftext|>",
            "</s> [INST] hi [/INST]",
        ],
    ),
    "baichuan": (
        ["<s>", "</s>"],
        ["<s>用户：你好</s><s>助手：你好！有什么可以帮你？</s>", "<s> hello </s> world"],
    ),
    "gpt-2": (
        ["<|endoftext|>"],
        ["First document.<|endoftext|>Second document.\n<|endoftext|>\n"],
    ),
    "gpt-neox": (
        ["<|endoftext|>", "<|padding|>"],
        ["<|endoftext|>Question: what?\n\nAnswer:    indented\n<|padding|><|padding|>"],
    ),
    "mpt": (
        ["<|endoftext|>", "<|padding|>"],
        ["<|endoftext|>def f(x):\n        return x  # two   spaces<|endoftext|>"],
    ),
    "falcon": (
        [">>QUESTION<<", ">>ANSWER<<", "<|endoftext|>"],
        [
            ">>TITLE<<A title>>ABSTRACT<<Short text.",
            "User: Hi there\nFalcon: Hello!<|endoftext|>User: 1234567 apples?",
            ">>QUESTION<< What is it? >>ANSWER<< Nothing.<|endoftext|>",
        ],
    ),
    "starcoder": (
        ["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<|endoftext|>"],
        [
            "<fim_prefix>def add(a, b):\n    <fim_suffix>\n    return c<fim_middle>",
            "<repo_name>baton<file_sep>main.py\nprint(1)<|endoftext|>",
            "<issue_start>username_0: it crashes <issue_comment>username_1: fixed",
        ],
    ),
    "refact": (
        ["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<|endoftext|>"],
        [
            "<fim_prefix>int main() {\n  <fim_suffix>\n}<fim_middle>",
            "<filename>a.c\nint x;<|endoftext|>",
        ],
    ),
    "deepseek-coder": (
        ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<|EOT|>"],
        [
            "<｜begin▁of▁sentence｜>You are an AI programming assistant.\n### Instruction:\n"
            "Write quicksort.\n### Response:\nSure.\n<|EOT|>\n",
            "<｜fim▁begin｜>def f():\n    <｜fim▁hole｜>\n    return 1<｜fim▁end｜>",
        ],
    ),
    "deepseek-llm": (
        ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
        [
            "<｜begin▁of▁sentence｜>User: Who are you?\n\nAssistant: A model.<｜end▁of▁sentence｜>"
            "User: 123 + 4567?\n\nAssistant:",
        ],
    ),
    "bert-bge": (
        ["[CLS]", "[SEP]", "[MASK]"],
        [
            "[CLS] what is a panda? [SEP] The giant panda is a bear. [SEP]",
            "Paris is the [MASK] of France.",
            "[CLS]Hello,World![SEP][PAD][PAD]",
        ],
    ),
}


def generic_texts(specials):
    """Special tokens at the start, middle and end, with and without whitespace beside them."""
    a, b = specials[0], specials[-1]
    return [
        f"{a}Hello world",
        f"{a} Hello world",
        f"{a}\nHello world",
        f"Hello{a}world",
        f"Hello {a} world",
        f"Hello  {a}  world",
        f"Hello\n{a}\n\nworld",
        f"Hello world{a}",
        f"Hello world {a}",
        f"Hello world {a} ",
        f"{a}{b}",
        f"{a} {b}",
        f" {a}\t{b} ",
        f"{a}{b}{a}",
        f"The café {a} 你好 {b}!",
        a,
        f" {a}",
        f"{a} ",
    ]


def read_vocab(path):
    reader = gguf.GGUFReader(str(path))

    def field(key):
        return reader.fields.get(key)

    def strings(key):
        f = field(key)
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data] if f else []

    def values(key):
        f = field(key)
        return [f.parts[i].tolist()[0] for i in f.data] if f else []

    def scalar(key, default=None):
        f = field(key)
        if f is None:
            return default
        value = f.parts[f.data[0]]
        return bytes(value).decode() if f.types[0] == gguf.GGUFValueType.STRING else value[0]

    return {
        "model": scalar("tokenizer.ggml.model"),
        "pre": scalar("tokenizer.ggml.pre", "default"),
        "tokens": strings("tokenizer.ggml.tokens"),
        "scores": values("tokenizer.ggml.scores"),
        "types": values("tokenizer.ggml.token_type"),
        "merges": strings("tokenizer.ggml.merges"),
        "add_space_prefix": bool(scalar("tokenizer.ggml.add_space_prefix", True)),
    }


def special_ids(vocab):
    return [i for i, t in enumerate(vocab["types"]) if t in (UNKNOWN, CONTROL, USER_DEFINED)]


def flags_for(name, token):
    rstrip = name == "phi-3" and token in PHI3_RSTRIP
    return False, rstrip


# --- SentencePiece ---------------------------------------------------------------------------


def sentencepiece_processor(vocab):
    proto = sp_model.ModelProto()
    proto.trainer_spec.model_type = sp_model.TrainerSpec.BPE
    proto.trainer_spec.vocab_size = len(vocab["tokens"])
    proto.trainer_spec.byte_fallback = True
    proto.trainer_spec.unk_id = 0
    proto.trainer_spec.bos_id = -1
    proto.trainer_spec.eos_id = -1
    proto.trainer_spec.pad_id = -1
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = vocab["add_space_prefix"]
    proto.normalizer_spec.remove_extra_whitespaces = False
    proto.normalizer_spec.escape_whitespaces = True
    piece_types = {
        NORMAL: sp_model.ModelProto.SentencePiece.NORMAL,
        UNKNOWN: sp_model.ModelProto.SentencePiece.UNKNOWN,
        CONTROL: sp_model.ModelProto.SentencePiece.CONTROL,
        USER_DEFINED: sp_model.ModelProto.SentencePiece.USER_DEFINED,
        UNUSED: sp_model.ModelProto.SentencePiece.UNUSED,
        BYTE: sp_model.ModelProto.SentencePiece.BYTE,
    }
    for i, token in enumerate(vocab["tokens"]):
        piece = proto.pieces.add()
        piece.piece = token
        piece.score = vocab["scores"][i]
        # SentencePiece allows one unknown piece; the rest only need to be unmatchable.
        kind = vocab["types"][i]
        piece.type = piece_types[UNUSED if kind == UNKNOWN and i != 0 else kind]
    return sentencepiece.SentencePieceProcessor(model_proto=proto.SerializeToString())


def split_on_added_tokens(text, added):
    """Hugging Face's added-token matching: leftmost, then longest, with lstrip/rstrip taking
    the whitespace beside a token. `added` maps spelling -> (id, lstrip, rstrip)."""
    spellings = sorted(added, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(s) for s in spellings))
    pieces, pos = [], 0
    while True:
        match = pattern.search(text, pos)
        if not match:
            break
        token, lstrip, rstrip = added[match.group(0)]
        left = text[pos : match.start()]
        if lstrip:
            left = left.rstrip(" \t\n\v\f\r")
        if left:
            pieces.append(left)
        pieces.append(token)
        pos = match.end()
        if rstrip:
            while pos < len(text) and text[pos] in " \t\n\v\f\r":
                pos += 1
    if pos < len(text):
        pieces.append(text[pos:])
    return pieces


def sentencepiece_encoder(name, vocab):
    processor = sentencepiece_processor(vocab)
    added = {}
    for i in special_ids(vocab):
        added[vocab["tokens"][i]] = (i, *flags_for(name, vocab["tokens"][i]))

    def encode(text):
        ids = []
        for piece in split_on_added_tokens(text, added):
            ids.extend([piece] if isinstance(piece, int) else processor.encode(piece))
        return ids

    return encode


# --- Hugging Face tokenizers -----------------------------------------------------------------

LLAMA_CPP_DEEPSEEK_LLM_LETTERS = (
    "A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃"
)


def isolated(pattern):
    return pre_tokenizers.Split(Regex(pattern), behavior="isolated")


def byte_level_pre_tokenizer(pre):
    """The pre_tokenizer of each family's published tokenizer.json."""
    plain = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in ("gpt-2", "mpt", "default"):
        return plain
    if pre in ("starcoder", "refact"):
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), plain])
    if pre == "falcon":
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Punctuation(),
                plain,
                pre_tokenizers.Digits(individual_digits=False),
                isolated("[0-9][0-9][0-9]"),
            ]
        )
    no_regex = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if pre == "deepseek-llm":
        return pre_tokenizers.Sequence(
            [
                isolated("[\r\n]"),
                isolated(f"\\s?[{LLAMA_CPP_DEEPSEEK_LLM_LETTERS}]+"),
                isolated("\\s?[!-/:-~！-／：-～‘-‟　-。]+"),
                isolated("\\s+$"),
                isolated("[一-龥ࠀ-一가-퟿]+"),
                pre_tokenizers.Digits(individual_digits=False),
                no_regex,
            ]
        )
    if pre == "deepseek-coder":
        return pre_tokenizers.Sequence(
            [
                isolated("[\r\n]"),
                isolated("\\s?\\p{L}+"),
                isolated("\\s?\\p{P}+"),
                isolated("[一-龥ࠀ-一가-퟿]+"),
                pre_tokenizers.Digits(individual_digits=True),
                no_regex,
            ]
        )
    raise SystemExit(f"no pre-tokenizer for {pre}")


def hugging_face_encoder(name, vocab):
    tokens = vocab["tokens"]
    specials = special_ids(vocab)
    if vocab["model"] == "bert":
        # llama.cpp's GGUF marks word starts with "▁" where the WordPiece vocabulary marks
        # continuations with "##".
        special = set(specials)
        pieces = {}
        for i, token in enumerate(tokens):
            if i in special:
                pieces[token] = i
            elif token.startswith("▁"):
                pieces.setdefault(token[len("▁") :], i)
            else:
                pieces.setdefault("##" + token, i)
        tokenizer = Tokenizer(models.WordPiece(pieces, unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    else:
        merges = [tuple(m.split(" ", 1)) for m in vocab["merges"]]
        tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges))
        tokenizer.pre_tokenizer = byte_level_pre_tokenizer(vocab["pre"])
    added = []
    for i in specials:
        lstrip, rstrip = flags_for(name, tokens[i])
        added.append(
            AddedToken(
                tokens[i],
                special=vocab["types"][i] != USER_DEFINED,
                lstrip=lstrip,
                rstrip=rstrip,
                normalized=False,
            )
        )
    tokenizer.add_special_tokens(added)
    for token, i in zip(added, specials):
        if tokenizer.token_to_id(token.content) != i:
            raise SystemExit(f"{name}: added token {token.content!r} changed its id")

    def encode(text):
        return tokenizer.encode(text, add_special_tokens=False).ids

    return encode


def main():
    default_dir = HERE.parents[4].parent / "shared" / "models" / "vocab"
    vocab_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else default_dir
    for name, (specials, templates) in FAMILIES.items():
        path = vocab_dir / f"ggml-vocab-{name}.gguf"
        vocab = read_vocab(path)
        make = sentencepiece_encoder if vocab["model"] == "llama" else hugging_face_encoder
        encode = make(name, vocab)
        cases = [{"text": t, "ids": encode(t)} for t in templates + generic_texts(specials)]
        out = HERE / f"{name}.json"
        out.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{out.name}: {len(cases)} texts")


if __name__ == "__main__":
    main()
