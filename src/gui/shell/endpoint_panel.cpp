#include "gui/shell/endpoint_panel.h"

#include "gui/shell/vector_icon_engine.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QEvent>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

namespace brook {

EndpointPanel::EndpointPanel(LocalEndpoint& endpoint, QWidget* parent) : QWidget(parent), m_endpoint(endpoint)
{
    m_enable = new QCheckBox(this);
    m_enable->setObjectName(QStringLiteral("endpointSwitch"));
    QFont bold = m_enable->font();
    bold.setBold(true);
    m_enable->setFont(bold);
    m_hostLabel = new QLabel(this);
    m_host = new QLineEdit(this);
    m_host->setObjectName(QStringLiteral("endpointHost"));
    m_portLabel = new QLabel(this);
    m_port = new QSpinBox(this);
    m_port->setObjectName(QStringLiteral("endpointPort"));
    m_port->setRange(0, 65535);
    m_keyLabel = new QLabel(this);
    m_key = new QLineEdit(this);
    m_key->setObjectName(QStringLiteral("endpointKey"));
    m_key->setEchoMode(QLineEdit::PasswordEchoOnEdit);
    m_warning = new QLabel(this);
    m_warning->setWordWrap(true);
    m_warning->setStyleSheet(QStringLiteral("color: #c08a00;"));
    m_urlLabel = new QLabel(this);
    m_url = new QLineEdit(this);
    m_url->setObjectName(QStringLiteral("endpointUrl"));
    m_url->setReadOnly(true);
    m_copyUrl = new QPushButton(VectorIconEngine::icon(IconShape::Copy), QString(), this);
    m_curl = new QPlainTextEdit(this);
    m_curl->setObjectName(QStringLiteral("curlExample"));
    m_curl->setReadOnly(true);
    m_curl->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_curl->setMaximumHeight(90);
    m_copyCurl = new QPushButton(VectorIconEngine::icon(IconShape::Copy), QString(), this);
    m_counters = new QLabel(this);
    m_counters->setObjectName(QStringLiteral("endpointCounters"));
    m_error = new QLabel(this);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #d9534f;"));
    m_error->setVisible(false);
    m_poll = new QTimer(this);
    m_poll->setInterval(500);

    connect(m_enable, &QCheckBox::toggled, this, &EndpointPanel::handleToggled);
    connect(&m_endpoint, &LocalEndpoint::runningChanged, this, &EndpointPanel::handleRunningChanged);
    connect(m_host, &QLineEdit::textEdited, this, &EndpointPanel::handleFieldsEdited);
    connect(m_port, qOverload<int>(&QSpinBox::valueChanged), this, &EndpointPanel::handleFieldsEdited);
    connect(m_key, &QLineEdit::textEdited, this, &EndpointPanel::handleFieldsEdited);
    connect(m_copyUrl, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(m_url->text()); });
    connect(m_copyCurl, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(m_curl->toPlainText()); });
    connect(m_poll, &QTimer::timeout, this, &EndpointPanel::handlePoll);

    auto* form = new QFormLayout;
    form->addRow(m_hostLabel, m_host);
    form->addRow(m_portLabel, m_port);
    form->addRow(m_keyLabel, m_key);
    auto* urlRow = new QHBoxLayout;
    urlRow->addWidget(m_url, 1);
    urlRow->addWidget(m_copyUrl);
    form->addRow(m_urlLabel, urlRow);
    auto* curlRow = new QHBoxLayout;
    curlRow->addWidget(m_curl, 1);
    curlRow->addWidget(m_copyCurl, 0, Qt::AlignTop);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_enable);
    layout->addLayout(form);
    layout->addWidget(m_warning);
    layout->addLayout(curlRow);
    layout->addWidget(m_counters);
    layout->addWidget(m_error);
    layout->addStretch();
    retranslateUi();
    handleRunningChanged(m_endpoint.isRunning());
}

LocalEndpoint::Settings EndpointPanel::settings() const
{
    LocalEndpoint::Settings s;
    s.host = m_host->text().trimmed();
    s.port = m_port->value();
    s.apiKey = m_key->text().trimmed();
    return s;
}

void EndpointPanel::setSettings(const LocalEndpoint::Settings& s)
{
    m_host->setText(s.host);
    m_port->setValue(s.port);
    m_key->setText(s.apiKey);
    retranslateUi();
}

void EndpointPanel::showError(const QString& message)
{
    m_error->setText(message);
    m_error->setVisible(!message.isEmpty());
    if (!message.isEmpty() && !m_endpoint.isRunning()) {
        const QSignalBlocker block(m_enable);
        m_enable->setChecked(false);
    }
}

void EndpointPanel::handleToggled(bool on)
{
    m_error->setVisible(false);
    if (on) emit startRequested(settings());
    else emit stopRequested();
}

void EndpointPanel::handleRunningChanged(bool running)
{
    {
        const QSignalBlocker block(m_enable);
        m_enable->setChecked(running);
    }
    for (QWidget* w : {static_cast<QWidget*>(m_host), static_cast<QWidget*>(m_port), static_cast<QWidget*>(m_key)})
        w->setEnabled(!running);
    m_url->setText(running ? m_endpoint.baseUrl() : QString());
    // The whole URL stays readable in a narrow dock: the field asks for its width.
    m_url->setMinimumWidth(m_url->fontMetrics().horizontalAdvance(m_url->text()) + 16);
    m_curl->setPlainText(running ? m_endpoint.curlExample() : QString());
    for (QWidget* w : {static_cast<QWidget*>(m_url), static_cast<QWidget*>(m_copyUrl), static_cast<QWidget*>(m_curl),
                       static_cast<QWidget*>(m_copyCurl), static_cast<QWidget*>(m_counters)})
        w->setVisible(running);
    m_urlLabel->setVisible(running);
    if (running) m_poll->start();
    else m_poll->stop();
    handlePoll();
}

void EndpointPanel::handleFieldsEdited()
{
    retranslateUi();
    emit settingsChanged(settings());
}

QString EndpointPanel::countersText() const { return m_counters->text(); }

void EndpointPanel::handlePoll()
{
    m_counters->setText(tr("Requests in progress: %1 · completions served: %2")
                            .arg(m_endpoint.activeRequests())
                            .arg(m_endpoint.servedRequests()));
}

void EndpointPanel::retranslateUi()
{
    m_enable->setText(tr("Serve the OpenAI-compatible API"));
    m_enable->setToolTip(tr("Other programs can then use this model; chats and API requests share the engine"));
    m_hostLabel->setText(tr("Host:"));
    m_portLabel->setText(tr("Port:"));
    m_keyLabel->setText(tr("API key:"));
    m_urlLabel->setText(tr("Base URL:"));
    m_copyUrl->setText(tr("Copy"));
    m_copyCurl->setText(tr("Copy"));
    const bool exposed = !m_host->text().trimmed().isEmpty() && !LocalEndpoint::isLoopback(m_host->text());
    m_key->setPlaceholderText(exposed ? tr("required for this host") : tr("optional on this computer"));
    m_warning->setText(
        tr("Warning: %1 is reachable from other computers. An API key is required.").arg(m_host->text().trimmed()));
    m_warning->setVisible(exposed);
    if (m_endpoint.isRunning()) handlePoll();
}

void EndpointPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
