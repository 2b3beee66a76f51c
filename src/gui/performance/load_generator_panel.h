// LoadGeneratorPanel: the in-app load generator: concurrent users, request rate (and burstiness),
// number of requests and duration, prompt and output lengths with their spread, against this
// app's local endpoint or any OpenAI-compatible URL. It runs the same ServeBenchmark as
// `brook-bench serve` through LoadGenerator, shows progress, and adds each run's results as a
// column of one table (throughput, TTFT / TPOT / ITL / E2EL mean, median, p99), so two profiles
// run one after the other sit side by side. GUI thread only.
#pragma once

#include "loadgen/serve_benchmark.h"

#include <QWidget>

#include <functional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace brook {

class LoadGenerator;

class LoadGeneratorPanel : public QWidget {
    Q_OBJECT
public:
    // Returns the local endpoint's base URL (http://host:port), starting it if needed, or an
    // empty string with *error set.
    using EndpointProvider = std::function<QString(QString* error)>;

    explicit LoadGeneratorPanel(QWidget* parent = nullptr);

    void setEndpointProvider(EndpointProvider provider) { m_endpoint = std::move(provider); }
    void setModelDir(const QString& dir) { m_modelDir = dir; }      // exact-length prompts with its tokenizer
    void setRunLabel(const QString& label) { m_runLabel = label; }  // the next runs' column title

    ServeBenchOptions benchOptions() const;                  // from the form (target not resolved)
    void setBenchOptions(const ServeBenchOptions& options);  // the form fields it has
    bool useLocalEndpoint() const;
    void setTargetUrl(const QString& url);  // "": the local endpoint

    bool run(QString* error = nullptr);  // false: already running, or no target
    void stop();
    bool isRunning() const;
    LoadGenerator* generator() const { return m_generator; }
    QTableWidget* resultsTable() const { return m_results; }
    int resultCount() const;
    QList<ServeBenchResult> results() const { return m_resultList; }
    QString statusText() const;

signals:
    void runFinished(const QString& label, bool ok);

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleProgress(const brook::ServeBenchProgress& progress);
    void handleFinished(const QString& label, const brook::ServeBenchResult& result);
    void handleFailed(const QString& label, const QString& message);

private:
    void retranslateUi();
    void updateButtons();
    void addResultColumn(const QString& label, const ServeBenchResult& result);
    QString runLabel(int number, const QString& named) const;  // "Run 3", or the name given
    void showStatus(std::function<QString()> text);

    LoadGenerator* m_generator;
    EndpointProvider m_endpoint;
    QString m_modelDir;
    QString m_runLabel;
    QList<ServeBenchResult> m_resultList;
    QList<int> m_columnRunNumbers;  // per result column: its run number, 0 when named
    int m_runNumber = 0;            // the run in progress (0: named)
    std::function<QString()> m_statusText;
    double m_runDuration = 0;  // the running load's duration (0: until all are sent)

    QComboBox* m_target;
    QLineEdit* m_url;
    QComboBox* m_api;
    QSpinBox* m_users;
    QDoubleSpinBox* m_rate;
    QDoubleSpinBox* m_burstiness;
    QSpinBox* m_requests;
    QSpinBox* m_duration;
    QSpinBox* m_inputLen;
    QSpinBox* m_outputLen;
    QSpinBox* m_spread;
    QCheckBox* m_ignoreEos;
    QSpinBox* m_seed;
    QList<QLabel*> m_labels;
    QPushButton* m_run;
    QPushButton* m_stop;
    QPushButton* m_clear;
    QProgressBar* m_progress;
    QLabel* m_status;
    QTableWidget* m_results;
};

}  // namespace brook
