#include "widgets/callsites_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include "app/format.h"
#include "app/trace_document.h"
#include "models/allocator_state.h"
#include "models/call_tree_model.h"

namespace reservoir::gui {

CallSitesView::CallSitesView(TraceDocument* doc, QWidget* parent)
    : QWidget(parent), doc_(doc), direction_(new QComboBox(this)), when_(new QComboBox(this)),
      summary_(new QLabel(this)), tree_(new QTreeView(this)), model_(new CallTreeModel(this)),
      timer_(new QTimer(this)) {
  direction_->addItems({tr("Top-down (callers first)"), tr("Bottom-up (allocating frames first)")});
  when_->addItems({tr("at the cursor"), tr("at the peak reserved")});
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Live memory"), this));
  bar->addWidget(when_);
  bar->addWidget(direction_);
  bar->addWidget(summary_, 1);
  tree_->setModel(model_);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->header()->setStretchLastSection(false);
  tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  tree_->setContextMenuPolicy(Qt::CustomContextMenu);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addLayout(bar);
  lay->addWidget(tree_);
  timer_->setSingleShot(true);
  timer_->setInterval(30);
  connect(timer_, &QTimer::timeout, this, &CallSitesView::rebuild);
  connect(direction_, &QComboBox::currentIndexChanged, this, &CallSitesView::rebuild);
  connect(when_, &QComboBox::currentIndexChanged, this, &CallSitesView::rebuild);
  connect(doc_, &TraceDocument::modelled, this, &CallSitesView::rebuild);
  connect(doc_, &TraceDocument::cursorChanged, this, [this] {
    if (when_->currentIndex() == 0 && isVisible()) timer_->start();
  });
  connect(tree_, &QWidget::customContextMenuRequested, this, [this](QPoint pos) {
    const QModelIndex i = tree_->indexAt(pos);
    const auto rec = doc_->recorded();
    if (!i.isValid() || !rec) return;
    const FrameId f(i.data(CallTreeModel::FrameRole).toUInt());
    if (!f.valid()) return;
    QMenu menu;
    const QString after = pointForFrame(rec->trace->snapshot(), f, true);
    const QString before = pointForFrame(rec->trace->snapshot(), f, false);
    menu.addAction(tr("What-if: cleanup %1").arg(after), this, [this, after] { emit pointPicked(after); });
    menu.addAction(tr("What-if: cleanup %1").arg(before), this, [this, before] { emit pointPicked(before); });
    menu.exec(tree_->viewport()->mapToGlobal(pos));
  });
  if (doc_->isModelled()) rebuild();
}

void CallSitesView::setBottomUp(bool on) { direction_->setCurrentIndex(on ? 1 : 0); }
void CallSitesView::setAtPeak(bool on) { when_->setCurrentIndex(on ? 1 : 0); }

void CallSitesView::rebuild() {
  const auto model = doc_->model();
  const auto rec = doc_->recorded();
  if (!model || !rec) return;
  const std::uint32_t event = when_->currentIndex() == 1 ? doc_->peakEvent() : doc_->cursor();
  const auto state = classifyState(model->model->stateAtEvent(event), event);
  std::vector<std::pair<StackId, std::int64_t>> live;
  const auto& l = rec->trace->lifetimes;
  for (const auto& b : state.blocks) {
    if (b.kind != BlockKind::kAllocated && b.kind != BlockKind::kPendingFree) continue;
    const StackId s = b.allocation < l.count() ? l.stack(b.allocation) : StackId{};
    live.emplace_back(s, static_cast<std::int64_t>(b.size));
  }
  const auto dir = direction_->currentIndex() == 1 ? replay::TreeDirection::kBottomUp : replay::TreeDirection::kTopDown;
  auto tree = std::make_shared<replay::CallTree>(replay::buildCallTree(rec->trace->snapshot(), live, dir));
  model_->setTree(tree, rec->trace->trace.snapshot);
  summary_->setText(tr("event %1: %2 in %3 live blocks").arg(event).arg(sizeText(tree->total())).arg(live.size()));
  tree_->expandToDepth(dir == replay::TreeDirection::kTopDown ? 6 : 1);
}

}  // namespace reservoir::gui
