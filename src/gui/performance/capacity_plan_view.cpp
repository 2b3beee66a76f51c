#include "gui/performance/capacity_plan_view.h"

#include "gui/performance/capacity_advisor.h"
#include "gui/shell/gui_terms.h"

#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

namespace brook {

namespace {
constexpr int kRows = 9;
}

CapacityPlanView::CapacityPlanView(QWidget* parent) : QWidget(parent)
{
    m_form = new QFormLayout;
    m_form->setLabelAlignment(Qt::AlignLeft);
    for (int i = 0; i < kRows; ++i) {
        auto* name = new QLabel(this);
        auto* value = new QLabel(this);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        value->setObjectName(QStringLiteral("planValue%1").arg(i));
        m_names << name;
        m_values << value;
        m_form->addRow(name, value);
    }
    QFont bold = m_values[8]->font();
    bold.setBold(true);
    m_values[8]->setFont(bold);
    m_warning = new QLabel(this);
    m_warning->setObjectName(QStringLiteral("planWarning"));
    m_warning->setWordWrap(true);
    m_warning->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_fixLength = new QPushButton(this);
    m_fixUtilization = new QPushButton(this);
    m_fixCpuCache = new QPushButton(this);
    m_fixLength->setObjectName(QStringLiteral("planFixLength"));
    m_fixUtilization->setObjectName(QStringLiteral("planFixUtilization"));
    m_fixCpuCache->setObjectName(QStringLiteral("planFixCpuCache"));
    m_measuredLabel = new QLabel(this);
    m_measuredLabel->setObjectName(QStringLiteral("planMeasured"));
    m_measuredLabel->setWordWrap(true);
    m_measuredLabel->setStyleSheet(QStringLiteral("color: palette(mid);"));

    auto* fixes = new QHBoxLayout;
    fixes->addWidget(m_fixUtilization);
    fixes->addWidget(m_fixLength);
    fixes->addWidget(m_fixCpuCache);
    fixes->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(m_form);
    layout->addWidget(m_warning);
    layout->addLayout(fixes);
    layout->addWidget(m_measuredLabel);
    layout->addStretch(1);

    connect(m_fixLength, &QPushButton::clicked, this,
            [this] { emit maxModelLenSuggested(m_plan.suggestedMaxModelLen); });
    connect(m_fixUtilization, &QPushButton::clicked, this,
            [this] { emit gpuMemoryUtilizationSuggested(m_plan.suggestedGpuMemoryUtilization); });
    connect(m_fixCpuCache, &QPushButton::clicked, this,
            [this] { emit cpuKvCacheSuggested(m_plan.suggestedCpuKvCacheBytes); });
    retranslateUi();
}

QString CapacityPlanView::formatBytes(double bytes)
{
    const QLocale locale;
    if (bytes >= 1024.0 * 1024 * 1024) return tr("%1 GiB").arg(locale.toString(bytes / (1024.0 * 1024 * 1024), 'f', 2));
    if (bytes >= 1024.0 * 1024) return tr("%1 MiB").arg(locale.toString(bytes / (1024.0 * 1024), 'f', 1));
    if (bytes >= 1024.0) return tr("%1 KiB").arg(locale.toString(bytes / 1024.0, 'f', 1));
    return tr("%1 bytes").arg(locale.toString(qint64(bytes)));
}

QString CapacityPlanView::limitName(CapacityLimit limit, bool cpu)
{
    switch (limit) {
    case CapacityLimit::MaxNumSeqs: return tr("max-num-seqs");
    case CapacityLimit::KvCache:
        return cpu ? tr("KV-cache memory (CPU KV cache, max-model-len)")
                   : tr("KV-cache memory (gpu-memory-utilization, max-model-len)");
    case CapacityLimit::MaxNumBatchedTokens: return tr("max-num-batched-tokens");
    }
    return {};
}

void CapacityPlanView::showPlan(const CapacityPlan& plan, const CapacityInput& input)
{
    m_plan = plan;
    m_input = input;
    m_hasPlan = true;
    refresh();
}

void CapacityPlanView::showMeasured(const BackendMemory* memory, int kvBlocks, int blockSize)
{
    m_hasMeasured = memory != nullptr;
    if (memory) m_measured = *memory;
    m_measuredBlocks = kvBlocks;
    m_measuredBlockSize = blockSize;
    refresh();
}

QString CapacityPlanView::warningText() const { return m_warning->isHidden() ? QString() : m_warning->text(); }
QString CapacityPlanView::bindingText() const { return m_values[8]->text(); }

QString CapacityPlanView::summaryText() const
{
    QStringList lines;
    for (int i = 0; i < kRows; ++i) lines << m_names[i]->text() + QLatin1Char(' ') + m_values[i]->text();
    if (!m_warning->text().isEmpty()) lines << m_warning->text();
    return lines.join(QLatin1Char('\n'));
}

void CapacityPlanView::refresh()
{
    if (!m_hasPlan) return;
    const QLocale locale;
    const CapacityPlan& p = m_plan;
    const bool cpu = m_input.device == "cpu";
    const QString dtype = p.elementBytes == 4 ? QStringLiteral("fp32") : QStringLiteral("bf16/fp16");
    m_values[0]->setText(
        tr("%1 (%2 M parameters%3)")
            .arg(formatBytes(double(p.weightsBytes)), locale.toString(double(p.parameters) / 1e6, 'f', 1),
                 m_input.quantization.empty() ? QStringLiteral(", ") + dtype
                                              : QStringLiteral(", ") + QString::fromStdString(m_input.quantization)));
    m_values[1]->setText(formatBytes(double(p.activationBytes)));
    m_values[2]->setText(cpu                ? tr("none (CPU)")
                         : p.graphBytes > 0 ? formatBytes(double(p.graphBytes))
                                            : tr("off (enforce-eager)"));
    m_values[3]->setText(
        cpu ? tr("%1 of host memory offered to the KV cache").arg(formatBytes(double(p.budgetBytes)))
            : tr("%1 of %2 (utilization %3)")
                  .arg(formatBytes(double(p.budgetBytes)), formatBytes(double(m_input.deviceTotalBytes)))
                  .arg(m_input.gpuMemoryUtilization, 0, 'f', 2));
    m_values[4]->setText(tr("%1 bytes per token (%2 per block of %3 tokens)")
                             .arg(locale.toString(qint64(p.kvBytesPerToken)), formatBytes(double(p.kvBytesPerBlock)))
                             .arg(m_input.blockSize));
    m_values[5]->setText(tr("%1: %2 blocks, %3 tokens")
                             .arg(formatBytes(double(p.kvCacheBytes)), locale.toString(qint64(p.kvBlocks)),
                                  locale.toString(qint64(p.kvTokens))));
    m_values[6]->setText(tr("%1× for %2 tokens per request")
                             .arg(locale.toString(p.maxConcurrency, 'f', 2), locale.toString(p.maxModelLen)));
    m_values[7]->setText(
        tr("%1 (the cache holds %2 full-length requests)").arg(p.concurrentSequences).arg(p.fullLengthSequences));
    m_values[8]->setText(limitName(p.binding, cpu));

    QString warning;
    switch (p.problem) {
    case CapacityProblem::None: break;
    case CapacityProblem::QuantizationDoesNotApply:
        warning = tr("Quantization %1 does not suit this model: %2. Choose another under Quantization.")
                      .arg(QString::fromStdString(m_input.quantization),
                           GuiTerms::fromCli(QString::fromStdString(p.quantizationError)));
        break;
    case CapacityProblem::ModelLenTooLong:
        warning = tr("max-model-len %1 is longer than the model's context of %2 tokens.")
                      .arg(p.maxModelLen)
                      .arg(p.suggestedMaxModelLen);
        break;
    case CapacityProblem::NoDeviceMemory: warning = tr("Enter the GPU's memory to plan for."); break;
    case CapacityProblem::WeightsDoNotFit:
        warning = tr("Weights, activations and graphs (%1) do not fit in %2.")
                      .arg(formatBytes(double(p.weightsBytes + p.activationBytes + p.graphBytes)),
                           formatBytes(double(p.budgetBytes)));
        break;
    case CapacityProblem::KvCacheTooSmall:
        warning = tr("The KV cache holds %1 tokens, but one request of max-model-len needs %2: this will not load.")
                      .arg(locale.toString(qint64(p.kvTokens)), locale.toString(p.maxModelLen));
        break;
    }
    if (p.problem == CapacityProblem::WeightsDoNotFit || p.problem == CapacityProblem::KvCacheTooSmall) {
        // Besides the one-value fixes (buttons below), the other knobs that would fit on their own.
        const QStringList others = CapacityAdvisor::alternativesThatFit(m_input);
        const bool buttons =
            p.suggestedGpuMemoryUtilization > 0 || p.suggestedMaxModelLen > 0 || p.suggestedCpuKvCacheBytes > 0;
        if (!others.isEmpty())
            warning += QLatin1Char(' ') + tr("These would also fit, each on its own: %1.").arg(others.join(tr(", ")));
        else if (!buttons)
            warning += QLatin1Char(' ') + (cpu ? tr("No setting here makes it fit: this model needs more memory.")
                                               : tr("No setting here makes it fit: choose a larger GPU."));
    }
    m_warning->setText(warning);
    m_warning->setVisible(!warning.isEmpty());
    m_fixUtilization->setVisible(p.suggestedGpuMemoryUtilization > 0);
    m_fixUtilization->setText(tr("Use gpu-memory-utilization %1").arg(p.suggestedGpuMemoryUtilization, 0, 'f', 2));
    m_fixLength->setVisible(p.suggestedMaxModelLen > 0);
    m_fixLength->setText(tr("Use max-model-len %1").arg(locale.toString(p.suggestedMaxModelLen)));
    m_fixCpuCache->setVisible(p.suggestedCpuKvCacheBytes > 0);
    m_fixCpuCache->setText(tr("Use a CPU KV cache of %1").arg(formatBytes(double(p.suggestedCpuKvCacheBytes))));

    if (m_hasMeasured) {
        m_measuredLabel->setText(
            tr("The loaded engine: weights %1, KV cache %2 (%3 blocks of %4 tokens), activations %5.")
                .arg(formatBytes(double(m_measured.weightsBytes)), formatBytes(double(m_measured.kvCacheBytes)),
                     locale.toString(m_measuredBlocks))
                .arg(m_measuredBlockSize)
                .arg(formatBytes(double(m_measured.activationsBytes))));
    } else {
        m_measuredLabel->setText(tr("No engine loaded: the plan is an estimate from the model's shape."));
    }
}

void CapacityPlanView::retranslateUi()
{
    const QStringList names = {tr("Weights:"),
                               tr("Activations and workspace:"),
                               tr("CUDA graphs:"),
                               tr("Memory budget:"),
                               tr("KV cache per token:"),
                               tr("KV cache:"),
                               tr("Maximum concurrency:"),
                               tr("Requests at once:"),
                               tr("Binding knob:")};
    for (int i = 0; i < kRows; ++i) m_names[i]->setText(names[i]);
    refresh();
}

void CapacityPlanView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
