#include "gui/shell/download_dialog.h"

#include "gui/performance/serving_profile.h"
#include "gui/shell/known_models.h"

#include "gui/shell/model_panel.h"
#include "gui/shell/vector_icon_engine.h"
#include "hub/modelscope_options.h"

#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace brook {

namespace {
const char* const kHuggingFace = "https://huggingface.co";
const char* const kMirror = "https://hf-mirror.com";
}  // namespace

DownloadDialog::DownloadDialog(const QString& endpoint, QWidget* parent) : QDialog(parent)
{
    m_knownLabel = new QLabel(this);
    m_known = new QListWidget(this);
    m_known->setObjectName(QStringLiteral("knownModels"));
    m_known->setMaximumHeight(90);
    connect(m_known, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row < 0) return;
        const QStringList repos = m_known->item(row)->data(Qt::UserRole).toStringList();
        const QString repo = source() == Source::ModelScope ? repos.value(1) : repos.value(0);
        if (!repo.isEmpty()) m_repo->setText(repo);
    });
    m_repoLabel = new QLabel(this);
    m_repo = new QLineEdit(QString::fromLatin1(ModelDownloader::kDefaultRepo), this);
    m_repo->setObjectName(QStringLiteral("repoId"));
    m_sourceLabel = new QLabel(this);
    m_source = new QComboBox(this);
    m_source->setObjectName(QStringLiteral("source"));
    m_endpoint = new QLineEdit(this);
    m_endpoint->setObjectName(QStringLiteral("endpoint"));
    m_cacheLabel = new QLabel(this);
    m_cacheLabel->setWordWrap(true);
    m_cacheLabel->setForegroundRole(QPalette::PlaceholderText);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("downloadStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_start = new QPushButton(VectorIconEngine::icon(IconShape::Download), QString(), this);
    m_start->setObjectName(QStringLiteral("startDownload"));
    m_cancel = new QPushButton(VectorIconEngine::icon(IconShape::Stop), QString(), this);
    m_cancel->setObjectName(QStringLiteral("cancelDownload"));
    m_openFolder = new QPushButton(VectorIconEngine::icon(IconShape::Folder), QString(), this);
    m_openFolder->setVisible(false);
    m_close = new QPushButton(this);

    // One entry per Source, in its order; texts come from retranslateUi().
    m_source->addItems({QString(), QString(), QString(), QString()});
    const QString e = endpoint.trimmed();
    Source initial = Source::HuggingFace;
    if (e == QLatin1String(kMirror)) initial = Source::Mirror;
    else if (e == QLatin1String(ModelScopeOptions::kDefaultEndpoint)) initial = Source::ModelScope;
    else if (!e.isEmpty() && e != QLatin1String(kHuggingFace)) {
        initial = Source::CustomEndpoint;
        m_endpoint->setText(e);
    }
    m_source->setCurrentIndex(int(initial));
    handleSourceChanged();
    setKnownModels(ServingProfile::desktopDefaults(), KnownModels::hostMemoryBytes());

    connect(m_source, qOverload<int>(&QComboBox::currentIndexChanged), this, &DownloadDialog::handleSourceChanged);
    connect(m_start, &QPushButton::clicked, this, &DownloadDialog::startDownload);
    connect(m_cancel, &QPushButton::clicked, &m_downloader, &ModelDownloader::cancel);
    connect(m_openFolder, &QPushButton::clicked, this, [this] {
        emit openFolderRequested();
        accept();
    });
    connect(m_close, &QPushButton::clicked, this, &DownloadDialog::reject);
    connect(&m_downloader, &ModelDownloader::progressChanged, this, &DownloadDialog::handleProgress);
    connect(&m_downloader, &ModelDownloader::finished, this, &DownloadDialog::handleFinished);
    connect(&m_downloader, &ModelDownloader::failed, this, &DownloadDialog::handleFailed);
    connect(&m_downloader, &ModelDownloader::cancelled, this, &DownloadDialog::handleCancelled);

    auto* form = new QFormLayout;
    form->addRow(m_knownLabel, m_known);
    form->addRow(m_repoLabel, m_repo);
    form->addRow(m_sourceLabel, m_source);
    form->addRow(QString(), m_endpoint);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_openFolder);
    buttons->addStretch();
    buttons->addWidget(m_start);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_close);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_cacheLabel);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addStretch();
    layout->addLayout(buttons);
    setRunning(false);
    retranslateUi();
    resize(560, sizeHint().height());
}

void DownloadDialog::setKnownModels(const LaunchOptions& serving, qint64 hostBytes)
{
    m_known->clear();
    for (const KnownModel& model : KnownModels::list()) {
        const KnownModelFit fit = KnownModels::fit(model, serving, hostBytes);
        auto* item = new QListWidgetItem(KnownModels::describe(model, fit), m_known);
        item->setData(Qt::UserRole, QStringList{model.repo, model.modelScopeRepo});
        item->setForeground(fit.fits ? palette().color(QPalette::Text) : palette().color(QPalette::PlaceholderText));
    }
}

QString DownloadDialog::endpoint() const
{
    switch (source()) {
    case Source::Mirror: return QString::fromLatin1(kMirror);
    case Source::ModelScope: return QString::fromLatin1(ModelScopeOptions::kDefaultEndpoint);
    case Source::CustomEndpoint: return m_endpoint->text().trimmed();
    case Source::HuggingFace: break;
    }
    return QString();
}

DownloadDialog::Source DownloadDialog::source() const { return Source(std::max(0, m_source->currentIndex())); }

QString DownloadDialog::statusText() const { return m_status->text(); }

void DownloadDialog::handleSourceChanged()
{
    const Source now = source();
    m_endpoint->setVisible(now == Source::CustomEndpoint);
    // ERNIE has another id on ModelScope: swap the default id, never one the user typed.
    const bool toModelScope = now == Source::ModelScope && m_lastSource != Source::ModelScope;
    const bool fromModelScope = now != Source::ModelScope && m_lastSource == Source::ModelScope;
    const QString repo = m_repo->text().trimmed();
    if (toModelScope && (repo.isEmpty() || repo == QLatin1String(ModelDownloader::kDefaultRepo)))
        m_repo->setText(QString::fromLatin1(ModelDownloader::kDefaultModelScopeRepo));
    else if (fromModelScope && (repo.isEmpty() || repo == QLatin1String(ModelDownloader::kDefaultModelScopeRepo)))
        m_repo->setText(QString::fromLatin1(ModelDownloader::kDefaultRepo));
    m_lastSource = now;
    updateCacheLabel();
}

void DownloadDialog::updateCacheLabel()
{
    if (source() == Source::ModelScope)
        m_cacheLabel->setText(tr("Saved to the ModelScope cache: %1")
                                  .arg(QString::fromStdString(ModelDownloader::modelScopeOptions().cacheDir.string())));
    else
        m_cacheLabel->setText(
            tr("Saved to the Hugging Face cache: %1")
                .arg(QString::fromStdString(ModelDownloader::optionsFor(endpoint()).cacheDir.string())));
}

void DownloadDialog::setRunning(bool running)
{
    m_start->setEnabled(!running);
    m_cancel->setEnabled(running);
    m_repo->setEnabled(!running);
    m_source->setEnabled(!running);
    m_endpoint->setEnabled(!running);
}

void DownloadDialog::startDownload()
{
    updateCacheLabel();
    m_openFolder->setVisible(false);
    const QString repo = m_repo->text().trimmed();
    bool started = false;
    if (source() == Source::ModelScope) {
        const ModelScopeOptions options = ModelDownloader::modelScopeOptions();
        m_status->setText(tr("Connecting to %1…").arg(QString::fromStdString(options.endpoint)));
        started = m_downloader.start(repo, options);
    } else {
        const HubOptions options = ModelDownloader::optionsFor(endpoint());
        m_status->setText(tr("Connecting to %1…").arg(QString::fromStdString(options.endpoint)));
        started = m_downloader.start(repo, options);
    }
    if (started) setRunning(true);
}

void DownloadDialog::handleProgress(const DownloadStatus& s)
{
    if (s.bytesTotal > 0) {
        m_progress->setRange(0, 1000);
        m_progress->setValue(int(1000.0 * double(s.bytesDone) / double(s.bytesTotal)));
    } else {
        m_progress->setRange(0, 0);
    }
    QString text = tr("File %1 of %2: %3").arg(s.fileIndex + 1).arg(s.fileCount).arg(s.file);
    text += QLatin1Char('\n');
    text += s.bytesTotal > 0
                ? tr("%1 of %2").arg(ModelPanel::formatBytes(s.bytesDone), ModelPanel::formatBytes(s.bytesTotal))
                : ModelPanel::formatBytes(s.bytesDone);
    if (s.bytesPerSecond > 0) {
        text += QStringLiteral(" · ") + tr("%1/s").arg(ModelPanel::formatBytes(qint64(s.bytesPerSecond)));
        if (s.bytesTotal > s.bytesDone) {
            const qint64 seconds = qint64(double(s.bytesTotal - s.bytesDone) / s.bytesPerSecond);
            text += QStringLiteral(" · ") + tr("%1 min %2 s left").arg(seconds / 60).arg(seconds % 60);
        }
    }
    m_status->setText(text);
}

void DownloadDialog::handleFinished(const QString& modelDir)
{
    setRunning(false);
    m_folder = modelDir;
    m_progress->setRange(0, 1000);
    m_progress->setValue(1000);
    m_status->setText(tr("Downloaded to %1").arg(modelDir));
    emit modelDownloaded(modelDir);
}

void DownloadDialog::handleFailed(const QString& message)
{
    setRunning(false);
    m_progress->setRange(0, 1000);
    if (ModelDownloader::isOfflineError(message)) {
        m_status->setText(
            tr("The model source cannot be reached: this computer seems to be offline, or the site is "
               "blocked. Try another source (a mirror or ModelScope), or open a model folder you already have.") +
            QStringLiteral("\n\n") + message);
        m_openFolder->setVisible(true);
    } else {
        m_status->setText(tr("The download failed: %1").arg(message));
    }
}

void DownloadDialog::handleCancelled()
{
    setRunning(false);
    m_status->setText(tr("Cancelled. What was downloaded is kept: Download resumes from there."));
}

void DownloadDialog::reject()
{
    if (m_downloader.isRunning()) m_downloader.cancel();
    QDialog::reject();
}

void DownloadDialog::retranslateUi()
{
    setWindowTitle(tr("Download a model"));
    m_knownLabel->setText(tr("Known to run:"));
    m_repoLabel->setText(tr("Model:"));
    m_sourceLabel->setText(tr("Source:"));
    m_source->setItemText(int(Source::HuggingFace), tr("Hugging Face (huggingface.co)"));
    m_source->setItemText(int(Source::Mirror), tr("Mirror (hf-mirror.com)"));
    m_source->setItemText(int(Source::ModelScope), tr("ModelScope (modelscope.cn)"));
    m_source->setItemText(int(Source::CustomEndpoint), tr("Other endpoint (HF_ENDPOINT)"));
    m_endpoint->setPlaceholderText(tr("https://your-mirror.example"));
    m_start->setText(tr("Download"));
    m_cancel->setText(tr("Cancel"));
    m_openFolder->setText(tr("Open a local folder instead…"));
    m_close->setText(tr("Close"));
    updateCacheLabel();
}

void DownloadDialog::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QDialog::changeEvent(event);
}

}  // namespace brook
