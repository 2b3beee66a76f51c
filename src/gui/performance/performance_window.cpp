#include "gui/performance/performance_window.h"

#include "gui/shell/screen_fit.h"

#include "gui/performance/load_generator_panel.h"
#include "gui/performance/performance_dashboard.h"
#include "gui/performance/request_inspector.h"
#include "gui/performance/serving_parameters_panel.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace brook {

PerformanceWindow::PerformanceWindow(AppSettings& settings, QWidget* parent)
    : QWidget(parent, Qt::Window), m_settings(settings)
{
    setObjectName(QStringLiteral("performanceWindow"));
    m_dashboard = new PerformanceDashboard(this);
    m_serving = new ServingParametersPanel(m_settings, this);
    m_load = new LoadGeneratorPanel(this);
    m_inspector = new RequestInspector(this);

    auto* loadPage = new QWidget(this);
    m_compareLabel = new QLabel(loadPage);
    m_compareA = new QComboBox(loadPage);
    m_compareB = new QComboBox(loadPage);
    m_compareA->setObjectName(QStringLiteral("compareA"));
    m_compareB->setObjectName(QStringLiteral("compareB"));
    m_compare = new QPushButton(loadPage);
    m_compare->setObjectName(QStringLiteral("compareRun"));
    auto* compareRow = new QHBoxLayout;
    compareRow->addWidget(m_compareLabel);
    compareRow->addWidget(m_compareA, 1);
    compareRow->addWidget(m_compareB, 1);
    compareRow->addWidget(m_compare);
    compareRow->addStretch(1);
    auto* loadLayout = new QVBoxLayout(loadPage);
    loadLayout->setContentsMargins(0, 0, 0, 0);
    loadLayout->addWidget(m_load, 1);
    loadLayout->addLayout(compareRow);

    // The pages scroll rather than clip when the window is small (1024×700): their forms keep
    // their natural size.
    auto scrolled = [this](QWidget* page) {
        auto* scroll = new QScrollArea(this);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setWidget(page);
        return scroll;
    };
    m_tabs = new QTabWidget(this);
    m_tabs->addTab(scrolled(m_serving), QString());
    m_tabs->addTab(scrolled(loadPage), QString());
    m_tabs->addTab(m_inspector, QString());
    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->addWidget(m_dashboard);
    m_splitter->addWidget(m_tabs);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("performanceMessage"));
    m_message->setWordWrap(true);
    m_message->hide();
    m_reloadProgress = new QProgressBar(this);
    m_reloadProgress->setObjectName(QStringLiteral("reloadProgress"));
    m_reloadProgress->hide();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_splitter, 1);
    layout->addWidget(m_message);
    layout->addWidget(m_reloadProgress);

    connect(m_serving, &ServingParametersPanel::applyRequested, this, [this](const LaunchOptions& o) {
        m_message->hide();
        emit applyRequested(o);
    });
    connect(m_load, &LoadGeneratorPanel::runFinished, this, &PerformanceWindow::handleRunFinished);
    connect(m_compare, &QPushButton::clicked, this, [this] {
        compareProfiles({m_compareA->currentText(), m_compareB->currentText()});
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { refreshCompareBoxes(); });
    ScreenFit::resizeToFit(this, QSize(1400, 940));
    retranslateUi();
    refreshCompareBoxes();
}

void PerformanceWindow::setEngine(Engine* engine, const LaunchOptions& loadedWith, const QString& modelDir)
{
    m_dashboard->setEngine(engine);
    m_inspector->setEngine(engine);
    m_serving->setEngine(engine, loadedWith);
    m_load->setModelDir(engine ? modelDir : QString());
    // A comparison waits for the engine of the profile it applied, then runs the load on it.
    if (engine && !m_comparePending.isEmpty()) {
        m_load->setRunLabel(m_comparePending);
        m_comparePending.clear();
        QString error;
        m_compareRunning = m_load->run(&error);
        if (!m_compareRunning) {
            m_compareQueue.clear();
            showApplyError(error);
        }
    }
}

void PerformanceWindow::setReloading(bool reloading)
{
    m_reloading = reloading;
    m_serving->setLoading(reloading);
    m_reloadProgress->setVisible(reloading);
    m_compare->setEnabled(!reloading && !isComparing());
}

void PerformanceWindow::showApplyError(const QString& message)
{
    m_message->setText(message);
    m_message->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_message->setVisible(!message.isEmpty());
    m_comparePending.clear();
    m_compareQueue.clear();
    m_compareRunning = false;
    m_load->setRunLabel({});
    m_compare->setEnabled(true);
}

void PerformanceWindow::showReloadProgress(const QString& stage, int percent)
{
    if (!m_reloading) return;
    m_reloadProgress->setRange(0, percent < 0 ? 0 : 100);
    if (percent >= 0) m_reloadProgress->setValue(percent);
    m_reloadProgress->setFormat(tr("Reloading the model: %1").arg(stage) +
                                (percent >= 0 ? QStringLiteral(" %p%") : QString()));
    m_reloadProgress->setTextVisible(true);
}

bool PerformanceWindow::compareProfiles(const QStringList& names)
{
    if (isComparing() || m_load->isRunning() || names.isEmpty()) return false;
    const QList<ServingProfile> profiles = m_serving->profiles();
    for (const QString& name : names)
        if (std::none_of(profiles.begin(), profiles.end(), [&](const ServingProfile& p) { return p.name == name; }))
            return false;
    m_compareQueue = names;
    m_compare->setEnabled(false);
    compareNext();
    return true;
}

void PerformanceWindow::compareNext()
{
    if (m_compareQueue.isEmpty()) {
        m_load->setRunLabel({});
        m_compare->setEnabled(!m_reloading);
        return;
    }
    const QString name = m_compareQueue.takeFirst();
    m_serving->loadProfile(name);
    m_comparePending = name;
    m_tabs->setCurrentIndex(LoadTab);
    emit applyRequested(m_serving->options());
}

void PerformanceWindow::handleRunFinished(const QString&, bool)
{
    if (!m_compareRunning) return;
    m_compareRunning = false;
    compareNext();
}

void PerformanceWindow::refreshCompareBoxes()
{
    QStringList names;
    for (const ServingProfile& p : m_serving->profiles()) names << p.name;
    for (QComboBox* box : {m_compareA, m_compareB}) {
        const QString current = box->currentText();
        const QSignalBlocker blocker(box);
        box->clear();
        box->addItems(names);
        if (names.contains(current)) box->setCurrentText(current);
    }
    if (names.size() > 1 && m_compareA->currentIndex() == m_compareB->currentIndex()) m_compareB->setCurrentIndex(1);
    m_compare->setEnabled(names.size() >= 1 && !isComparing() && !m_reloading);
}

void PerformanceWindow::retranslateUi()
{
    setWindowTitle(tr("Brook — performance"));
    m_tabs->setTabText(ServingTab, tr("Serving parameters"));
    m_tabs->setTabText(LoadTab, tr("Load generator"));
    m_tabs->setTabText(RequestsTab, tr("Requests"));
    m_compareLabel->setText(tr("Compare profiles:"));
    m_compare->setText(tr("Apply each and run this load"));
    m_compare->setToolTip(
        tr("Reloads the engine with the first profile, runs the load above, then does the same with the second; "
           "the results end up side by side."));
}

void PerformanceWindow::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
