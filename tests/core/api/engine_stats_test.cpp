#include "baton/engine_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/api/replica_stats.h"
#include "core/api/replica_wire.h"

namespace baton {
namespace {

struct FieldSpan {
  size_t offset;
  size_t size;
  std::string name;
};

std::vector<FieldSpan> table_layout() {
  const EngineStats s;
  std::vector<FieldSpan> spans;
  for_each_stat_field([&](const StatField& field, auto member) {
    const auto offset = static_cast<size_t>(reinterpret_cast<const std::byte*>(&(s.*member)) -
                                            reinterpret_cast<const std::byte*>(&s));
    spans.push_back({offset, sizeof(s.*member), field.name});
  });
  return spans;
}

// A field added to EngineStats without a row of the table would leave a gap at least as wide
// as itself; only padding, narrower than the next field, may lie between the rows' fields.
TEST(EngineStatsTable, RowsCoverEveryFieldOnceInDeclarationOrder) {
  const std::vector<FieldSpan> spans = table_layout();
  size_t end = 0;
  std::set<std::string> names;
  for (const FieldSpan& span : spans) {
    EXPECT_TRUE(names.insert(span.name).second) << span.name << " has two rows";
    ASSERT_GE(span.offset, end) << span.name << " is out of declaration order";
    EXPECT_LT(span.offset - end, span.size) << "an unlisted field lies before " << span.name;
    end = span.offset + span.size;
  }
  EXPECT_LT(sizeof(EngineStats) - end, alignof(EngineStats)) << "an unlisted field at the end";
}

TEST(EngineStatsTable, EveryMetricHasHelpAndFamiliesAreAdjacent) {
  std::vector<std::string> metrics;
  for_each_stat_field([&](const StatField& field, auto) {
    if (field.metric_type == MetricType::kNone) return;
    EXPECT_EQ(std::string(field.metric).rfind("baton_", 0), 0u) << field.name;
    EXPECT_NE(std::string(field.help), "") << field.name;
    if (metrics.empty() || metrics.back() != field.metric) metrics.emplace_back(field.metric);
  });
  std::vector<std::string> sorted = metrics;
  std::ranges::sort(sorted);
  EXPECT_EQ(std::ranges::adjacent_find(sorted), sorted.end())
      << "rows of one labelled family must be adjacent";
}

// Distinct values in every field, so that a swapped or dropped field shows.
EngineStats numbered_stats(int seed) {
  EngineStats s;
  int next = seed;
  for_each_stat_field([&](const StatField&, auto member) {
    using Value = std::remove_reference_t<decltype(s.*member)>;
    if constexpr (std::is_same_v<Value, bool>) {
      s.*member = next % 2 == 0;
    } else {
      s.*member = static_cast<Value>(next);
    }
    ++next;
  });
  return s;
}

TEST(EngineStatsTable, EveryFieldCrossesTheReplicaWire) {
  ReplicaFrame frame;
  frame.stats = numbered_stats(3);
  const auto now = std::chrono::steady_clock::now();
  const ReplicaFrame back = decode_replica_frame(encode(frame, now), now);
  for_each_stat_field([&](const StatField& field, auto member) {
    EXPECT_EQ(back.stats.*member, frame.stats.*member) << field.name;
  });
}

TEST(EngineStatsTable, StatsOfAnotherWireVersionAreRefusedNamingIt) {
  ReplicaFrame frame;
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::byte> bytes = encode(frame, now);
  // The closing flag comes first, then the stats record's version.
  const uint32_t other = kStatsWireVersion + 1;
  std::memcpy(bytes.data() + sizeof(bool), &other, sizeof(other));
  try {
    decode_replica_frame(bytes, now);
    FAIL() << "a stats record of another version was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wire version " + std::to_string(other)),
              std::string::npos)
        << e.what();
  }
}

TEST(EngineStatsTable, ReplicasMergeAsTheirRowsSay) {
  EngineStats a{.steps = 3,
                .length_predictions = 1,
                .length_prediction_error = 10,
                .length_predictions_trusted = true,
                .length_head_predictions = 0,
                .length_head_error = 99,
                .prefix_query_tokens = 100,
                .prefix_hit_tokens = 50,
                .grammar_seconds = 0.5};
  EngineStats b{.steps = 4,
                .length_predictions = 3,
                .length_prediction_error = 2,
                .length_predictions_trusted = false,
                .length_head_predictions = 2,
                .length_head_error = 4,
                .prefix_query_tokens = 100,
                .prefix_hit_tokens = 0,
                .grammar_seconds = 0.25};
  const EngineStats merged = merge_replica_stats({a, b});
  EXPECT_EQ(merged.steps, 7);
  EXPECT_EQ(merged.length_predictions, 4);
  EXPECT_DOUBLE_EQ(merged.length_prediction_error, (1 * 10.0 + 3 * 2.0) / 4);
  EXPECT_DOUBLE_EQ(merged.length_head_error, 4.0) << "a replica with no predictions weighs 0";
  EXPECT_FALSE(merged.length_predictions_trusted);
  EXPECT_DOUBLE_EQ(merged.prefix_cache_hit_rate, 0.25);
  EXPECT_DOUBLE_EQ(merged.grammar_seconds, 0.75);
  const EngineStats none = merge_replica_stats({});
  EXPECT_TRUE(none.length_predictions_trusted);
  EXPECT_EQ(none.length_prediction_error, 0);
}

}  // namespace
}  // namespace baton
