#include "core/formats/family/model_family.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace baton {
namespace {

// Names that select a family (its GGUF name, Hugging Face classes, synth shapes) select one only.
TEST(ModelFamilies, EveryNameSelectsOneFamily) {
  std::set<std::string_view> archs, classes, shapes;
  for (const ModelFamily* family : model_families()) {
    EXPECT_TRUE(archs.insert(family->gguf_arch).second) << family->gguf_arch;
    EXPECT_EQ(find_model_family(family->gguf_arch), family);
    for (const HfModelClass& model_class : family->hf_classes) {
      EXPECT_TRUE(classes.insert(model_class.name).second) << model_class.name;
      EXPECT_EQ(find_hf_model_family(model_class.name), family);
      EXPECT_EQ(find_hf_model_class(model_class.name), &model_class);
    }
    for (const FamilyShape& shape : family->shapes) {
      EXPECT_TRUE(shapes.insert(shape.name).second) << shape.name;
    }
  }
  EXPECT_EQ(find_model_family("gpt2"), nullptr);
  EXPECT_EQ(find_hf_model_family("GPT2LMHeadModel"), nullptr);
  EXPECT_EQ(model_family_names(), "llama, qwen2, phi3, gemma2, qwen3, gemma3, smollm3 or olmo2");
}

// Each layer feeds every weight node of the decoder's layer exactly once, and a norm before or
// after each of its two blocks, from a tensor under a GGUF and a Hugging Face name of its own; a
// fused tensor names its parts' nodes instead of its own; only q and k are rotary; only biases
// are optional.
TEST(ModelFamilies, EveryLayerFeedsEachRequiredNodeOnce) {
  const std::set<std::string_view> kRequired = {"q",        "k",      "v",       "attn_output",
                                                "ffn_gate", "ffn_up", "ffn_down"};
  for (const ModelFamily* family : model_families()) {
    std::multiset<std::string_view> fed;
    std::set<std::string_view> gguf, hf;
    for (const LayerTensor& t : family->layer) {
      EXPECT_TRUE(gguf.insert(t.gguf).second) << family->gguf_arch << " " << t.gguf;
      EXPECT_TRUE(hf.insert(t.hf).second) << family->gguf_arch << " " << t.hf;
      EXPECT_EQ(t.rotary, t.node == "q" || t.node == "k") << family->gguf_arch << " " << t.gguf;
      EXPECT_TRUE(!t.optional || t.role == TensorRole::kBias) << family->gguf_arch << " " << t.gguf;
      EXPECT_EQ(t.node.empty(), !t.fused.empty()) << family->gguf_arch << " " << t.gguf;
      if (t.fused.empty()) fed.insert(t.node);
      for (const FusedPart& part : t.fused) fed.insert(part.node);
    }
    for (std::string_view node : kRequired) {
      EXPECT_EQ(fed.count(node), 1u) << family->gguf_arch << " " << node;
    }
    for (std::string_view node : fed)
      EXPECT_EQ(fed.count(node), 1u) << family->gguf_arch << " " << node;
    EXPECT_TRUE(fed.contains("attn_norm") || fed.contains("attn_post_norm")) << family->gguf_arch;
    EXPECT_TRUE(fed.contains("ffn_norm") || fed.contains("ffn_post_norm")) << family->gguf_arch;
  }
}

TEST(ModelFamilies, AFusedWeightsRowsAreItsPartsRows) {
  const ModelFamily& phi3 = *find_model_family("phi3");
  const FamilySizes sizes{.embd = 64, .ff = 160, .q = 64, .kv = 16};
  for (const LayerTensor& t : phi3.layer) {
    if (t.gguf == "attn_qkv.weight") EXPECT_EQ(t.row_count(sizes), 64 + 2 * 16);
    if (t.gguf == "ffn_up.weight") EXPECT_EQ(t.row_count(sizes), 2 * 160);
  }
}

}  // namespace
}  // namespace baton
