// RequestInspector: a live table of the engine's requests (Engine::requests(), polled every
// kIntervalMs): id, source (chat pane, API client, load generator), phase (queued, prefill, decode,
// preempted), prompt and generated tokens, time in each phase, and a cancel button per request
// (Engine::cancel: the request ends with finish reason "abort" wherever it came from).
// Rows are updated in place, keyed by request id, so a button under the pointer stays put.
// GUI thread only.
#pragma once

#include "engine/request.h"

#include <QWidget>

#include <vector>

class QLabel;
class QTableWidget;
class QTimer;

namespace brook {

class Engine;

class RequestInspector : public QWidget {
    Q_OBJECT
public:
    static constexpr int kIntervalMs = 500;
    enum Column {
        Id,
        Source,
        Phase,
        PromptTokens,
        GeneratedTokens,
        Queued,
        Prefill,
        Decode,
        Preempted,
        Cancel,
        ColumnCount
    };

    explicit RequestInspector(QWidget* parent = nullptr);

    void setEngine(Engine* engine);
    QTableWidget* table() const { return m_table; }
    int rowFor(RequestId id) const;    // -1: not shown
    bool cancelRequest(RequestId id);  // clicks the row's button
    static QString phaseName(RequestPhase phase);
    static QString sourceName(const QString& source);

public slots:
    void refresh();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    void fillRow(int row, const RequestSnapshot& request);

    Engine* m_engine = nullptr;
    std::vector<RequestSnapshot> m_shown;
    QTableWidget* m_table;
    QLabel* m_summary;
    QTimer* m_timer;
};

}  // namespace brook
