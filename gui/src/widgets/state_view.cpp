#include "widgets/state_view.h"

#include <QHeaderView>
#include <QSplitter>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include "app/format.h"
#include "app/trace_document.h"
#include "models/segment_model.h"
#include "widgets/segment_map.h"

namespace reservoir::gui {

StateView::StateView(TraceDocument* doc, QWidget* parent)
    : QWidget(parent), doc_(doc), map_(new SegmentMap(this)), tree_(new QTreeView(this)),
      model_(new SegmentModel(this)), details_(new QTextBrowser(this)), timer_(new QTimer(this)) {
  tree_->setModel(model_);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  details_->setOpenLinks(false);
  details_->setPlaceholderText(tr("Click a block for its stack and history."));
  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(tree_);
  bottom->addWidget(details_);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(map_);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(split);

  timer_->setSingleShot(true);
  timer_->setInterval(0);
  connect(timer_, &QTimer::timeout, this, &StateView::rebuild);
  connect(doc_, &TraceDocument::cursorChanged, timer_, qOverload<>(&QTimer::start));
  connect(doc_, &TraceDocument::modelled, timer_, qOverload<>(&QTimer::start));
  connect(map_, &SegmentMap::blockClicked, this, &StateView::selectBlock);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& i) {
    const int b = i.data(SegmentModel::BlockRole).toInt();
    map_->setSelectedBlock(b);
    showDetails(b);
  });
  connect(details_, &QTextBrowser::anchorClicked, this, &StateView::onLink);
  auto failed = [this] {
    map_->setPlaceholder(tr("No allocator state: the trace could not be opened (%1).").arg(doc_->errorInBrief()));
  };
  connect(doc_, &TraceDocument::failedToLoad, this, failed);
  if (!doc_->error().isEmpty()) failed();
  if (doc_->isModelled()) rebuild();
}

QString StateView::placeholder() const { return map_->placeholder(); }

void StateView::rebuild() {
  const auto model = doc_->model();
  const auto rec = doc_->recorded();
  if (!model || !rec) return;
  auto st = std::make_shared<AllocatorState>(stateAtEvent(
      *model->model, doc_->cursor(), static_cast<std::uint64_t>(rec->trace->series.peak_reserved / 4)));
  state_ = st;
  const double scale = static_cast<double>(std::max(rec->trace->series.peak_reserved, st->reserved)) * 1.05;
  const QString pin_stack = st->typical_stack_bytes > 0
                                ? tr("%1 (%2)").arg(topUserFrame(rec->trace->snapshot(), st->typical_stack),
                                                    sizeText(st->typical_stack_bytes))
                                : QString();
  map_->setState(state_, scale, pin_stack);
  model_->setState(state_, rec);
  details_->clear();
}

void StateView::selectBlock(int block) {
  const QModelIndex i = model_->indexOfBlock(block);
  if (!i.isValid()) return;
  tree_->expand(i.parent());
  tree_->setCurrentIndex(i);
  tree_->scrollTo(i);
}

QString allocationHtml(const TraceDocument& doc, std::uint32_t a) {
  const auto rec = doc.recorded();
  const auto& l = rec->trace->lifetimes;
  if (a >= l.count()) return {};
  auto ev = [](std::uint32_t e) { return QStringLiteral("<a href=\"event:%1\">event %1</a>").arg(e); };
  QString h = QStringLiteral("<h3>allocation #%1: %2 requested</h3><p>")
                  .arg(a)
                  .arg(sizeText(static_cast<std::int64_t>(l.size(a))));
  h += l.beforeWindow(a) ? QStringLiteral("allocated before the trace window<br>")
                         : QStringLiteral("allocated at %1<br>").arg(ev(l.begin(a)));
  if (l.freeRequested(a) != replay::AllocationLifetimes::kNone)
    h += QStringLiteral("freed at %1").arg(ev(l.freeRequested(a)));
  else
    h += QStringLiteral("still alive at the end of the trace");
  if (l.end(a) < rec->events() && l.end(a) != l.freeRequested(a) + 1)
    h += QStringLiteral(", completed at %1 (record_stream)").arg(ev(l.end(a)));
  h += QStringLiteral("</p><p><b>allocated at</b> (click a frame to use it as a what-if point):</p>");
  return h + stackHtml(rec->trace->snapshot(), l.stack(a), 24);
}

void StateView::showDetails(int block) {
  if (!state_ || block < 0 || block >= static_cast<int>(state_->blocks.size())) {
    details_->clear();
    return;
  }
  const auto& b = state_->blocks[static_cast<std::size_t>(block)];
  QString h = QStringLiteral("<p><b>%1</b> block of %2 at %3</p>")
                  .arg(QString::fromLatin1(blockKindName(b.kind)), sizeText(static_cast<std::int64_t>(b.size)),
                       addressText(b.address));
  if (b.pinning)
    h +=
        tr("<p style='color:#b00'>This live block keeps its segment's free bytes from being released by "
           "empty_cache.</p>");
  if (b.allocation != StateBlock::kNoAllocationId) {
    if (b.kind == BlockKind::kCachedFree || b.kind == BlockKind::kInactiveSplit) h += tr("<p>Last used by:</p>");
    h += allocationHtml(*doc_, b.allocation);
  }
  details_->setHtml(h);
}

void StateView::onLink(const QUrl& url) {
  const QString s = url.toString();
  if (s.startsWith(QLatin1String("event:"))) {
    const auto e = s.mid(6).toUInt();
    doc_->setCursor(e);
    emit eventRequested(e);
  } else if (s.startsWith(QLatin1String("frame:")) && doc_->recorded()) {
    emit pointPicked(pointForFrame(doc_->recorded()->trace->snapshot(), FrameId(s.mid(6).toUInt())));
  }
}

}  // namespace reservoir::gui
