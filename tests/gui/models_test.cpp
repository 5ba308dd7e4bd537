// Every item model of the GUI checked with QAbstractItemModelTester on a real trace.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <algorithm>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>

#include "app/format.h"
#include "app/plot_data.h"
#include "app/trace_document.h"
#include "models/stack_model.h"
#include "reservoir/replay/frame_text.h"
#include "models/allocator_state.h"
#include "models/call_tree_model.h"
#include "models/event_filter_proxy.h"
#include "models/event_search.h"
#include "models/event_table_model.h"
#include "models/facts_model.h"
#include "reservoir/replay/stat_words.h"
#include "reservoir/replay/conformance.h"
#include "models/segment_model.h"
#include "models/variant_model.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/point.h"
#include "reservoir/replay/session.h"
#include "widgets/segment_map.h"
#include "gui_test_util.h"
#include "test_paths.h"

namespace reservoir::gui {
namespace {

using Tester = QAbstractItemModelTester;

std::string tinyTrace() { return (test::samplesDir() / "resume-tiny" / "resume-main.rank0.pickle").string(); }

// Loads the tiny trace through a TraceDocument, as the GUI does.
bool waitFor(const TraceDocument& doc, int ms = 60000) { return test_util::waitFor(doc, ms); }

class ModelsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    doc_ = new TraceDocument(QString::fromStdString(tinyTrace()));
    doc_->start();
    ASSERT_TRUE(waitFor(*doc_));
    ASSERT_TRUE(doc_->isModelled()) << doc_->error().toStdString();
  }
  static void TearDownTestSuite() {
    delete doc_;
    doc_ = nullptr;
  }
  static TraceDocument* doc_;
};
TraceDocument* ModelsTest::doc_ = nullptr;

TEST_F(ModelsTest, EventTableModel) {
  EventTableModel m;
  Tester tester(&m, Tester::FailureReportingMode::Fatal);
  m.setTrace(doc_->recorded());
  EXPECT_EQ(m.rowCount(), static_cast<int>(doc_->recorded()->events()));
  EXPECT_EQ(m.index(3, EventTableModel::kIndex).data(EventTableModel::EventRole).toUInt(), 3u);
  EXPECT_FALSE(m.index(0, EventTableModel::kAction).data().toString().isEmpty());
}

// The selected event's whole stack: every frame, innermost first, the file shortened by the
// library's rule and the full path on hover.
TEST_F(ModelsTest, StackModelListsEveryFrame) {
  const auto rec = doc_->recorded();
  const auto& snap = rec->trace->snapshot();
  const auto& events = rec->trace->deviceTrace().events;
  std::uint32_t e = 0;
  while (e < events.size() && snap.stack(events[e].stack).size() < 3) ++e;
  ASSERT_LT(e, events.size()) << "no event with a stack of 3 frames";
  const auto frames = snap.stack(events[e].stack);
  StackModel m;
  Tester tester(&m, Tester::FailureReportingMode::Fatal);
  m.setStack(rec, events[e].stack);
  ASSERT_EQ(m.rowCount(), static_cast<int>(frames.size()));
  for (int r = 0; r < m.rowCount(); ++r) {
    const auto& f = snap.frames[frames[static_cast<std::size_t>(r)].value()];
    const auto file = QString::fromStdString(std::string(snap.str(f.filename)));
    EXPECT_EQ(m.index(r, StackModel::kFunction).data().toString().toStdString(), std::string(snap.str(f.name)));
    EXPECT_EQ(m.index(r, StackModel::kFile).data().toString(),
              QStringLiteral("%1:%2").arg(QString::fromStdString(replay::shortFramePath(snap.str(f.filename)))).arg(f.line));
    EXPECT_EQ(m.index(r, StackModel::kFile).data(Qt::ToolTipRole).toString(), QStringLiteral("%1:%2").arg(file).arg(f.line));
  }
  m.setStack(rec, StackId{});
  EXPECT_EQ(m.rowCount(), 0);
}

TEST_F(ModelsTest, EventFilterProxy) {
  EventTableModel m;
  m.setTrace(doc_->recorded());
  EventFilterProxy proxy;
  Tester tester(&proxy, Tester::FailureReportingMode::Fatal);
  proxy.setSourceModel(&m);
  EXPECT_EQ(proxy.rowCount(), m.rowCount());
  auto q = parseEventQuery("action:segment_alloc");
  ASSERT_TRUE(q);
  auto rows = matchEvents(doc_->recorded()->trace->snapshot(), doc_->recorded()->trace->deviceTrace(), *q);
  ASSERT_FALSE(rows.empty());
  proxy.setMatches(rows, true);
  EXPECT_EQ(proxy.rowCount(), static_cast<int>(rows.size()));
  const QModelIndex first = proxy.index(0, EventTableModel::kAction);
  EXPECT_EQ(first.data().toString(), QStringLiteral("segment_alloc"));
  EXPECT_EQ(proxy.mapToSource(first).row(), static_cast<int>(rows[0]));
  EXPECT_EQ(proxy.mapFromSource(m.index(static_cast<int>(rows[0]), 0)).row(), 0);
  EXPECT_EQ(proxy.showRowAtOrAfter(0), 0);
  proxy.setMatches({}, false);
  EXPECT_EQ(proxy.rowCount(), m.rowCount());
}

// Past its window's rows the proxy shows a window of them (a table's header costs 8 bytes a row):
// the window follows the row asked for and slides by half, and every row maps both ways.
TEST_F(ModelsTest, EventFilterProxyShowsAWindowOfALongTrace) {
  EventTableModel m;
  m.setTrace(doc_->recorded());
  EventFilterProxy proxy;
  Tester tester(&proxy, Tester::FailureReportingMode::Fatal);
  proxy.setSourceModel(&m);
  const int n = m.rowCount();
  ASSERT_GT(n, 100);
  proxy.setWindowRows(16);
  EXPECT_EQ(proxy.rowCount(), 16);
  EXPECT_EQ(proxy.shownRows(), static_cast<std::size_t>(n));
  auto checkMapping = [&] {
    for (int r = 0; r < proxy.rowCount(); ++r) {
      const QModelIndex src = proxy.mapToSource(proxy.index(r, 0));
      ASSERT_EQ(src.row(), static_cast<int>(proxy.windowBegin()) + r);
      ASSERT_EQ(proxy.mapFromSource(src).row(), r);
      ASSERT_EQ(proxy.index(r, EventTableModel::kIndex).data(EventTableModel::EventRole).toInt(), src.row());
    }
  };
  const int row = proxy.showRowAtOrAfter(n / 2);
  ASSERT_GE(row, 0);
  EXPECT_EQ(proxy.mapToSource(proxy.index(row, 0)).row(), n / 2) << "the window moved to the row";
  EXPECT_EQ(proxy.windowBegin(), static_cast<std::size_t>(n / 2 - 8));
  checkMapping();
  EXPECT_FALSE(proxy.mapFromSource(m.index(0, 0)).isValid()) << "a row outside the window";
  EXPECT_EQ(proxy.slide(+1), 8);
  checkMapping();
  EXPECT_EQ(proxy.slide(-1), -8);
  proxy.showRowAtOrAfter(n - 1);
  EXPECT_EQ(proxy.windowBegin(), static_cast<std::size_t>(n - 16)) << "the last window ends at the last row";
  EXPECT_EQ(proxy.slide(+1), 0);
  checkMapping();
  proxy.showRowAtOrAfter(0);
  EXPECT_EQ(proxy.windowBegin(), 0u);
  EXPECT_EQ(proxy.slide(-1), 0);
  // Filtered: the window is over the matches.
  std::vector<std::uint32_t> odd;
  for (int e = 1; e < n; e += 2) odd.push_back(static_cast<std::uint32_t>(e));
  proxy.setMatches(odd, true);
  EXPECT_EQ(proxy.rowCount(), 16);
  const int match = proxy.showRowAtOrAfter(n / 2);
  EXPECT_EQ(proxy.mapToSource(proxy.index(match, 0)).row() % 2, 1);
  EXPECT_GE(proxy.mapToSource(proxy.index(match, 0)).row(), n / 2);
  for (int r = 0; r < proxy.rowCount(); ++r) {
    const QModelIndex src = proxy.mapToSource(proxy.index(r, 0));
    ASSERT_EQ(src.row(), static_cast<int>(odd[proxy.windowBegin() + static_cast<std::size_t>(r)]));
    ASSERT_EQ(proxy.mapFromSource(src).row(), r);
  }
  EXPECT_FALSE(proxy.mapFromSource(m.index(0, 0)).isValid()) << "not a match";
}

TEST_F(ModelsTest, SegmentModel) {
  SegmentModel m;
  Tester tester(&m, Tester::FailureReportingMode::Fatal);
  const auto peak = doc_->peakEvent();
  auto st = std::make_shared<AllocatorState>(classifyState(doc_->model()->model->stateAtEvent(peak), peak));
  m.setState(st, doc_->recorded());
  ASSERT_GT(m.rowCount(), 0);
  const QModelIndex seg = m.index(0, 0);
  ASSERT_GT(m.rowCount(seg), 0);
  const QModelIndex blk = m.index(0, 0, seg);
  EXPECT_EQ(m.parent(blk), seg);
  EXPECT_GE(blk.data(SegmentModel::BlockRole).toInt(), 0);
  EXPECT_EQ(m.indexOfBlock(blk.data(SegmentModel::BlockRole).toInt()), blk);
  EXPECT_EQ(st->reserved, doc_->recorded()->trace->series.peak_reserved);
}

TEST_F(ModelsTest, CallTreeModelBothDirections) {
  const auto peak = doc_->peakEvent();
  const auto st = classifyState(doc_->model()->model->stateAtEvent(peak), peak);
  std::vector<std::pair<StackId, std::int64_t>> live;
  const auto& l = doc_->recorded()->trace->lifetimes;
  for (const auto& b : st.blocks)
    if (b.kind == BlockKind::kAllocated && b.allocation < l.count())
      live.emplace_back(l.stack(b.allocation), static_cast<std::int64_t>(b.size));
  for (auto dir : {replay::TreeDirection::kTopDown, replay::TreeDirection::kBottomUp}) {
    CallTreeModel m;
    Tester tester(&m, Tester::FailureReportingMode::Fatal);
    auto tree =
        std::make_shared<replay::CallTree>(replay::buildCallTree(doc_->recorded()->trace->snapshot(), live, dir));
    m.setTree(tree, doc_->recorded()->trace->trace.snapshot);
    ASSERT_GT(m.rowCount(), 0);
    std::int64_t sum = 0;
    for (int r = 0; r < m.rowCount(); ++r) sum += m.index(r, 0).data(CallTreeModel::BytesRole).toLongLong();
    EXPECT_LE(sum, tree->total());  // blocks without frames stay at the root
    EXPECT_GT(sum, 0);
  }
}

TEST_F(ModelsTest, VariantModelAndFactsModel) {
  VariantModel variants(doc_);
  Tester t1(&variants, Tester::FailureReportingMode::Fatal);
  FactsModel facts;
  Tester t2(&facts, Tester::FailureReportingMode::Fatal);
  facts.setDocument(doc_);
  EXPECT_GT(facts.rowCount(), 10);
  const int before = variants.rowCount();
  doc_->addVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")},
                   QStringLiteral("expandable_segments:True"));
  EXPECT_EQ(variants.rowCount(), before + 1);
  ASSERT_TRUE(waitFor(*doc_));
  const QModelIndex saving = variants.index(before, VariantModel::kSaving);
  const auto& report = *doc_->variants().back().report;
  EXPECT_EQ(saving.data(VariantModel::SavingRole).toLongLong(),
            report.baseline.peak_reserved.bytes - report.whatif.peak_reserved.bytes);
  EXPECT_FALSE(variants.index(before, VariantModel::kPeakReserved).data().toString().isEmpty());
  EXPECT_TRUE(doc_->variants().back().report_text.contains(QStringLiteral("peak reserved")));
  doc_->addVariant({QStringLiteral("cleanup after:no_such_function_anywhere")}, QString());
  ASSERT_TRUE(waitFor(*doc_));
  EXPECT_FALSE(doc_->variants().back().error.isEmpty());
  doc_->removeVariant(static_cast<int>(doc_->variants().size()) - 1);
  EXPECT_EQ(variants.rowCount(), before + 1);
}

TEST(EventSearch, ParsesTerms) {
  auto q = parseEventQuery("0x7F12 size>=1MiB action:alloc frame:optim loader");
  ASSERT_TRUE(q) << q.message();
  ASSERT_EQ(q->address_prefixes.size(), 1u);
  EXPECT_EQ(q->address_prefixes[0], "7f12");
  ASSERT_EQ(q->sizes.size(), 1u);
  EXPECT_EQ(q->sizes[0].op, 'g');
  EXPECT_EQ(q->sizes[0].bytes, 1024u * 1024u);
  EXPECT_EQ(q->actions.size(), 1u);
  EXPECT_EQ(q->frames, (std::vector<std::string>{"optim", "loader"}));
  EXPECT_FALSE(parseEventQuery("action:nonsense"));
  EXPECT_FALSE(parseEventQuery("size>lots"));
  EXPECT_TRUE(parseEventQuery("   ")->empty());
}

TEST_F(ModelsTest, EventSearchFindsSizesAndFrames) {
  const auto& t = *doc_->recorded()->trace;
  auto big = matchEvents(t.snapshot(), t.deviceTrace(), *parseEventQuery("action:segment_alloc size>=2MiB"));
  for (auto e : big) EXPECT_GE(t.deviceTrace().events[e].size, 2u << 20);
  auto frames = matchEvents(t.snapshot(), t.deviceTrace(), *parseEventQuery("frame:state_dict_loader"));
  EXPECT_FALSE(frames.empty());
  const auto& ev = t.deviceTrace().events[big.empty() ? 0 : big[0]];
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(ev.addr));
  auto at = matchEvents(t.snapshot(), t.deviceTrace(), *parseEventQuery(hex));
  EXPECT_FALSE(at.empty());
}

// "replays the recording" says in words what differs, never a bare count of mismatches.
TEST_F(ModelsTest, FactsSayWhatTheReplayReproduced) {
  FactsModel facts;
  facts.setDocument(doc_);
  QString text;
  for (int r = 0; r < facts.rowCount(); ++r)
    if (facts.index(r, 0).data().toString() == QStringLiteral("replays the recording"))
      text = facts.index(r, 1).data().toString();
  ASSERT_FALSE(text.isEmpty());
  const auto& c = doc_->model()->model->prepared.conformance;
  EXPECT_FALSE(text.contains(QStringLiteral("mismatches")));
  if (c.exact()) {
    EXPECT_EQ(text, QStringLiteral("every event, the final layout and statistics"));
  } else if (!c.stats_mismatches.empty()) {
    EXPECT_TRUE(text.contains(QString::fromStdString(replay::statKeyWords(c.stats_mismatches[0].what))))
        << text.toStdString();
  }
}

// A window of a ring buffer says what its bands cannot show: the blocks allocated before it.
TEST(FactsWindow, ATruncatedTraceNamesTheBlocksFromBeforeTheWindow) {
  auto row = [](FactsModel& facts, const QString& name) {
    for (int r = 0; r < facts.rowCount(); ++r)
      if (facts.index(r, 0).data().toString() == name) return facts.index(r, 1).data().toString();
    return QString();
  };
  TraceDocument ring(QString::fromStdString((test::testDataDir() / "traces/ring-expandable-s4.pickle.zst").string()));
  ring.start();
  ASSERT_TRUE(test_util::waitFor(ring, 120000));
  ASSERT_TRUE(ring.isModelled()) << ring.error().toStdString();
  ASSERT_FALSE(ring.recorded()->trace->facts.complete);
  FactsModel facts;
  facts.setDocument(&ring);
  const QString before = row(facts, QStringLiteral("allocated before the window"));
  EXPECT_TRUE(before.contains(QStringLiteral("blocks at the start"))) << before.toStdString();
  EXPECT_FALSE(before.startsWith(QStringLiteral("0 bytes"))) << before.toStdString();
  TraceDocument complete(QString::fromStdString(tinyTrace()));
  complete.start();
  ASSERT_TRUE(test_util::waitFor(complete, 120000));
  FactsModel whole;
  whole.setDocument(&complete);
  EXPECT_TRUE(row(whole, QStringLiteral("allocated before the window")).isEmpty());

  // Compare's facts: the two traces side by side, a column each, a fact one of them lacks
  // empty in the other's column.
  FactsModel both;
  Tester tester(&both, Tester::FailureReportingMode::Fatal);
  both.setDocuments({&ring, &complete});
  ASSERT_EQ(both.columnCount(), 3);
  EXPECT_EQ(both.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), ring.title());
  EXPECT_EQ(both.headerData(2, Qt::Horizontal, Qt::DisplayRole).toString(), complete.title());
  auto cells = [&](const QString& name) {
    for (int r = 0; r < both.rowCount(); ++r)
      if (both.index(r, 0).data().toString() == name)
        return std::pair{both.index(r, 1).data().toString(), both.index(r, 2).data().toString()};
    return std::pair{QString(), QString()};
  };
  EXPECT_EQ(cells(QStringLiteral("events")).first, QString::number(ring.recorded()->trace->facts.events));
  EXPECT_EQ(cells(QStringLiteral("events")).second, QString::number(complete.recorded()->trace->facts.events));
  EXPECT_EQ(cells(QStringLiteral("allocated before the window")).first, before);
  EXPECT_TRUE(cells(QStringLiteral("allocated before the window")).second.isEmpty());
  int names = 0;  // each fact once
  for (int r = 0; r < both.rowCount(); ++r) names += both.index(r, 0).data().toString() == QStringLiteral("events");
  EXPECT_EQ(names, 1);
  both.setDocument(&complete);
  EXPECT_EQ(both.columnCount(), 2);
  EXPECT_EQ(both.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("value"));
}

// A statistic that differs is named in words, with its memory_stats() key kept for the tooltip.
TEST(FactsText, StatisticsMismatchesInPlainWords) {
  replay::ConformanceReport c;
  c.stats_mismatches.push_back(replay::Mismatch{"active.small_pool.peak", "247", "250"});
  QString raw;
  EXPECT_EQ(conformanceText(c, &raw),
            QStringLiteral("every event; but the recorded statistics differ: peak of active small-pool blocks: "
                           "recorded 247, model 250"));
  EXPECT_TRUE(raw.contains(QStringLiteral("active.small_pool.peak: recorded 247, model 250"))) << raw.toStdString();
  c.stats_mismatches.push_back(replay::Mismatch{"reserved_bytes.all.peak", "4194304", "2097152"});
  const QString two = conformanceText(c);
  EXPECT_TRUE(two.contains(QStringLiteral("peak of reserved bytes (all pools): recorded 4.00 MiB, model 2.00 MiB")))
      << two.toStdString();
}

// The search takes the points' syntax: frame:FILE:NAME (or a whole after:/before: point) finds
// exactly the events whose stack the what-if's point matches.
TEST_F(ModelsTest, SearchAndPointsShareOneSyntax) {
  const auto& t = *doc_->recorded()->trace;
  const auto spec = replay::parseFrameSpec("state_dict_loader.py:load");
  ASSERT_TRUE(spec.ok());
  replay::StackMatcher matcher(t.snapshot(), *spec);
  std::vector<std::uint32_t> expected;
  for (std::uint32_t i = 0; i < t.deviceTrace().events.size(); ++i)
    if (matcher.matches(t.deviceTrace().events[i].stack)) expected.push_back(i);
  ASSERT_FALSE(expected.empty());
  for (const char* q : {"frame:state_dict_loader.py:load", "after:state_dict_loader.py:load",
                        "frame:before:state_dict_loader.py:load#1"}) {
    const auto got = matchEvents(t.snapshot(), t.deviceTrace(), *parseEventQuery(q));
    EXPECT_EQ(std::vector<std::uint32_t>(got.begin(), got.end()), expected) << q;
  }
}

TEST_F(ModelsTest, AllocatorStateClassifiesEveryByte) {
  const auto peak = doc_->peakEvent();
  const auto st = stateAtEvent(*doc_->model()->model, peak);
  EXPECT_TRUE(st.cache_known);
  for (const auto& s : st.segments) {
    std::uint64_t sum = 0;
    for (const auto& b : st.blocksOf(s)) {
      sum += b.size;
      if (b.pinning) {
        EXPECT_TRUE(s.pinned);
      }
    }
    EXPECT_EQ(sum, s.size);
  }
  EXPECT_EQ(st.releasable + st.pinned, st.reserved - st.allocated);
  std::size_t pinned = 0;
  for (const auto& s : st.segments) pinned += s.pinned ? 1 : 0;
  EXPECT_EQ(pinned, st.pinned_segments);
}

// A variant's curve is the edited run's reserved after each op: made from the run's compact
// curves (keep_curves), it is the run's timeline, op for op (a cleanup that changes the curve).
TEST_F(ModelsTest, AVariantsCurveIsItsRunsReservedPerOp) {
  const auto& stage = *doc_->model()->model;
  replay::WhatIfOptions o;
  o.edits.push_back(*replay::parseCleanup("after:step"));
  o.analyze_peak = false;
  o.keep_timeline = true;
  o.keep_curves = true;
  auto rep = replay::runWhatIfPrepared(stage, o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  const auto& timeline = rep->whatif.timeline;
  const auto curve = makeOpCurve(rep->whatif.curves.reserved);
  ASSERT_EQ(curve->lod.size(), timeline.size());
  ASSERT_GT(timeline.size(), 100u);
  std::size_t changes = 0;
  for (std::size_t j = 0; j < timeline.size(); ++j) {
    ASSERT_EQ(curve->lod.at(static_cast<std::uint32_t>(j)), timeline[j].reserved) << "op " << j;
    if (j > 0 && timeline[j].reserved != timeline[j - 1].reserved) ++changes;
  }
  EXPECT_GT(changes, 2u);
  EXPECT_TRUE(rep->baseline.curves.reserved.empty());  // the baseline is the model's: none kept
}

// The state view says what the what-if report says at the peak of resume-main.rank0 with
// expandable segments: 18.08 GiB comes back, 124.08 MiB stays in 3 pinned segments (page
// granular; a plain `reservoir whatif` prints the same), and the map outlines exactly those.
TEST(AllocatorStateRule, TheStateViewSaysWhatTheWhatIfReportSays) {
  TraceDocument doc(
      QString::fromStdString((test::samplesDir() / "resume-expandable" / "resume-main.rank0.pickle").string()));
  doc.start();
  ASSERT_TRUE(waitFor(doc));
  ASSERT_TRUE(doc.isModelled()) << doc.error().toStdString();
  const auto& stage = *doc.model()->model;
  auto rep = replay::runWhatIfPrepared(stage, replay::WhatIfOptions{});
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_TRUE(rep->whatif.at_peak);
  const std::uint32_t peak = rep->whatif.peak_reserved.event;
  auto st = std::make_shared<AllocatorState>(stateAtEvent(stage, peak));
  const replay::CachePins pins = replay::cachePins(*rep->whatif.at_peak);
  EXPECT_EQ(st->releasable, pins.releasable);
  EXPECT_EQ(st->pinned, pins.pinned);
  EXPECT_EQ(st->pinned_segments, pins.pinned_segments);
  EXPECT_EQ(st->pinned_segments, 3u);
  std::vector<std::uint64_t> outlined, listed;
  for (const auto& s : st->segments)
    if (s.pinned) outlined.push_back(s.address);
  for (const auto& s : rep->whatif.at_peak->pinned) listed.push_back(s.address);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(outlined, listed);
  SegmentMap map;
  map.setState(st, static_cast<double>(st->reserved), QStringLiteral("load (x.py:1)"));
  const QString h = map.headline();
  EXPECT_TRUE(h.contains(QStringLiteral("return 18.08 GiB"))) << h.toStdString();
  EXPECT_TRUE(h.contains(QStringLiteral("124.08 MiB stays cached, pinned in 3 segments"))) << h.toStdString();
  EXPECT_TRUE(h.contains(QStringLiteral("Mostly pinned by load (x.py:1)"))) << h.toStdString();
  // On a laptop's narrow pane the headline wraps onto a second line rather than being cut.
  map.resize(2400, 300);
  const int wide = map.headlineHeight();
  map.resize(500, 300);
  EXPECT_GT(map.headlineHeight(), wide);
  // The segment list says what each pinned segment keeps, as the report lists it.
  SegmentModel segments;
  QAbstractItemModelTester seg_tester(&segments, QAbstractItemModelTester::FailureReportingMode::Fatal);
  segments.setState(st, doc.recorded());
  const auto& first = rep->whatif.at_peak->pinned.front();  // the largest
  bool listed_first = false;
  for (int r = 0; r < segments.rowCount(); ++r) {
    const QString state = segments.index(r, SegmentModel::kState).data().toString();
    if (segments.index(r, SegmentModel::kAddress).data().toString() == addressText(first.address))
      listed_first = state.contains(
          QStringLiteral("pinned: %1 stays").arg(sizeText(static_cast<std::int64_t>(first.free_bytes))));
  }
  EXPECT_TRUE(listed_first);

  // Where the peak came from, in the facts and the marker's tooltip: the library's peakOrigin.
  const replay::PeakOrigin origin = replay::peakOrigin(stage, replay::PeakQuantity::kReserved);
  ASSERT_TRUE(origin.known);
  ASSERT_NE(origin.largest_rise.op, origin.set.op);
  FactsModel facts;
  QAbstractItemModelTester tester(&facts, QAbstractItemModelTester::FailureReportingMode::Fatal);
  facts.setDocument(&doc);
  QString line;
  for (int r = 0; r < facts.rowCount(); ++r)
    if (facts.index(r, 0).data().toString() == QStringLiteral("peak reserved came from"))
      line = facts.data(facts.index(r, 1), Qt::ToolTipRole).toString();
  EXPECT_TRUE(line.contains(QStringLiteral("event %1").arg(origin.set.event))) << line.toStdString();
  // The FSDP spike is a climb of several 2 GiB mappings: the facts name its span and its largest step.
  ASSERT_NE(origin.climb.first.op, origin.climb.last.op);
  EXPECT_TRUE(line.contains(QStringLiteral("over events %1-%2").arg(origin.climb.first.event).arg(origin.climb.last.event)))
      << line.toStdString();
  EXPECT_TRUE(line.contains(QStringLiteral("largest step +%1 at event %2")
                                .arg(sizeText(origin.climb.largest.rise()))
                                .arg(origin.climb.largest.event)))
      << line.toStdString();
  EXPECT_EQ(line, QStringLiteral("model: ") + peakOriginText(doc.recorded()->trace->snapshot(), origin));
  const QString html = peakOriginHtml(doc.recorded()->trace->snapshot(), origin);
  EXPECT_TRUE(html.contains(QStringLiteral("the rise that made it"))) << html.toStdString();
}

}  // namespace
}  // namespace reservoir::gui
