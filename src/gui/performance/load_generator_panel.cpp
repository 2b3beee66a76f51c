#include "gui/performance/load_generator_panel.h"

#include "gui/performance/load_generator.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace brook {

namespace {
constexpr int kRows = 20;
}

LoadGeneratorPanel::LoadGeneratorPanel(QWidget* parent) : QWidget(parent)
{
    m_generator = new LoadGenerator(this);
    connect(m_generator, &LoadGenerator::progressed, this, &LoadGeneratorPanel::handleProgress);
    connect(m_generator, &LoadGenerator::finished, this, &LoadGeneratorPanel::handleFinished);
    connect(m_generator, &LoadGenerator::failed, this, &LoadGeneratorPanel::handleFailed);

    m_target = new QComboBox(this);
    m_target->addItems({QString(), QString()});
    m_url = new QLineEdit(QStringLiteral("http://127.0.0.1:8000"), this);
    m_api = new QComboBox(this);
    m_api->addItem(QStringLiteral("/v1/chat/completions"));
    m_api->addItem(QStringLiteral("/v1/completions"));
    auto spin = [this](const char* name, int lo, int hi, int value) {
        auto* s = new QSpinBox(this);
        s->setObjectName(QLatin1String(name));
        s->setRange(lo, hi);
        s->setValue(value);
        s->setGroupSeparatorShown(true);
        return s;
    };
    m_users = spin("loadUsers", 1, 4096, 8);
    m_rate = new QDoubleSpinBox(this);
    m_rate->setObjectName(QStringLiteral("loadRate"));
    m_rate->setRange(0, 10000);
    m_rate->setDecimals(1);
    m_rate->setValue(4);
    m_burstiness = new QDoubleSpinBox(this);
    m_burstiness->setRange(0.1, 10);
    m_burstiness->setSingleStep(0.1);
    m_burstiness->setValue(1.0);
    m_requests = spin("loadRequests", 1, 100000, 64);
    m_duration = spin("loadDuration", 0, 24 * 3600, 0);
    m_inputLen = spin("loadInputLen", 1, 131072, 256);
    m_outputLen = spin("loadOutputLen", 1, 131072, 128);
    m_spread = spin("loadSpread", 0, 100, 25);
    m_spread->setSuffix(QStringLiteral(" %"));
    m_ignoreEos = new QCheckBox(this);
    m_ignoreEos->setChecked(true);
    m_seed = spin("loadSeed", 0, 1 << 30, 0);

    auto* form = new QGridLayout;
    const QList<QWidget*> fields = {m_target,     m_url,       m_api,      m_users,    m_rate,
                                    m_burstiness, m_requests,  m_duration, m_inputLen, m_outputLen,
                                    m_spread,     m_ignoreEos, m_seed};
    for (int i = 0; i < fields.size(); ++i) {
        auto* label = new QLabel(this);
        label->setBuddy(fields[i]);
        m_labels << label;
        const int column = i < 7 ? 0 : 2;
        const int row = i < 7 ? i : i - 7;
        form->addWidget(label, row, column);
        form->addWidget(fields[i], row, column + 1);
    }
    form->setColumnStretch(1, 1);
    form->setColumnStretch(3, 1);
    form->setColumnMinimumWidth(2, 120);

    m_run = new QPushButton(this);
    m_run->setObjectName(QStringLiteral("loadRun"));
    m_stop = new QPushButton(this);
    m_stop->setObjectName(QStringLiteral("loadStop"));
    m_clear = new QPushButton(this);
    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(true);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("loadStatus"));
    m_status->setWordWrap(true);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_progress, 1);
    buttons->addWidget(m_clear);

    m_results = new QTableWidget(kRows, 0, this);
    m_results->setObjectName(QStringLiteral("loadResults"));
    m_results->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_results->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_results->verticalHeader()->setDefaultSectionSize(m_results->fontMetrics().height() + 6);

    auto* left = new QVBoxLayout;
    left->addLayout(form);
    left->addLayout(buttons);
    left->addWidget(m_status);
    left->addStretch(1);
    auto* layout = new QHBoxLayout(this);
    layout->addLayout(left, 3);
    layout->addWidget(m_results, 2);

    connect(m_target, &QComboBox::currentIndexChanged, this, [this](int i) { m_url->setEnabled(i == 1); });
    connect(m_run, &QPushButton::clicked, this, [this] {
        QString error;
        if (!run(&error) && !error.isEmpty()) showStatus([error] { return error; });
    });
    connect(m_stop, &QPushButton::clicked, this, &LoadGeneratorPanel::stop);
    connect(m_clear, &QPushButton::clicked, this, [this] {
        m_results->setColumnCount(0);
        m_resultList.clear();
        m_columnRunNumbers.clear();
    });
    m_url->setEnabled(false);
    retranslateUi();
    updateButtons();
}

ServeBenchOptions LoadGeneratorPanel::benchOptions() const
{
    ServeBenchOptions o;
    o.endpoint = m_api->currentText().toStdString();
    o.maxConcurrency = m_users->value();
    o.requestRate = m_rate->value() > 0 ? m_rate->value() : std::numeric_limits<double>::infinity();
    o.burstiness = m_burstiness->value();
    o.numPrompts = m_requests->value();
    o.durationSeconds = m_duration->value();
    o.randomInputLen = m_inputLen->value();
    o.randomOutputLen = m_outputLen->value();
    o.randomRangeRatio = m_spread->value() / 100.0;
    o.ignoreEos = m_ignoreEos->isChecked();
    o.seed = uint64_t(m_seed->value());
    o.temperature = 0.0;
    o.timeoutSeconds = 600;
    if (!useLocalEndpoint()) o.baseUrl = m_url->text().trimmed().toStdString();
    return o;
}

void LoadGeneratorPanel::setBenchOptions(const ServeBenchOptions& o)
{
    m_api->setCurrentText(QString::fromStdString(o.endpoint));
    m_users->setValue(o.maxConcurrency > 0 ? o.maxConcurrency : m_users->maximum());
    m_rate->setValue(std::isfinite(o.requestRate) ? o.requestRate : 0.0);
    m_burstiness->setValue(o.burstiness);
    m_requests->setValue(o.numPrompts);
    m_duration->setValue(int(o.durationSeconds));
    m_inputLen->setValue(o.randomInputLen);
    m_outputLen->setValue(o.randomOutputLen);
    m_spread->setValue(int(std::lround(o.randomRangeRatio * 100.0)));
    m_ignoreEos->setChecked(o.ignoreEos);
    m_seed->setValue(int(o.seed));
}

bool LoadGeneratorPanel::useLocalEndpoint() const { return m_target->currentIndex() == 0; }

void LoadGeneratorPanel::setTargetUrl(const QString& url)
{
    m_target->setCurrentIndex(url.isEmpty() ? 0 : 1);
    if (!url.isEmpty()) m_url->setText(url);
}

bool LoadGeneratorPanel::isRunning() const { return m_generator->isRunning(); }
int LoadGeneratorPanel::resultCount() const { return int(m_resultList.size()); }
QString LoadGeneratorPanel::statusText() const { return m_status->text(); }

bool LoadGeneratorPanel::run(QString* error)
{
    if (m_generator->isRunning()) return false;
    ServeBenchOptions o = benchOptions();
    if (useLocalEndpoint()) {
        QString problem;
        const QString base = m_endpoint ? m_endpoint(&problem) : QString();
        if (base.isEmpty()) {
            if (error) *error = problem.isEmpty() ? tr("Load a model first.") : problem;
            return false;
        }
        o.baseUrl = base.toStdString();
        if (!m_modelDir.isEmpty()) o.tokenizer = m_modelDir.toStdString();
    } else if (o.baseUrl.empty()) {
        if (error) *error = tr("Enter the server's URL.");
        return false;
    }
    m_runNumber = m_runLabel.isEmpty() ? m_results->columnCount() + 1 : 0;
    const QString label = runLabel(m_runNumber, m_runLabel);
    m_generator->start(o, label);
    m_runDuration = o.durationSeconds;
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    showStatus([this, number = m_runNumber, named = m_runLabel, url = QString::fromStdString(o.baseUrl)] {
        return tr("Running \"%1\" against %2…").arg(runLabel(number, named), url);
    });
    updateButtons();
    return true;
}

void LoadGeneratorPanel::stop()
{
    m_generator->cancel();
    showStatus([] { return tr("Stopping: hanging up on the requests in flight…"); });
}

void LoadGeneratorPanel::handleProgress(const ServeBenchProgress& p)
{
    // Done when all are answered, or (with a duration) when the time is up, whichever comes first.
    double done = p.total > 0 ? double(p.finished) / p.total : 0.0;
    if (m_runDuration > 0) done = std::max(done, p.elapsedSeconds / m_runDuration);
    m_progress->setValue(int(std::min(done, 1.0) * 1000));
    showStatus([p] {
        return tr("%1 sent · %2 finished · %3 failed · %4 in flight · %5 s")
            .arg(p.sent)
            .arg(p.finished)
            .arg(p.failed)
            .arg(p.inFlight)
            .arg(p.elapsedSeconds, 0, 'f', 1);
    });
}

void LoadGeneratorPanel::handleFinished(const QString& label, const ServeBenchResult& result)
{
    m_resultList << result;
    m_columnRunNumbers << m_runNumber;
    addResultColumn(label, result);
    m_progress->setValue(m_progress->maximum());
    showStatus([this, number = m_runNumber, label, result] {
        QString text = tr("\"%1\": %2 requests in %3 s, %4 output tokens/s.")
                           .arg(runLabel(number, label))
                           .arg(result.completed)
                           .arg(result.duration, 0, 'f', 1)
                           .arg(result.outputThroughput, 0, 'f', 1);
        if (!result.errors.empty())
            text +=
                QLatin1Char(' ') +
                tr("%1 failed, first: %2").arg(result.errors.size()).arg(QString::fromStdString(result.errors.front()));
        return text;
    });
    updateButtons();
    emit runFinished(label, result.completed > 0);
}

void LoadGeneratorPanel::handleFailed(const QString& label, const QString& message)
{
    showStatus([this, number = m_runNumber, label, message] {
        return tr("\"%1\" could not run: %2").arg(runLabel(number, label), message);
    });
    updateButtons();
    emit runFinished(label, false);
}

void LoadGeneratorPanel::addResultColumn(const QString& label, const ServeBenchResult& r)
{
    const QLocale locale;
    const int column = m_results->columnCount();
    m_results->insertColumn(column);
    m_results->setHorizontalHeaderItem(column, new QTableWidgetItem(label));
    const QList<double> values = {double(r.completed),
                                  double(r.errors.size()),
                                  r.duration,
                                  r.requestThroughput,
                                  r.outputThroughput,
                                  r.totalTokenThroughput,
                                  double(r.peakOutputTokensPerSecond),
                                  double(r.peakConcurrentRequests),
                                  r.ttft.mean,
                                  r.ttft.median,
                                  r.ttft.p99,
                                  r.tpot.mean,
                                  r.tpot.median,
                                  r.tpot.p99,
                                  r.itl.mean,
                                  r.itl.median,
                                  r.itl.p99,
                                  r.e2el.mean,
                                  r.e2el.median,
                                  r.e2el.p99};
    for (int row = 0; row < kRows; ++row) {
        const int decimals = row < 2 || row == 6 || row == 7 ? 0 : 2;
        auto* item = new QTableWidgetItem(locale.toString(values[row], 'f', decimals));
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_results->setItem(row, column, item);
    }
}

QString LoadGeneratorPanel::runLabel(int number, const QString& named) const
{
    return number > 0 ? tr("Run %1").arg(number) : named;
}

void LoadGeneratorPanel::showStatus(std::function<QString()> text)
{
    // Kept as a function, so a language switch rewrites the line in the new language.
    m_statusText = std::move(text);
    m_status->setText(m_statusText());
}

void LoadGeneratorPanel::updateButtons()
{
    const bool running = m_generator->isRunning();
    m_run->setEnabled(!running);
    m_stop->setEnabled(running);
}

void LoadGeneratorPanel::retranslateUi()
{
    const QStringList labels = {tr("Target:"),
                                tr("URL:"),
                                tr("API:"),
                                tr("Concurrent users:"),
                                tr("Request rate (req/s):"),
                                tr("Burstiness:"),
                                tr("Requests:"),
                                tr("Duration (s):"),
                                tr("Prompt tokens:"),
                                tr("Output tokens:"),
                                tr("Length spread:"),
                                tr("Ignore EOS:"),
                                tr("Seed:")};
    for (int i = 0; i < m_labels.size(); ++i) m_labels[i]->setText(labels[i]);
    m_target->setItemText(0, tr("This app's local endpoint"));
    m_target->setItemText(1, tr("Another server"));
    m_rate->setSpecialValueText(tr("all at once"));
    m_duration->setSpecialValueText(tr("until all are sent"));
    m_burstiness->setToolTip(tr("Gamma shape of the gaps between arrivals: 1 is Poisson, lower is burstier."));
    m_spread->setToolTip(tr("Prompt and output lengths vary uniformly by this much around the values given."));
    m_ignoreEos->setText(tr("generate exactly the output length"));
    m_run->setText(tr("Run"));
    m_stop->setText(tr("Stop"));
    m_clear->setText(tr("Clear results"));
    const QStringList rows = {tr("Successful requests"),
                              tr("Failed requests"),
                              tr("Duration (s)"),
                              tr("Requests/s"),
                              tr("Output tokens/s"),
                              tr("Total tokens/s"),
                              tr("Peak output tokens/s"),
                              tr("Peak concurrent requests"),
                              tr("Mean %1 (ms)").arg(QStringLiteral("TTFT")),
                              tr("Median %1 (ms)").arg(QStringLiteral("TTFT")),
                              tr("P99 %1 (ms)").arg(QStringLiteral("TTFT")),
                              tr("Mean %1 (ms)").arg(QStringLiteral("TPOT")),
                              tr("Median %1 (ms)").arg(QStringLiteral("TPOT")),
                              tr("P99 %1 (ms)").arg(QStringLiteral("TPOT")),
                              tr("Mean %1 (ms)").arg(QStringLiteral("ITL")),
                              tr("Median %1 (ms)").arg(QStringLiteral("ITL")),
                              tr("P99 %1 (ms)").arg(QStringLiteral("ITL")),
                              tr("Mean %1 (ms)").arg(QStringLiteral("E2EL")),
                              tr("Median %1 (ms)").arg(QStringLiteral("E2EL")),
                              tr("P99 %1 (ms)").arg(QStringLiteral("E2EL"))};
    m_results->setVerticalHeaderLabels(rows);
    // Numbered runs ("Run 1") follow the language; named ones (profiles) are the user's words.
    for (int column = 0; column < m_results->columnCount() && column < m_columnRunNumbers.size(); ++column)
        if (m_columnRunNumbers[column] > 0)
            m_results->horizontalHeaderItem(column)->setText(runLabel(m_columnRunNumbers[column], QString()));
    if (m_statusText) m_status->setText(m_statusText());
}

void LoadGeneratorPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
