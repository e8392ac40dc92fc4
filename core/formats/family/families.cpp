// The table of model families: one include and one entry per family.

#include <string>
#include <vector>

#include "core/formats/family/gemma2.h"
#include "core/formats/family/gemma3.h"
#include "core/formats/family/llama.h"
#include "core/formats/family/olmo2.h"
#include "core/formats/family/phi3.h"
#include "core/formats/family/qwen2.h"
#include "core/formats/family/qwen3.h"
#include "core/formats/family/smollm3.h"

namespace baton {
namespace {

constexpr const ModelFamily* kFamilies[] = {
    &families::kLlama, &families::kQwen2,  &families::kPhi3,    &families::kGemma2,
    &families::kQwen3, &families::kGemma3, &families::kSmolLm3, &families::kOlmo2};

// "a, b, c or d".
template <typename Names>
std::string listed(const Names& names, std::string_view last_separator) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? last_separator : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

int64_t FamilySizes::of(FamilyDim dim) const {
  switch (dim) {
    case FamilyDim::kEmbd:
      return embd;
    case FamilyDim::kFf:
      return ff;
    case FamilyDim::kQ:
      return q;
    case FamilyDim::kKv:
      return kv;
    case FamilyDim::kHead:
      return head;
  }
  return 0;
}

int64_t LayerTensor::row_count(const FamilySizes& sizes) const {
  if (fused.empty()) return sizes.of(rows);
  int64_t total = 0;
  for (const FusedPart& part : fused) total += sizes.of(part.rows);
  return total;
}

std::span<const ModelFamily* const> model_families() {
  return kFamilies;
}

const ModelFamily* find_model_family(std::string_view gguf_arch) {
  for (const ModelFamily* family : kFamilies) {
    if (family->gguf_arch == gguf_arch) return family;
  }
  return nullptr;
}

const ModelFamily* find_hf_model_family(std::string_view hf_class) {
  for (const ModelFamily* family : kFamilies) {
    for (const HfModelClass& model_class : family->hf_classes) {
      if (model_class.name == hf_class) return family;
    }
  }
  return nullptr;
}

const HfModelClass* find_hf_model_class(std::string_view name) {
  for (const ModelFamily* family : kFamilies) {
    for (const HfModelClass& model_class : family->hf_classes) {
      if (model_class.name == name) return &model_class;
    }
  }
  return nullptr;
}

std::string model_family_names() {
  std::vector<std::string_view> names;
  for (const ModelFamily* family : kFamilies) names.push_back(family->gguf_arch);
  return listed(names, " or ");
}

std::string hf_model_class_names() {
  std::vector<std::string_view> names;
  for (const ModelFamily* family : kFamilies) {
    for (const HfModelClass& model_class : family->hf_classes) names.push_back(model_class.name);
  }
  return listed(names, ", ");
}

}  // namespace baton
