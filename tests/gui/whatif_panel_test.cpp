// The what-if panel, headless, on a real trace: the report pane renders the library's structured
// results (the verdict, a table of figures, the stack with short frames), variant names elide in
// the middle, and the Device group's capacity, overhead, fraction and settings reach the run.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableView>
#include <QThread>

#include "app/trace_document.h"
#include "models/stack_model.h"
#include "models/variant_model.h"
#include "models/whatif_figures_model.h"
#include "reservoir/replay/frame_text.h"
#include "reservoir/replay/report_text.h"
#include "gui_test_util.h"
#include "test_paths.h"
#include "widgets/sweep_dialog.h"
#include "widgets/whatif_panel.h"

namespace reservoir::gui {
namespace {

using Tester = QAbstractItemModelTester;
const QString kCleanup = QStringLiteral("cleanup after:state_dict_loader.py:load");

bool waitFor(const TraceDocument& doc, int ms = 120000) { return test_util::waitFor(doc, ms); }

int rowNamed(const QAbstractItemModel& m, const QString& figure) {
  for (int r = 0; r < m.rowCount(); ++r)
    if (m.index(r, WhatIfFiguresModel::kFigure).data().toString() == figure) return r;
  return -1;
}

qlonglong bytesAt(const QAbstractItemModel& m, int row, int column) {
  return m.index(row, column).data(WhatIfFiguresModel::BytesRole).toLongLong();
}

class WhatIfPanelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    doc_ = std::make_unique<TraceDocument>(
        QString::fromStdString((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string()));
    panel_ = std::make_unique<WhatIfPanel>(doc_.get());
    panel_->resize(1200, 800);
    panel_->show();
    doc_->start();
    ASSERT_TRUE(waitFor(*doc_));
    ASSERT_TRUE(doc_->isModelled()) << doc_->error().toStdString();
  }
  void TearDown() override {
    panel_.reset();
    doc_.reset();
  }
  const Variant& run(const QStringList& edits, const QString& settings = {}) {
    panel_->runVariant(edits, settings);
    EXPECT_TRUE(waitFor(*doc_));
    return doc_->variants().back();
  }
  std::unique_ptr<TraceDocument> doc_;
  std::unique_ptr<WhatIfPanel> panel_;
};

// A cleanup with no probe: the sentence, then its own point's figure against the recording.
TEST_F(WhatIfPanelTest, TheReportPaneRendersTheStructuredResults) {
  Tester tester(panel_->figures(), Tester::FailureReportingMode::Fatal);
  Tester stackTester(panel_->stack(), Tester::FailureReportingMode::Fatal);
  const Variant& v = run({kCleanup});
  ASSERT_TRUE(v.error.isEmpty()) << v.error.toStdString();
  ASSERT_NE(v.report, nullptr);
  const auto& rep = *v.report;
  EXPECT_EQ(panel_->verdictLabel()->text().toStdString(), replay::whatIfVerdict(rep));
  EXPECT_TRUE(panel_->verdictLabel()->text().startsWith(
      QStringLiteral("empty_cache after state_dict_loader.py:load: reserved there ")));
  const auto& m = *panel_->figures();
  EXPECT_EQ(panel_->figuresView()->model(), &m);
  const int at = rowNamed(m, QStringLiteral("reserved after state_dict_loader.py:load (cleanup)"));
  ASSERT_GE(at, 0);
  ASSERT_FALSE(rep.whatif.at_edits.empty());
  EXPECT_EQ(bytesAt(m, at, WhatIfFiguresModel::kRecording), rep.baseline.at_edits[0].reserved);
  EXPECT_EQ(bytesAt(m, at, WhatIfFiguresModel::kWhatIf), rep.whatif.at_edits[0].reserved);
  EXPECT_LT(rep.whatif.at_edits[0].reserved, rep.baseline.at_edits[0].reserved);
  EXPECT_EQ(bytesAt(m, at, WhatIfFiguresModel::kChange),
            rep.whatif.at_edits[0].reserved - rep.baseline.at_edits[0].reserved);
  // The variants table says it too, in its column for the first point.
  EXPECT_EQ(panel_->model()->index(0, VariantModel::kAtProbe).data().toString(),
            m.index(at, WhatIfFiguresModel::kRecording).data().toString() + QStringLiteral(" -> ") +
                m.index(at, WhatIfFiguresModel::kWhatIf).data().toString());
  const int peak = rowNamed(m, QStringLiteral("peak reserved"));
  ASSERT_GE(peak, 0);
  EXPECT_EQ(bytesAt(m, peak, WhatIfFiguresModel::kWhatIf), rep.whatif.peak_reserved.bytes);
  EXPECT_EQ(bytesAt(m, rowNamed(m, QStringLiteral("peak allocated")), WhatIfFiguresModel::kRecording),
            rep.baseline.peak_allocated.bytes);
  const int oom = rowNamed(m, QStringLiteral("out of memory"));
  ASSERT_GE(oom, 0);
  ASSERT_FALSE(rep.whatif.oom.has_value());
  EXPECT_EQ(m.index(oom, WhatIfFiguresModel::kWhatIf).data().toString(), QStringLiteral("no"));
  const int saving = rowNamed(m, QStringLiteral("peak saving"));
  ASSERT_GE(saving, 0);
  EXPECT_EQ(bytesAt(m, saving, WhatIfFiguresModel::kWhatIf),
            rep.baseline.peak_reserved.bytes - rep.whatif.peak_reserved.bytes);
  // The peak's stack: short file:line, the full path on hover.
  ASSERT_GT(panel_->stack()->rowCount(), 0);
  EXPECT_TRUE(panel_->stackLabel()->text().contains(QString::number(rep.whatif.peak_reserved.event)));
  bool shortened = false;
  for (int r = 0; r < panel_->stack()->rowCount(); ++r) {
    const QModelIndex file = panel_->stack()->index(r, StackModel::kFile);
    const QString full = file.data(Qt::ToolTipRole).toString();
    const QString path = full.left(full.lastIndexOf(QLatin1Char(':')));
    EXPECT_EQ(file.data().toString(),
              QString::fromStdString(replay::shortFramePath(path.toStdString())) + full.mid(path.size()));
    shortened = shortened || file.data().toString() != full;
  }
  EXPECT_TRUE(shortened) << "no frame of the peak's stack has a path long enough to shorten";
  // Copy as text: the command line's report.
  EXPECT_EQ(panel_->reportText(), v.report_text);
  panel_->copyReportText();
  EXPECT_EQ(QApplication::clipboard()->text(), v.report_text);
  EXPECT_TRUE(v.report_text.contains(QStringLiteral("reserved at after:state_dict_loader.py:load")));
}

TEST_F(WhatIfPanelTest, VariantNamesElideInTheMiddleAndShowInFullOnHover) {
  QStringList edits = {kCleanup, QStringLiteral("probe before:broadcast_weights"),
                       QStringLiteral("probe after:state_dict_loader.py:load"),
                       QStringLiteral("reset-peaks before:broadcast_weights")};
  const Variant& v = run(edits, QStringLiteral("expandable_segments:True,garbage_collection_threshold:0.6"));
  ASSERT_TRUE(v.error.isEmpty()) << v.error.toStdString();
  panel_->resize(700, 600);
  QApplication::processEvents();
  QTableView* view = panel_->variantsView();
  EXPECT_EQ(view->textElideMode(), Qt::ElideMiddle);
  const QModelIndex name = panel_->model()->index(0, VariantModel::kName);
  EXPECT_EQ(name.data(Qt::ToolTipRole).toString(), v.name);
  EXPECT_EQ(name.data().toString(), v.name);
  // The column is narrower than the name: the view elides it.
  EXPECT_LT(view->columnWidth(VariantModel::kName), QFontMetrics(view->font()).horizontalAdvance(v.name));
  // On a laptop's pane the figures' columns fill the width, yet the names keep a readable column
  // (a stretched first column had shrunk to a sliver); on a wide one they take the room left.
  panel_->resize(560, 400);
  QApplication::processEvents();
  EXPECT_GE(view->columnWidth(VariantModel::kName), 150);
  panel_->resize(2400, 600);
  QApplication::processEvents();
  int others = 0;
  for (int c = 1; c < view->model()->columnCount(); ++c) others += view->columnWidth(c);
  EXPECT_GE(view->columnWidth(VariantModel::kName) + others, view->viewport()->width() - 2);
}

TEST_F(WhatIfPanelTest, TheDeviceGroupOffersMeasuredPresetsAndTheLibrarysErrors) {
  QComboBox* capacity = panel_->capacityBox();
  const int h200 = capacity->findText(QStringLiteral("H200 (150,109,880,320 B)"));
  const int a100 = capacity->findText(QStringLiteral("A100 80GB (85,097,971,712 B, as observed)"));
  ASSERT_GE(h200, 0);
  ASSERT_GE(a100, 0);
  EXPECT_TRUE(panel_->device().capacity.isEmpty()) << "the recorded device by default";
  capacity->setCurrentIndex(h200);
  EXPECT_EQ(panel_->device().capacity, QStringLiteral("150109880320"));
  capacity->setCurrentIndex(a100);
  EXPECT_EQ(panel_->device().capacity, QStringLiteral("85097971712"));
  capacity->setEditText(QStringLiteral("80GiB"));
  EXPECT_EQ(panel_->device().capacity, QStringLiteral("80GiB"));
  EXPECT_TRUE(panel_->deviceError()->isHidden());
  capacity->setEditText(QStringLiteral("lots"));
  EXPECT_FALSE(panel_->deviceError()->isHidden());
  EXPECT_TRUE(panel_->deviceError()->text().startsWith(QStringLiteral("capacity: "))) << panel_->deviceError()->text().toStdString();
  capacity->setEditText(QStringLiteral("1GiB"));
  panel_->overheadField()->setText(QStringLiteral("2GiB"));
  EXPECT_TRUE(panel_->deviceError()->text().contains(QStringLiteral("no memory for PyTorch's cache")))
      << panel_->deviceError()->text().toStdString();
  panel_->overheadField()->clear();
  panel_->settingsField()->setText(QStringLiteral("no_such_setting:1"));
  EXPECT_TRUE(panel_->deviceError()->text().startsWith(QStringLiteral("settings "))) << panel_->deviceError()->text().toStdString();
  panel_->settingsField()->clear();
  EXPECT_TRUE(panel_->deviceError()->isHidden());
  EXPECT_FALSE(panel_->device().fraction.has_value());
  panel_->fractionCheck()->setChecked(true);
  panel_->fractionBox()->setValue(0.5);
  ASSERT_TRUE(panel_->device().fraction.has_value());
  EXPECT_DOUBLE_EQ(*panel_->device().fraction, 0.5);
}

// The variant runs on the Device group's device: the OOM row and the verdict use it.
TEST_F(WhatIfPanelTest, TheDeviceReachesTheVariantsFiguresAndVerdict) {
  const Variant& plain = run({kCleanup});
  ASSERT_NE(plain.report, nullptr);
  ASSERT_FALSE(plain.report->whatif.oom.has_value());
  const std::int64_t peak = plain.report->whatif.peak_reserved.bytes;
  panel_->capacityBox()->setEditText(QString::number(peak / 2));
  const Variant& small = run({kCleanup});
  ASSERT_TRUE(small.error.isEmpty()) << small.error.toStdString();
  ASSERT_NE(small.report, nullptr);
  ASSERT_TRUE(small.report->capacity.has_value());
  EXPECT_EQ(static_cast<std::int64_t>(*small.report->capacity), peak / 2);
  ASSERT_TRUE(small.report->whatif.oom.has_value());
  const auto& m = *panel_->figures();
  const int oom = rowNamed(m, QStringLiteral("out of memory"));
  ASSERT_GE(oom, 0);
  EXPECT_EQ(m.index(oom, WhatIfFiguresModel::kWhatIf).data().toString(),
            QStringLiteral("at event %1").arg(small.report->whatif.oom->event));
  EXPECT_TRUE(panel_->verdictLabel()->text().contains(QStringLiteral("out of memory"), Qt::CaseInsensitive))
      << panel_->verdictLabel()->text().toStdString();
  EXPECT_TRUE(panel_->stackLabel()->text().contains(QStringLiteral("runs out of memory")));
  EXPECT_TRUE(small.name.contains(QStringLiteral("capacity ")));
  // A fraction of the H200's total.
  panel_->capacityBox()->setCurrentIndex(panel_->capacityBox()->findText(QStringLiteral("H200 (150,109,880,320 B)")));
  panel_->fractionCheck()->setChecked(true);
  panel_->fractionBox()->setValue(0.25);
  const Variant& fraction = run({kCleanup});
  ASSERT_TRUE(fraction.error.isEmpty()) << fraction.error.toStdString();
  EXPECT_DOUBLE_EQ(fraction.report->edited_run.fraction, 0.25);
  EXPECT_EQ(fraction.report->capacity, ByteCount{150109880320});
  const int row = rowNamed(m, QStringLiteral("memory fraction"));
  ASSERT_GE(row, 0);
  EXPECT_EQ(m.index(row, WhatIfFiguresModel::kWhatIf).data().toString(), QStringLiteral("0.25"));
  // A bad device is the variant's error, in the library's words.
  panel_->overheadField()->setText(QStringLiteral("200GiB"));
  const Variant& bad = run({kCleanup});
  EXPECT_TRUE(bad.error.contains(QStringLiteral("overhead"))) << bad.error.toStdString();
  EXPECT_TRUE(panel_->verdictLabel()->text().startsWith(QStringLiteral("error: ")));
}


// Selecting a variant puts what made it back in the fields: its edits, settings and device.
TEST_F(WhatIfPanelTest, SelectingAVariantRestoresItsInputs) {
  const Variant& first = run({kCleanup});
  ASSERT_TRUE(first.error.isEmpty()) << first.error.toStdString();
  panel_->capacityBox()->setEditText(QStringLiteral("80GiB"));
  panel_->overheadField()->setText(QStringLiteral("1GiB"));
  panel_->fractionCheck()->setChecked(true);
  panel_->fractionBox()->setValue(0.5);
  const Variant& second = run({}, QStringLiteral("garbage_collection_threshold:0.6"));
  ASSERT_TRUE(second.error.isEmpty()) << second.error.toStdString();
  ASSERT_EQ(doc_->variants().size(), 2u);
  doc_->selectVariant(0);
  EXPECT_EQ(panel_->editsText(), kCleanup);
  EXPECT_TRUE(panel_->settingsField()->text().isEmpty());
  EXPECT_TRUE(panel_->device().capacity.isEmpty()) << panel_->device().capacity.toStdString();
  EXPECT_TRUE(panel_->overheadField()->text().isEmpty());
  EXPECT_FALSE(panel_->device().fraction.has_value());
  doc_->selectVariant(1);
  EXPECT_TRUE(panel_->editsText().isEmpty()) << panel_->editsText().toStdString();
  EXPECT_EQ(panel_->settingsField()->text(), QStringLiteral("garbage_collection_threshold:0.6"));
  EXPECT_EQ(panel_->device().capacity, QStringLiteral("80GiB"));
  EXPECT_EQ(panel_->overheadField()->text(), QStringLiteral("1GiB"));
  ASSERT_TRUE(panel_->device().fraction.has_value());
  EXPECT_DOUBLE_EQ(*panel_->device().fraction, 0.5);
  // A preset comes back as the preset.
  const int h200 = panel_->capacityBox()->findText(QStringLiteral("H200 (150,109,880,320 B)"));
  panel_->capacityBox()->setCurrentIndex(h200);
  run({kCleanup});
  doc_->selectVariant(0);
  doc_->selectVariant(2);
  EXPECT_EQ(panel_->capacityBox()->currentIndex(), h200);
}

// The sweep's candidates run on the Device group's device: on a device far smaller than the
// run's live memory every candidate runs out of memory, and the dialog says which device.
TEST_F(WhatIfPanelTest, TheSweepRunsOnTheDeviceGroupsDevice) {
  panel_->capacityBox()->setEditText(QStringLiteral("lots"));
  panel_->sweepButton()->click();
  EXPECT_EQ(panel_->findChild<SweepDialog*>(), nullptr) << "a bad device starts no sweep";
  EXPECT_FALSE(panel_->deviceError()->isHidden());
  panel_->capacityBox()->setEditText(QStringLiteral("64MiB"));
  panel_->sweepButton()->click();
  auto* dialog = panel_->findChild<SweepDialog*>();
  ASSERT_NE(dialog, nullptr);
  EXPECT_TRUE(dialog->deviceText().contains(QStringLiteral("capacity 64MiB"))) << dialog->deviceText().toStdString();
  QElapsedTimer t;
  t.start();
  while ((dialog->running() || !dialog->report()) && t.elapsed() < 120000)
    QApplication::processEvents(QEventLoop::AllEvents, 20);
  ASSERT_NE(dialog->report(), nullptr) << dialog->statusText().toStdString();
  const auto& rep = *dialog->report();
  ASSERT_GT(rep.candidates.size(), 1u);
  for (const auto& c : rep.candidates) EXPECT_TRUE(c.oom) << c.description;
  dialog->close();
}


// On a laptop's screen the What-if tab is about 330 px tall: the inputs scroll, and the variants
// table keeps at least four rows' height instead of shrinking to its header.
TEST_F(WhatIfPanelTest, TheVariantsTableKeepsRowsInAShortTab) {
  panel_->resize(800, 330);
  QApplication::processEvents();
  QTableView* t = panel_->variantsView();
  const int header = t->horizontalHeader()->height();
  EXPECT_GE(t->height() - header, 4 * t->fontMetrics().height()) << t->height();
  panel_->resize(1200, 800);
}

}  // namespace
}  // namespace reservoir::gui
