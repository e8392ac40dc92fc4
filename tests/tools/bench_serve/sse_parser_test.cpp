#include "tools/bench_serve/sse_parser.h"

#include <gtest/gtest.h>

namespace baton::bench_serve {
namespace {

using Events = std::vector<std::string>;

TEST(SseParser, EventSplitAcrossReadsIsDeliveredOnceComplete) {
  SseParser p;
  const std::string stream = "data: {\"text\":\"hi\"}\n\n";
  Events got;
  for (const char c : stream) {
    EXPECT_TRUE(got.empty()) << "delivered before the blank line";
    for (std::string& e : p.feed(std::string(1, c))) got.push_back(std::move(e));
  }
  EXPECT_EQ(got, Events{"{\"text\":\"hi\"}"});
}

TEST(SseParser, SeveralEventsInOneReadComeOutInOrder) {
  SseParser p;
  EXPECT_EQ(p.feed("data: a\n\ndata: b\n\ndata: c"), (Events{"a", "b"}));
  EXPECT_EQ(p.feed("\n\n"), Events{"c"});
}

TEST(SseParser, DoneMarkerIsAnOrdinaryEvent) {
  SseParser p;
  EXPECT_EQ(p.feed("data: {}\n\ndata: [DONE]\n\n"), (Events{"{}", "[DONE]"}));
}

TEST(SseParser, CommentsKeepalivesAndOtherFieldsAreSkipped) {
  SseParser p;
  EXPECT_TRUE(p.feed(": keep-alive\n\n:\n\n").empty());
  EXPECT_EQ(p.feed("event: message\nid: 7\n: note\ndata: x\nretry: 10\n\n"), Events{"x"});
}

TEST(SseParser, CrlfSplitBetweenReadsIsOneLineEnd) {
  SseParser p;
  EXPECT_TRUE(p.feed("data: a\r").empty());
  EXPECT_TRUE(p.feed("\ndata: b\r\n").empty()) << "the lone \\n was taken for a blank line";
  EXPECT_EQ(p.feed("\r\n"), Events{"a\nb"});
}

TEST(SseParser, BareCarriageReturnsEndLines) {
  SseParser p;
  EXPECT_EQ(p.feed("data: a\r\rdata: b\r\r"), (Events{"a", "b"}));
}

TEST(SseParser, DataLinesOfOneEventJoinWithNewline) {
  SseParser p;
  EXPECT_EQ(p.feed("data: one\ndata:two\ndata\n\n"), Events{"one\ntwo\n"});
}

TEST(SseParser, OnlyOneSpaceAfterTheColonIsDropped) {
  SseParser p;
  EXPECT_EQ(p.feed("data:  padded\n\n"), Events{" padded"});
}

TEST(SseParser, FinishDeliversAnEventTheBodyDidNotTerminate) {
  SseParser p;
  EXPECT_TRUE(p.feed("data: last").empty());
  EXPECT_EQ(p.finish(), Events{"last"});
  EXPECT_TRUE(p.finish().empty());
}

}  // namespace
}  // namespace baton::bench_serve
