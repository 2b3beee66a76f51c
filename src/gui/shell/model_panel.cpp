#include "gui/shell/model_panel.h"

#include "gui/shell/vector_icon_engine.h"

#include <QDir>
#include <QEvent>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace brook {

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent)
{
    m_logo = new QLabel(this);
    m_logo->setPixmap(VectorIconEngine::icon(IconShape::Logo).pixmap(QSize(72, 72)));
    m_logo->setAlignment(Qt::AlignCenter);
    m_title = new QLabel(this);
    QFont f = m_title->font();
    f.setPointSizeF(f.pointSizeF() * 1.6);
    f.setBold(true);
    m_title->setFont(f);
    m_title->setAlignment(Qt::AlignCenter);
    m_intro = new QLabel(this);
    m_intro->setWordWrap(true);
    m_intro->setAlignment(Qt::AlignCenter);
    m_download = new QPushButton(VectorIconEngine::icon(IconShape::Download), QString(), this);
    m_download->setObjectName(QStringLiteral("downloadModel"));
    m_open = new QPushButton(VectorIconEngine::icon(IconShape::Folder), QString(), this);
    m_open->setObjectName(QStringLiteral("openModelFolder"));
    for (QPushButton* b : {m_download, m_open}) {
        b->setMinimumHeight(36);
        b->setIconSize(QSize(20, 20));
    }
    m_recentLabel = new QLabel(this);
    m_recent = new QListWidget(this);
    m_recent->setObjectName(QStringLiteral("recentModels"));
    m_recent->setMaximumHeight(140);
    m_stageLabel = new QLabel(this);
    m_stageLabel->setObjectName(QStringLiteral("loadStage"));
    m_progress = new QProgressBar(this);
    m_estimateLabel = new QLabel(this);
    m_estimateLabel->setWordWrap(true);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("loadError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("color: #d9534f;"));

    connect(m_download, &QPushButton::clicked, this, &ModelPanel::downloadRequested);
    connect(m_open, &QPushButton::clicked, this, &ModelPanel::openFolderRequested);
    connect(m_recent, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit recentModelRequested(item->data(Qt::UserRole).toString()); });

    auto* column = new QVBoxLayout;
    column->setSpacing(10);
    column->addStretch(1);
    column->addWidget(m_logo);
    column->addWidget(m_title);
    column->addWidget(m_intro);
    column->addSpacing(8);
    column->addWidget(m_download);
    column->addWidget(m_open);
    column->addSpacing(8);
    column->addWidget(m_recentLabel);
    column->addWidget(m_recent);
    column->addWidget(m_stageLabel);
    column->addWidget(m_progress);
    column->addWidget(m_estimateLabel);
    column->addWidget(m_error);
    column->addStretch(2);
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    outer->addLayout(column, 3);
    outer->addStretch(1);
    showIdle();
    retranslateUi();
}

QString ModelPanel::formatBytes(qint64 bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

QString ModelPanel::stageName(EngineHost::Stage stage)
{
    switch (stage) {
    case EngineHost::Stage::Checking: return tr("Checking the model folder…");
    case EngineHost::Stage::Loading: return tr("Reading weights and allocating the KV cache…");
    case EngineHost::Stage::WarmingUp: return tr("Warming up…");
    case EngineHost::Stage::Ready: return tr("Ready");
    }
    return {};
}

void ModelPanel::setRecentModels(const QStringList& dirs)
{
    m_recent->clear();
    for (const QString& dir : dirs) {
        auto* item = new QListWidgetItem(VectorIconEngine::icon(IconShape::Folder), QDir(dir).dirName(), m_recent);
        item->setToolTip(dir);
        item->setData(Qt::UserRole, dir);
    }
    m_recent->setVisible(!dirs.isEmpty());
    m_recentLabel->setVisible(!dirs.isEmpty());
}

void ModelPanel::showLoading(EngineHost::Stage stage, int percent)
{
    m_loading = stage != EngineHost::Stage::Ready;
    m_stage = stage;
    m_error->clear();
    m_error->setVisible(false);
    m_stageLabel->setText(stageName(stage));
    m_stageLabel->setVisible(true);
    m_progress->setVisible(true);
    if (percent < 0) m_progress->setRange(0, 0);  // busy: the loader has no finer progress
    else {
        m_progress->setRange(0, 100);
        m_progress->setValue(percent);
    }
    m_download->setEnabled(!m_loading);
    m_open->setEnabled(!m_loading);
    m_recent->setEnabled(!m_loading);
}

void ModelPanel::showEstimate(const MemoryEstimate& e)
{
    m_estimate = e;
    retranslateUi();
    m_estimateLabel->setVisible(true);
}

void ModelPanel::showError(const QString& message)
{
    showIdle();
    m_error->setText(message);
    m_error->setVisible(true);
}

void ModelPanel::showIdle()
{
    m_loading = false;
    m_stageLabel->setVisible(false);
    m_progress->setVisible(false);
    m_estimateLabel->setVisible(false);
    m_error->setVisible(false);
    m_download->setEnabled(true);
    m_open->setEnabled(true);
    m_recent->setEnabled(true);
}

QString ModelPanel::errorText() const { return m_error->isVisible() ? m_error->text() : QString(); }
QString ModelPanel::stageText() const { return m_stageLabel->isVisible() ? m_stageLabel->text() : QString(); }

void ModelPanel::retranslateUi()
{
    m_title->setText(tr("Welcome to Brook"));
    m_intro->setText(tr("Brook runs ERNIE-4.5 on this computer: nothing you type leaves it. "
                        "Download the model (about 0.7 GB) or open a model folder you already have."));
    m_download->setText(tr("Download ERNIE-4.5-0.3B-PT…"));
    m_open->setText(tr("Open a model folder…"));
    m_recentLabel->setText(tr("Recent models (double-click to load):"));
    if (m_stageLabel->isVisible()) m_stageLabel->setText(stageName(m_stage));
    if (m_estimate.weightsBytes > 0) {
        QString text =
            m_estimate.kvCacheBytes > 0
                ? tr("This will take about %1 for the weights and %2 for the KV cache (%3).")
                      .arg(formatBytes(m_estimate.weightsBytes), formatBytes(m_estimate.kvCacheBytes),
                           m_estimate.device.toUpper())
                : tr("This will take about %1 for the weights, and most of the free GPU memory for the KV cache (%2).")
                      .arg(formatBytes(m_estimate.weightsBytes), m_estimate.device.toUpper());
        m_estimateLabel->setText(text);
    }
}

void ModelPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
