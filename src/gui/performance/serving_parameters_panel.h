// ServingParametersPanel: the knobs of vLLM's serving guides (max-model-len, max-num-seqs,
// max-num-batched-tokens, gpu-memory-utilization, dtype, quantization, CUDA graphs, block size,
// scheduling policy; device and CPU KV-cache size) with the capacity planner updating as a knob
// moves, before anything is applied. Named profiles: save, load, delete, export as brook-serve
// YAML and import one. "Apply" asks the window to reload the engine with these options.
// GUI thread only.
#pragma once

#include "launch/launch_options.h"
#include "engine/capacity_planner.h"
#include "gui/performance/serving_profile.h"

#include <QWidget>

#include <functional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace brook {

class AppSettings;
class CapacityPlanView;
class Engine;

class ServingParametersPanel : public QWidget {
    Q_OBJECT
public:
    explicit ServingParametersPanel(AppSettings& settings, QWidget* parent = nullptr);

    // The loaded engine (null: none): its model shape feeds the planner, its memory is shown
    // beside the plan, and the knobs show what it was loaded with.
    void setEngine(Engine* engine, const LaunchOptions& loadedWith);
    void setOptions(const LaunchOptions& options);  // the knob fields only
    LaunchOptions options() const;
    CapacityInput plannerInput() const;
    CapacityPlanView* planView() const { return m_plan; }
    void setPlanDeviceGiB(double gib);
    void setPlanForErnie03b(bool ernie);  // false: the loaded model's shape
    void setLoading(bool loading);

    QList<ServingProfile> profiles() const { return m_profiles; }
    bool saveProfile(const QString& name);  // the current knobs under `name` (replaces)
    bool loadProfile(const QString& name);
    void deleteProfile(const QString& name);
    // The current knobs as brook-serve YAML; the line under the knobs says how it went.
    bool exportProfileYaml(const QString& path, QString* error = nullptr);
    bool importProfileYaml(const QString& path, QString* error = nullptr);
    QString currentProfileName() const;
    QString profileMessage() const;  // the line under the knobs (saved, loaded, wrote ...)

    // The built-in shape to plan for before a model is loaded.
    static ModelConfig ernie03bShape();

signals:
    void applyRequested(const brook::LaunchOptions& options);

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void updatePlan();
    void handleSaveProfile();
    void handleExportYaml();
    void handleImportYaml();

private:
    void retranslateUi();
    void updateModelLabel();
    void updateQuantizationChoices();  // for the loaded model
    void showProfileMessage(std::function<QString()> text);
    bool writeProfileYaml(const QString& path, QString* error) const;
    void storeProfiles();
    void refreshProfileBox(const QString& select);

    AppSettings& m_settings;
    Engine* m_engine = nullptr;
    ModelConfig m_model;
    QString m_modelDir;
    QList<ServingProfile> m_profiles;
    bool m_loading = false;

    QComboBox* m_device;
    QComboBox* m_dtype;
    QComboBox* m_quantization;
    QSpinBox* m_maxModelLen;
    QSpinBox* m_maxNumSeqs;
    QSpinBox* m_maxBatchedTokens;
    QDoubleSpinBox* m_gpuUtilization;
    QDoubleSpinBox* m_cpuKvGiB;
    QComboBox* m_blockSize;
    QCheckBox* m_cudaGraphs;
    QComboBox* m_policy;
    QDoubleSpinBox* m_planGiB;
    QComboBox* m_shape;  // plan for the loaded model or for ERNIE-4.5-0.3B
    QList<QLabel*> m_labels;
    CapacityPlanView* m_plan;
    QLabel* m_modelLabel;
    QComboBox* m_profileBox;
    QPushButton* m_loadProfile;
    QPushButton* m_saveProfile;
    QPushButton* m_deleteProfile;
    QPushButton* m_exportYaml;
    QPushButton* m_importYaml;
    QPushButton* m_apply;
    QLabel* m_profileMessage;
    std::function<QString()> m_profileMessageText;
};

}  // namespace brook
