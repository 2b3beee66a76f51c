#include "gui/performance/request_inspector.h"

#include "engine/engine.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace brook {

RequestInspector::RequestInspector(QWidget* parent) : QWidget(parent)
{
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("requestTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    // The buttons are cell widgets, which ResizeToContents does not measure: the column gets
    // their width (retranslateUi) and keeps it.
    m_table->horizontalHeader()->setSectionResizeMode(Cancel, QHeaderView::Fixed);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("requestSummary"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
    m_timer = new QTimer(this);
    m_timer->setInterval(kIntervalMs);
    connect(m_timer, &QTimer::timeout, this, [this] {
        if (isVisible()) refresh();  // nobody looks at a hidden table
    });
    m_timer->start();
    retranslateUi();
}

void RequestInspector::setEngine(Engine* engine)
{
    m_engine = engine;
    refresh();
}

QString RequestInspector::phaseName(RequestPhase phase)
{
    switch (phase) {
    case RequestPhase::Queued: return tr("queued");
    case RequestPhase::Prefill: return tr("prefill");
    case RequestPhase::Decode: return tr("decode");
    case RequestPhase::Preempted: return tr("preempted");
    }
    return {};
}

QString RequestInspector::sourceName(const QString& source)
{
    if (source == QLatin1String("chat")) return tr("chat pane");
    if (source == QLatin1String("api")) return tr("API client");
    if (source == QLatin1String("warmup")) return tr("warm-up");
    if (source.isEmpty()) return tr("unknown");
    return source;
}

int RequestInspector::rowFor(RequestId id) const
{
    for (size_t i = 0; i < m_shown.size(); ++i)
        if (m_shown[i].id == id) return int(i);
    return -1;
}

bool RequestInspector::cancelRequest(RequestId id)
{
    const int row = rowFor(id);
    if (row < 0) return false;
    auto* button = qobject_cast<QPushButton*>(m_table->cellWidget(row, Cancel));
    if (!button || !button->isEnabled()) return false;
    button->click();
    return true;
}

void RequestInspector::fillRow(int row, const RequestSnapshot& r)
{
    const QLocale locale;
    auto set = [&](int column, const QString& text, bool number) {
        QTableWidgetItem* item = m_table->item(row, column);
        if (!item) {
            item = new QTableWidgetItem;
            m_table->setItem(row, column, item);
        }
        item->setText(text);
        item->setTextAlignment(number ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    };
    auto seconds = [&](RequestPhase p) { return locale.toString(r.secondsIn(p), 'f', 2); };
    set(Id, QString::number(r.id), true);
    set(Source, sourceName(QString::fromStdString(r.source)), false);
    set(Phase, phaseName(r.phase), false);
    set(PromptTokens, locale.toString(r.promptTokens), true);
    set(GeneratedTokens, locale.toString(r.generatedTokens), true);
    set(Queued, seconds(RequestPhase::Queued), true);
    set(Prefill, seconds(RequestPhase::Prefill), true);
    set(Decode, seconds(RequestPhase::Decode), true);
    set(Preempted,
        r.preemptions > 0 ? tr("%1 (%2×)").arg(seconds(RequestPhase::Preempted)).arg(r.preemptions)
                          : seconds(RequestPhase::Preempted),
        true);
    auto* button = qobject_cast<QPushButton*>(m_table->cellWidget(row, Cancel));
    if (!button || button->property("requestId").toULongLong() != r.id) {
        button = new QPushButton(tr("Cancel"), m_table);
        button->setProperty("requestId", QVariant::fromValue<qulonglong>(r.id));
        const RequestId id = r.id;
        connect(button, &QPushButton::clicked, this, [this, id, button] {
            if (m_engine) m_engine->cancel(id);
            button->setEnabled(false);
            button->setText(tr("Cancelling…"));
        });
        m_table->setCellWidget(row, Cancel, button);
    }
}

void RequestInspector::refresh()
{
    std::vector<RequestSnapshot> requests = m_engine ? m_engine->requests() : std::vector<RequestSnapshot>();
    // The engine's own warm-up is no one's request.
    std::erase_if(requests, [](const RequestSnapshot& r) { return r.source == "warmup"; });
    m_table->setRowCount(int(requests.size()));
    for (size_t i = 0; i < requests.size(); ++i) fillRow(int(i), requests[i]);
    m_shown = std::move(requests);
    int counts[kNumRequestPhases] = {};
    for (const RequestSnapshot& r : m_shown) ++counts[int(r.phase)];
    m_summary->setText(m_engine ? tr("%1 requests: %2 queued, %3 in prefill, %4 decoding, %5 preempted")
                                      .arg(m_shown.size())
                                      .arg(counts[int(RequestPhase::Queued)])
                                      .arg(counts[int(RequestPhase::Prefill)])
                                      .arg(counts[int(RequestPhase::Decode)])
                                      .arg(counts[int(RequestPhase::Preempted)])
                                : tr("No model loaded."));
}

void RequestInspector::retranslateUi()
{
    m_table->setHorizontalHeaderLabels({tr("ID"), tr("Source"), tr("State"), tr("Prompt tokens"), tr("Generated"),
                                        tr("Queued (s)"), tr("Prefill (s)"), tr("Decode (s)"), tr("Preempted (s)"),
                                        QString()});
    for (int row = 0; row < m_table->rowCount(); ++row)
        if (auto* b = qobject_cast<QPushButton*>(m_table->cellWidget(row, Cancel)); b && b->isEnabled())
            b->setText(tr("Cancel"));
    QPushButton probe;
    int width = 0;
    for (const QString& text : {tr("Cancel"), tr("Cancelling…")}) {
        probe.setText(text);
        width = std::max(width, probe.sizeHint().width());
    }
    m_table->setColumnWidth(Cancel, width + 8);
    refresh();
}

void RequestInspector::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
