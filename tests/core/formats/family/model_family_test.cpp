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
    for (std::string_view name : family->hf_classes) {
      EXPECT_TRUE(classes.insert(name).second) << name;
      EXPECT_EQ(find_hf_model_family(name), family);
    }
    for (const FamilyShape& shape : family->shapes) {
      EXPECT_TRUE(shapes.insert(shape.name).second) << shape.name;
    }
  }
  EXPECT_EQ(find_model_family("gpt2"), nullptr);
  EXPECT_EQ(find_hf_model_family("GPT2LMHeadModel"), nullptr);
  EXPECT_EQ(model_family_names(), "llama, qwen2, phi3 or gemma2");
}

// Each layer feeds every node of the step graph's layer exactly once, from a tensor under a GGUF
// and a Hugging Face name of its own, and only q and k are rotary.
TEST(ModelFamilies, EveryLayerFeedsEachLinearNodeOnce) {
  const std::set<std::string> kNodes = {"q",        "k",      "v",       "attn_output",
                                        "ffn_gate", "ffn_up", "ffn_down"};
  for (const ModelFamily* family : model_families()) {
    std::multiset<std::string> fed;
    std::set<std::string_view> gguf, hf;
    for (const LayerTensor& t : family->layer) {
      EXPECT_TRUE(gguf.insert(t.gguf).second) << family->gguf_arch << " " << t.gguf;
      EXPECT_TRUE(hf.insert(t.hf).second) << family->gguf_arch << " " << t.hf;
      EXPECT_EQ(t.rotary, t.gguf == "attn_q.weight" || t.gguf == "attn_k.weight")
          << family->gguf_arch << " " << t.gguf;
      if (t.role != TensorRole::kMatrix) continue;
      if (!t.fused.empty()) {
        for (const FusedPart& part : t.fused) fed.insert(std::string(part.node));
        continue;
      }
      std::string node(t.gguf.substr(0, t.gguf.find('.')));
      if (node.starts_with("attn_") && node != "attn_output") node = node.substr(5);  // attn_q: q
      fed.insert(node);
    }
    EXPECT_EQ(fed, std::multiset<std::string>(kNodes.begin(), kNodes.end())) << family->gguf_arch;
    EXPECT_TRUE(gguf.contains("attn_norm.weight") && gguf.contains("ffn_norm.weight"))
        << family->gguf_arch;
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
