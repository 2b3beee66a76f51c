// EndpointPanel: the "Local endpoint" switch: host, port and API key, a warning when the host is
// not loopback (a key is then required), the base URL and a curl example to copy, and the
// request counters (polled every half second from LocalEndpoint, never pushed per request).
#pragma once

#include "gui/shell/local_endpoint.h"

#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTimer;

namespace brook {

class EndpointPanel : public QWidget {
    Q_OBJECT
public:
    EndpointPanel(LocalEndpoint& endpoint, QWidget* parent = nullptr);

    LocalEndpoint::Settings settings() const;
    void setSettings(const LocalEndpoint::Settings& settings);
    void showError(const QString& message);
    QCheckBox* enableSwitch() const { return m_enable; }
    QString countersText() const;

signals:
    void startRequested(const brook::LocalEndpoint::Settings& settings);
    void stopRequested();
    void settingsChanged(const brook::LocalEndpoint::Settings& settings);

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleToggled(bool on);
    void handleRunningChanged(bool running);
    void handleFieldsEdited();
    void handlePoll();

private:
    void retranslateUi();

    LocalEndpoint& m_endpoint;
    QCheckBox* m_enable;
    QLabel* m_hostLabel;
    QLineEdit* m_host;
    QLabel* m_portLabel;
    QSpinBox* m_port;
    QLabel* m_keyLabel;
    QLineEdit* m_key;
    QLabel* m_warning;
    QLabel* m_urlLabel;
    QLineEdit* m_url;
    QPushButton* m_copyUrl;
    QPlainTextEdit* m_curl;
    QPushButton* m_copyCurl;
    QLabel* m_counters;
    QLabel* m_error;
    QTimer* m_poll;
};

}  // namespace brook
