// PerformanceWindow: where a person tunes serving by eye. The live dashboard on top; below it
// tabs for the serving parameters (with the capacity planner and profiles), the load generator
// and the request inspector. "Compare profiles" applies each chosen profile in turn (the engine
// reloads), runs the same load against it and leaves the results side by side.
// A separate top-level window owned by MainWindow, which does the reloading. GUI thread only.
#pragma once

#include "launch/launch_options.h"

#include <QStringList>
#include <QWidget>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTabWidget;

namespace brook {

class AppSettings;
class Engine;
class LoadGeneratorPanel;
class PerformanceDashboard;
class RequestInspector;
class ServingParametersPanel;

class PerformanceWindow : public QWidget {
    Q_OBJECT
public:
    enum Tab { ServingTab, LoadTab, RequestsTab };

    explicit PerformanceWindow(AppSettings& settings, QWidget* parent = nullptr);

    PerformanceDashboard* dashboard() const { return m_dashboard; }
    ServingParametersPanel* servingPanel() const { return m_serving; }
    LoadGeneratorPanel* loadPanel() const { return m_load; }
    RequestInspector* inspector() const { return m_inspector; }
    QTabWidget* tabs() const { return m_tabs; }

    // The engine now serving (null: none) and the options it was loaded with.
    void setEngine(Engine* engine, const LaunchOptions& loadedWith, const QString& modelDir);
    void setReloading(bool reloading);
    void showApplyError(const QString& message);
    void showReloadProgress(const QString& stage, int percent);  // percent -1: busy

    // Applies each profile in turn and runs the load generator's current load against it.
    bool compareProfiles(const QStringList& names);
    bool isComparing() const { return !m_compareQueue.isEmpty() || !m_comparePending.isEmpty() || m_compareRunning; }

signals:
    void applyRequested(const brook::LaunchOptions& options);

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleRunFinished(const QString& label, bool ok);

private:
    void retranslateUi();
    void refreshCompareBoxes();
    void compareNext();

    AppSettings& m_settings;
    PerformanceDashboard* m_dashboard;
    ServingParametersPanel* m_serving;
    LoadGeneratorPanel* m_load;
    RequestInspector* m_inspector;
    QSplitter* m_splitter;
    QTabWidget* m_tabs;
    QLabel* m_compareLabel;
    QComboBox* m_compareA;
    QComboBox* m_compareB;
    QPushButton* m_compare;
    QLabel* m_message;
    QProgressBar* m_reloadProgress;
    QStringList m_compareQueue;
    QString m_comparePending;  // applied, waiting for the engine to come back
    bool m_compareRunning = false;
    bool m_reloading = false;
};

}  // namespace brook
