#include "gui/performance/performance_dashboard.h"

#include "engine/engine.h"
#include "gui/performance/remote_metrics_source.h"
#include "gui/performance/time_series_chart.h"

#include <QComboBox>
#include <QDateTime>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace brook {

namespace {

double nowSeconds() { return double(QDateTime::currentMSecsSinceEpoch()) / 1000.0; }

using F = DashboardField;
const QColor kBlue(0x4e, 0x79, 0xa7), kGreen(0x59, 0xa1, 0x4f), kOrange(0xf2, 0x8e, 0x2b), kGrey(0xba, 0xb0, 0xac),
    kRed(0xe1, 0x57, 0x59), kPurple(0xb0, 0x7a, 0xa1), kTeal(0x76, 0xb7, 0xb2), kBrown(0x9c, 0x75, 0x5f);

}  // namespace

PerformanceDashboard::PerformanceDashboard(QWidget* parent) : QWidget(parent)
{
    m_remote = new RemoteMetricsSource(this);
    connect(m_remote, &RemoteMetricsSource::snapshotReady, this, &PerformanceDashboard::handleRemoteSnapshot);
    connect(m_remote, &RemoteMetricsSource::healthChanged, this, [this](bool healthy, int status) {
        m_remoteState = healthy ? tr("healthy") : tr("not ready (HTTP %1)").arg(status);
        updateStatus();
    });
    connect(m_remote, &RemoteMetricsSource::failed, this, [this](const QString& message) {
        m_remoteState = message;
        updateStatus();
    });

    m_sourceBox = new QComboBox(this);
    m_sourceBox->setObjectName(QStringLiteral("dashboardSource"));
    m_sourceBox->addItems({QString(), QString()});
    m_url = new QLineEdit(QStringLiteral("http://127.0.0.1:8000"), this);
    m_url->setObjectName(QStringLiteral("dashboardUrl"));
    m_apiKey = new QLineEdit(this);
    m_apiKey->setEchoMode(QLineEdit::Password);
    m_connect = new QPushButton(this);
    m_windowBox = new QComboBox(this);
    m_windowBox->setObjectName(QStringLiteral("dashboardWindow"));
    m_windowBox->addItems({QString(), QString(), QString()});
    m_windowBox->setCurrentIndex(1);
    m_pause = new QToolButton(this);
    m_pause->setObjectName(QStringLiteral("dashboardPause"));
    m_pause->setCheckable(true);
    m_csv = new QPushButton(this);
    m_png = new QPushButton(this);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("dashboardStatus"));
    m_status->setWordWrap(true);

    // Two rows, what is watched and how it is shown: one row of all eight was wider than a small
    // screen.
    auto* source = new QHBoxLayout;
    source->addWidget(m_sourceBox);
    source->addWidget(m_url, 2);
    source->addWidget(m_apiKey, 1);
    source->addWidget(m_connect);
    auto* view = new QHBoxLayout;
    view->addWidget(m_windowBox);
    view->addWidget(m_pause);
    view->addWidget(m_csv);
    view->addWidget(m_png);
    view->addStretch(1);
    auto* bar = new QVBoxLayout;
    bar->addLayout(source);
    bar->addLayout(view);

    const QList<QList<TimeSeriesChart::Line>> specs = {
        {{F::WeightsGiB, kBlue}, {F::KvCacheGiB, kGreen}, {F::ActivationsGiB, kOrange}, {F::FreeGiB, kGrey}},
        {{F::KvCacheUsagePercent, kGreen}, {F::PrefixCacheHitPercent, kPurple}},
        {{F::Running, kBlue}, {F::Waiting, kOrange}, {F::PreemptionsPerSecond, kRed}},
        {{F::TtftP50Ms, kBlue}, {F::TtftP95Ms, kBlue, true}, {F::E2eP50Ms, kPurple}, {F::E2eP95Ms, kPurple, true}},
        {{F::ItlP50Ms, kTeal}, {F::ItlP95Ms, kTeal, true}},
        {{F::PromptTokensPerSecond, kBrown}, {F::GenerationTokensPerSecond, kBlue}},
    };
    m_grid = new QWidget(this);
    auto* grid = new QGridLayout(m_grid);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(4);
    for (int i = 0; i < specs.size(); ++i) {
        auto* chart = new TimeSeriesChart(specs[i], i == 0, m_grid);
        m_charts << chart;
        grid->addWidget(chart, i / 3, i % 3);
    }
    m_charts[1]->setFixedMaximum(100);
    m_charts[0]->setUnit(QStringLiteral("GiB"), 2);
    m_charts[1]->setUnit(QStringLiteral("%"), 1);
    m_charts[2]->setUnit(QString(), 1);
    m_charts[3]->setUnit(QStringLiteral("ms"), 1);
    m_charts[4]->setUnit(QStringLiteral("ms"), 2);
    m_charts[5]->setUnit(QString(), 0);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(m_status);
    layout->addWidget(m_grid, 1);

    connect(m_sourceBox, &QComboBox::currentIndexChanged, this, &PerformanceDashboard::handleSourceChanged);
    connect(m_connect, &QPushButton::clicked, this, [this] { watchRemote(m_url->text(), m_apiKey->text()); });
    connect(m_url, &QLineEdit::returnPressed, m_connect, &QPushButton::click);
    connect(m_windowBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        setWindowSeconds(i == 0 ? 60 : i == 1 ? 300 : 1800);
    });
    connect(m_pause, &QToolButton::toggled, this, &PerformanceDashboard::setPaused);
    connect(m_csv, &QPushButton::clicked, this, &PerformanceDashboard::handleExportCsv);
    connect(m_png, &QPushButton::clicked, this, &PerformanceDashboard::handleExportPng);

    m_timer = new QTimer(this);
    m_timer->setInterval(kIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &PerformanceDashboard::pollNow);
    m_timer->start();
    retranslateUi();
    handleSourceChanged(0);
}

void PerformanceDashboard::setEngine(Engine* engine)
{
    m_engine = engine;
    if (m_source == Source::LocalEngine) pollNow();
}

void PerformanceDashboard::watchLocal()
{
    if (m_source != Source::LocalEngine) m_series.clear();
    m_source = Source::LocalEngine;
    m_sourceBox->setCurrentIndex(0);
    pollNow();
}

void PerformanceDashboard::watchRemote(const QString& baseUrl, const QString& apiKey)
{
    m_series.clear();
    m_source = Source::Remote;
    m_url->setText(baseUrl);
    m_apiKey->setText(apiKey);
    m_sourceBox->setCurrentIndex(1);
    m_remote->setServer(baseUrl, apiKey);
    m_remoteState = tr("connecting…");
    redraw();
    pollNow();
}

void PerformanceDashboard::handleSourceChanged(int index)
{
    const bool remote = index == 1;
    m_url->setVisible(remote);
    m_apiKey->setVisible(remote);
    m_connect->setVisible(remote);
    if (!remote && m_source == Source::Remote) watchLocal();
}

void PerformanceDashboard::pollNow()
{
    if (m_source == Source::Remote) {
        m_remote->poll();  // the snapshot arrives as a signal
        return;
    }
    if (!m_engine) {
        updateStatus();
        return;
    }
    addSample(MetricsSnapshot::fromEngineStats(m_engine->stats(), nowSeconds()));
}

void PerformanceDashboard::handleRemoteSnapshot(const MetricsSnapshot& snapshot)
{
    if (m_source == Source::Remote) addSample(snapshot);
}

void PerformanceDashboard::addSample(const MetricsSnapshot& snapshot)
{
    m_series.append(snapshot);
    // The status line's hit rate is the server's since it started; the chart's, per interval.
    m_prefixCacheHitRate.reset();
    if (snapshot.prefixCacheQueriesTotal && snapshot.prefixCacheHitsTotal && *snapshot.prefixCacheQueriesTotal > 0)
        m_prefixCacheHitRate = *snapshot.prefixCacheHitsTotal / *snapshot.prefixCacheQueriesTotal;
    // Hidden, it keeps sampling (the history is there when it opens) but draws nothing.
    if (!m_paused && isVisible()) redraw();
    updateStatus();
    emit sampleAdded();
}

void PerformanceDashboard::redraw()
{
    const double to = m_series.latest() ? std::max(m_series.latest()->timeSeconds, nowSeconds()) : nowSeconds();
    const double from = to - m_windowSeconds;
    const std::vector<DashboardSample> shown = m_series.since(from);
    // A small model on the CPU takes megabytes: draw memory in MiB then.
    double peakGiB = 0;
    for (const DashboardSample& s : shown)
        peakGiB = std::max(peakGiB, s.value(F::WeightsGiB).value_or(0) + s.value(F::KvCacheGiB).value_or(0) +
                                        s.value(F::ActivationsGiB).value_or(0) + s.value(F::FreeGiB).value_or(0));
    const bool mebibytes = peakGiB < 1.0;
    m_charts[0]->setScale(mebibytes ? 1024.0 : 1.0);
    m_charts[0]->setUnit(mebibytes ? QStringLiteral("MiB") : QStringLiteral("GiB"), mebibytes ? 1 : 2);
    m_charts[0]->setTitle(mebibytes ? tr("Memory (MiB)") : tr("Memory (GiB)"));
    for (TimeSeriesChart* chart : m_charts) chart->redraw(shown, from, to);
}

void PerformanceDashboard::setWindowSeconds(int seconds)
{
    m_windowSeconds = seconds <= 60 ? 60 : seconds <= 300 ? 300 : 1800;
    const int index = m_windowSeconds == 60 ? 0 : m_windowSeconds == 300 ? 1 : 2;
    if (m_windowBox->currentIndex() != index) m_windowBox->setCurrentIndex(index);
    redraw();
}

void PerformanceDashboard::setPaused(bool paused)
{
    m_paused = paused;
    if (m_pause->isChecked() != paused) m_pause->setChecked(paused);
    m_pause->setText(paused ? tr("Resume") : tr("Pause"));
    if (!paused) redraw();
    updateStatus();
}

QString PerformanceDashboard::statusText() const { return m_status->text(); }

void PerformanceDashboard::updateStatus()
{
    QString text;
    if (m_source == Source::Remote) {
        const QString model = m_remote->modelName();
        text = tr("Watching %1").arg(m_remote->server().toString());
        if (!model.isEmpty()) text += QStringLiteral(" (%1)").arg(model);
        if (!m_remoteState.isEmpty()) text += QStringLiteral(" · ") + m_remoteState;
    } else if (!m_engine) {
        text = tr("No model loaded: load one, or watch a remote server.");
    } else {
        text = tr("This app's engine (%1)").arg(QString::fromStdString(m_engine->config().modelName));
    }
    if (const auto last = m_series.latest()) {
        const QLocale locale;
        text += QStringLiteral(" · ") +
                tr("%1 running · %2 waiting · KV cache %3% · %4 tokens/s")
                    .arg(last->value(F::Running).value_or(0))
                    .arg(last->value(F::Waiting).value_or(0))
                    .arg(last->value(F::KvCacheUsagePercent).value_or(0), 0, 'f', 1)
                    .arg(locale.toString(last->value(F::GenerationTokensPerSecond).value_or(0), 'f', 0));
        if (m_prefixCacheHitRate)
            text +=
                QStringLiteral(" · ") + tr("prefix cache hit rate %1%").arg(*m_prefixCacheHitRate * 100.0, 0, 'f', 1);
    }
    if (m_paused) text += QStringLiteral(" · ") + tr("paused");
    m_status->setText(text);
}

bool PerformanceDashboard::exportCsv(const QString& path, QString* error) const
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error) *error = file.errorString();
        return false;
    }
    const std::string csv = m_series.toCsv();
    if (file.write(csv.data(), qint64(csv.size())) != qint64(csv.size())) {
        if (error) *error = file.errorString();
        return false;
    }
    return true;
}

bool PerformanceDashboard::exportPng(const QString& path) const { return m_grid->grab().save(path, "PNG"); }

void PerformanceDashboard::handleExportCsv()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Export the dashboard as CSV"),
                                                      QStringLiteral("brook-dashboard.csv"), tr("CSV files (*.csv)"));
    if (path.isEmpty()) return;
    QString error;
    if (!exportCsv(path, &error)) m_status->setText(tr("Could not write %1: %2").arg(path, error));
}

void PerformanceDashboard::handleExportPng()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Export the charts as PNG"),
                                                      QStringLiteral("brook-dashboard.png"), tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    if (!exportPng(path)) m_status->setText(tr("Could not write %1.").arg(path));
}

void PerformanceDashboard::retranslateUi()
{
    m_sourceBox->setItemText(0, tr("This app's engine"));
    m_sourceBox->setItemText(1, tr("Remote server"));
    m_url->setPlaceholderText(tr("http://host:8000 (vLLM or Brook)"));
    m_apiKey->setPlaceholderText(tr("API key (optional)"));
    m_connect->setText(tr("Watch"));
    m_windowBox->setItemText(0, tr("Last minute"));
    m_windowBox->setItemText(1, tr("Last 5 minutes"));
    m_windowBox->setItemText(2, tr("Last 30 minutes"));
    m_pause->setText(m_paused ? tr("Resume") : tr("Pause"));
    m_csv->setText(tr("Export CSV…"));
    m_png->setText(tr("Export PNG…"));
    const QList<QPair<QString, QStringList>> names = {
        {tr("Memory (GiB)"), {tr("Weights"), tr("KV cache"), tr("Activations and graphs"), tr("Free")}},
        {tr("KV cache used and prefix cache hits (%)"), {tr("KV cache"), tr("Prefix cache hits")}},
        {tr("Requests"), {tr("Running"), tr("Waiting"), tr("Preempted per second")}},
        {tr("Time to first token and end-to-end (ms)"), {tr("TTFT p50"), tr("TTFT p95"), tr("E2E p50"), tr("E2E p95")}},
        {tr("Inter-token latency (ms)"), {tr("ITL p50"), tr("ITL p95")}},
        {tr("Throughput (tokens/s)"), {tr("Prompt"), tr("Generation")}},
    };
    for (int i = 0; i < m_charts.size(); ++i) {
        m_charts[i]->setTitle(names[i].first);
        for (int l = 0; l < names[i].second.size(); ++l) m_charts[i]->setLineName(l, names[i].second[l]);
    }
    m_charts[2]->setUnit(QString(), 1);
    m_charts[5]->setUnit(tr("tokens/s"), 0);
    redraw();  // the memory chart's title depends on the data
    updateStatus();
}

void PerformanceDashboard::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    redraw();
}

void PerformanceDashboard::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
    } else if (event->type() == QEvent::PaletteChange) {
        const bool dark = palette().color(QPalette::Window).lightness() < 128;
        for (TimeSeriesChart* chart : m_charts) chart->setDarkTheme(dark);
    }
    QWidget::changeEvent(event);
}

}  // namespace brook
