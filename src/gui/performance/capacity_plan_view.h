// CapacityPlanView: a CapacityPlan in words: weights, activations, KV cache per token, blocks
// and tokens that fit, concurrency at max-model-len, the knob that binds, and a warning with the
// change that would fit (a button applies it). Beside the plan, what the loaded engine really
// took, when there is one. GUI thread only.
#pragma once

#include "engine/backend_memory.h"
#include "engine/capacity_planner.h"

#include <QWidget>

class QFormLayout;
class QLabel;
class QPushButton;

namespace brook {

class CapacityPlanView : public QWidget {
    Q_OBJECT
public:
    explicit CapacityPlanView(QWidget* parent = nullptr);

    void showPlan(const CapacityPlan& plan, const CapacityInput& input);
    void showMeasured(const BackendMemory* memory, int kvBlocks, int blockSize);  // null: no engine
    const CapacityPlan& plan() const { return m_plan; }
    QString warningText() const;
    QString bindingText() const;
    QString summaryText() const;  // every row, one per line (tests, tooltips)

    static QString formatBytes(double bytes);
    // `cpu`: the KV cache is bounded by the CPU KV-cache size, not gpu-memory-utilization.
    static QString limitName(CapacityLimit limit, bool cpu);

signals:
    void maxModelLenSuggested(int tokens);
    void gpuMemoryUtilizationSuggested(double fraction);
    void cpuKvCacheSuggested(qint64 bytes);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    void refresh();

    CapacityPlan m_plan;
    CapacityInput m_input;
    bool m_hasPlan = false;
    bool m_hasMeasured = false;
    BackendMemory m_measured;
    int m_measuredBlocks = 0, m_measuredBlockSize = 0;
    QFormLayout* m_form;
    QList<QLabel*> m_names;
    QList<QLabel*> m_values;
    QLabel* m_warning;
    QPushButton* m_fixLength;
    QPushButton* m_fixUtilization;
    QPushButton* m_fixCpuCache;
    QLabel* m_measuredLabel;
};

}  // namespace brook
