#include "gui/performance/serving_parameters_panel.h"

#include "engine/utf8_path.h"

#include "launch/engine_launcher.h"
#include "engine/engine.h"
#include "gui/shell/app_settings.h"
#include "gui/performance/capacity_plan_view.h"
#include "gui/shell/gui_terms.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace brook {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void selectData(QComboBox* box, const QString& value)
{
    const int i = box->findData(value);
    box->setCurrentIndex(i >= 0 ? i : 0);
}

QString dataOf(const QComboBox* box) { return box->currentData().toString(); }

bool itemEnabled(const QComboBox* box, int index)
{
    const auto* model = qobject_cast<const QStandardItemModel*>(box->model());
    return !model || !model->item(index) || model->item(index)->isEnabled();
}

}  // namespace

ModelConfig ServingParametersPanel::ernie03bShape()
{
    ModelConfig c;
    c.architecture = "Ernie4_5ForCausalLM";
    c.vocabSize = 103424;
    c.hiddenSize = 1024;
    c.intermediateSize = 3072;
    c.numLayers = 18;
    c.numHeads = 16;
    c.numKvHeads = 2;
    c.headDim = 128;
    c.maxPositionEmbeddings = 131072;
    c.tieWordEmbeddings = true;
    c.torchDtype = "bfloat16";  // as Baidu ships it: the CPU backend keeps it bf16
    return c;
}

ServingParametersPanel::ServingParametersPanel(AppSettings& settings, QWidget* parent)
    : QWidget(parent), m_settings(settings), m_model(ernie03bShape())
{
    m_device = new QComboBox(this);
    for (const char* d : {"auto", "cpu", "cuda"}) m_device->addItem(QString::fromLatin1(d), QString::fromLatin1(d));
    m_dtype = new QComboBox(this);
    for (const char* d : {"auto", "bfloat16", "float16", "float32"})
        m_dtype->addItem(QString::fromLatin1(d), QString::fromLatin1(d));
    m_quantization = new QComboBox(this);
    m_quantization->setObjectName(QStringLiteral("quantization"));
    m_quantization->addItem(QString(), QString());
    for (const char* q : {"int8", "int4", "awq"})
        m_quantization->addItem(QString::fromLatin1(q), QString::fromLatin1(q));
    m_maxModelLen = new QSpinBox(this);
    m_maxModelLen->setObjectName(QStringLiteral("maxModelLen"));
    m_maxModelLen->setRange(0, 1 << 20);
    m_maxModelLen->setSingleStep(1024);
    m_maxModelLen->setGroupSeparatorShown(true);
    m_maxNumSeqs = new QSpinBox(this);
    m_maxNumSeqs->setObjectName(QStringLiteral("maxNumSeqs"));
    m_maxNumSeqs->setRange(1, 4096);
    m_maxBatchedTokens = new QSpinBox(this);
    m_maxBatchedTokens->setObjectName(QStringLiteral("maxNumBatchedTokens"));
    m_maxBatchedTokens->setRange(16, 1 << 20);
    m_maxBatchedTokens->setSingleStep(512);
    m_maxBatchedTokens->setGroupSeparatorShown(true);
    m_gpuUtilization = new QDoubleSpinBox(this);
    m_gpuUtilization->setObjectName(QStringLiteral("gpuMemoryUtilization"));
    m_gpuUtilization->setRange(0.05, 1.0);
    m_gpuUtilization->setSingleStep(0.05);
    m_gpuUtilization->setDecimals(2);
    m_cpuKvGiB = new QDoubleSpinBox(this);
    m_cpuKvGiB->setObjectName(QStringLiteral("cpuKvCacheGiB"));
    m_cpuKvGiB->setRange(0.01, 4096);
    m_cpuKvGiB->setDecimals(2);
    m_cpuKvGiB->setSingleStep(0.5);
    m_blockSize = new QComboBox(this);
    for (int b : {8, 16, 32}) m_blockSize->addItem(QString::number(b), QString::number(b));
    m_cudaGraphs = new QCheckBox(this);
    m_policy = new QComboBox(this);
    for (const char* p : {"fcfs", "priority"}) m_policy->addItem(QString::fromLatin1(p), QString::fromLatin1(p));
    m_planGiB = new QDoubleSpinBox(this);
    m_planGiB->setObjectName(QStringLiteral("planDeviceGiB"));
    m_planGiB->setRange(1, 4096);
    m_planGiB->setDecimals(1);
    m_planGiB->setValue(80);
    m_shape = new QComboBox(this);
    m_shape->setObjectName(QStringLiteral("planShape"));
    m_shape->addItems({QString(), QStringLiteral("ERNIE-4.5-0.3B")});

    auto* knobs = new QFormLayout;
    const QList<QWidget*> fields = {m_device,           m_dtype,          m_quantization, m_maxModelLen, m_maxNumSeqs,
                                    m_maxBatchedTokens, m_gpuUtilization, m_cpuKvGiB,     m_blockSize,   m_cudaGraphs,
                                    m_policy,           m_planGiB,        m_shape};
    for (QWidget* field : fields) {
        auto* label = new QLabel(this);
        label->setBuddy(field);
        m_labels << label;
        knobs->addRow(label, field);
    }
    m_modelLabel = new QLabel(this);
    m_modelLabel->setWordWrap(true);
    m_plan = new CapacityPlanView(this);
    connect(m_plan, &CapacityPlanView::maxModelLenSuggested, m_maxModelLen, &QSpinBox::setValue);
    connect(m_plan, &CapacityPlanView::gpuMemoryUtilizationSuggested, m_gpuUtilization, &QDoubleSpinBox::setValue);
    connect(m_plan, &CapacityPlanView::cpuKvCacheSuggested, this,
            [this](qint64 bytes) { m_cpuKvGiB->setValue(std::ceil(double(bytes) / kGiB * 100.0) / 100.0); });

    m_profileBox = new QComboBox(this);
    m_profileBox->setObjectName(QStringLiteral("profileBox"));
    m_profileBox->setMinimumContentsLength(14);
    m_loadProfile = new QPushButton(this);
    m_saveProfile = new QPushButton(this);
    m_deleteProfile = new QPushButton(this);
    m_exportYaml = new QPushButton(this);
    m_importYaml = new QPushButton(this);
    m_apply = new QPushButton(this);
    m_apply->setObjectName(QStringLiteral("applyServing"));
    m_apply->setDefault(true);
    m_profileMessage = new QLabel(this);
    m_profileMessage->setWordWrap(true);

    auto* profiles = new QHBoxLayout;
    profiles->addWidget(m_profileBox, 1);
    for (QPushButton* b : {m_loadProfile, m_saveProfile, m_deleteProfile, m_exportYaml, m_importYaml})
        profiles->addWidget(b);
    auto* left = new QVBoxLayout;
    left->addLayout(knobs);
    left->addStretch(1);
    auto* right = new QVBoxLayout;
    right->addWidget(m_modelLabel);
    right->addWidget(m_plan, 1);
    auto* columns = new QHBoxLayout;
    columns->addLayout(left, 2);
    columns->addSpacing(16);
    columns->addLayout(right, 3);
    auto* bottom = new QHBoxLayout;
    bottom->addLayout(profiles, 1);
    bottom->addSpacing(16);
    bottom->addWidget(m_apply);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(columns, 1);
    layout->addWidget(m_profileMessage);
    layout->addLayout(bottom);

    for (QComboBox* box : {m_device, m_dtype, m_quantization, m_blockSize, m_policy, m_shape})
        connect(box, &QComboBox::currentIndexChanged, this, &ServingParametersPanel::updatePlan);
    for (QSpinBox* spin : {m_maxModelLen, m_maxNumSeqs, m_maxBatchedTokens})
        connect(spin, &QSpinBox::valueChanged, this, &ServingParametersPanel::updatePlan);
    for (QDoubleSpinBox* spin : {m_gpuUtilization, m_cpuKvGiB, m_planGiB})
        connect(spin, &QDoubleSpinBox::valueChanged, this, &ServingParametersPanel::updatePlan);
    connect(m_cudaGraphs, &QCheckBox::toggled, this, &ServingParametersPanel::updatePlan);
    connect(m_apply, &QPushButton::clicked, this, [this] { emit applyRequested(options()); });
    connect(m_saveProfile, &QPushButton::clicked, this, &ServingParametersPanel::handleSaveProfile);
    connect(m_loadProfile, &QPushButton::clicked, this, [this] { loadProfile(m_profileBox->currentText()); });
    connect(m_deleteProfile, &QPushButton::clicked, this, [this] { deleteProfile(m_profileBox->currentText()); });
    connect(m_exportYaml, &QPushButton::clicked, this, &ServingParametersPanel::handleExportYaml);
    connect(m_importYaml, &QPushButton::clicked, this, &ServingParametersPanel::handleImportYaml);

    m_profiles = ServingProfile::listFromJson(m_settings.servingProfiles());
    refreshProfileBox({});
    setOptions(m_settings.servingOptions());
    retranslateUi();
}

void ServingParametersPanel::setOptions(const LaunchOptions& o)
{
    const QSignalBlocker blockers[] = {
        QSignalBlocker(m_device),         QSignalBlocker(m_dtype),      QSignalBlocker(m_quantization),
        QSignalBlocker(m_maxModelLen),    QSignalBlocker(m_maxNumSeqs), QSignalBlocker(m_maxBatchedTokens),
        QSignalBlocker(m_gpuUtilization), QSignalBlocker(m_cpuKvGiB),   QSignalBlocker(m_blockSize),
        QSignalBlocker(m_cudaGraphs),     QSignalBlocker(m_policy)};
    selectData(m_device, QString::fromStdString(o.device));
    selectData(m_dtype, QString::fromStdString(o.dtype));
    selectData(m_quantization, QString::fromStdString(o.quantization));
    if (!itemEnabled(m_quantization, m_quantization->currentIndex())) {
        // A profile made for another model: its quantization would fail on this one.
        showProfileMessage([q = QString::fromStdString(o.quantization)] {
            return tr("Quantization %1 does not suit the loaded model; none is used.").arg(q);
        });
        m_quantization->setCurrentIndex(0);
    }
    m_maxModelLen->setValue(o.maxModelLen);
    m_maxNumSeqs->setValue(o.maxNumSeqs);
    m_maxBatchedTokens->setValue(o.maxNumBatchedTokens);
    m_gpuUtilization->setValue(o.gpuMemoryUtilization);
    m_cpuKvGiB->setValue(double(o.cpuKvCacheBytes) / kGiB);
    selectData(m_blockSize, QString::number(o.blockSize));
    m_cudaGraphs->setChecked(!o.enforceEager);
    selectData(m_policy, QString::fromStdString(o.schedulingPolicy));
    updatePlan();
}

LaunchOptions ServingParametersPanel::options() const
{
    LaunchOptions o = ServingProfile::desktopDefaults();
    o.device = dataOf(m_device).toStdString();
    o.dtype = dataOf(m_dtype).toStdString();
    // A greyed-out choice is never applied, whichever way it got selected.
    if (itemEnabled(m_quantization, m_quantization->currentIndex()))
        o.quantization = dataOf(m_quantization).toStdString();
    o.maxModelLen = m_maxModelLen->value();
    o.maxNumSeqs = m_maxNumSeqs->value();
    o.maxNumBatchedTokens = m_maxBatchedTokens->value();
    o.gpuMemoryUtilization = m_gpuUtilization->value();
    o.cpuKvCacheBytes = int64_t(std::llround(m_cpuKvGiB->value() * kGiB));
    o.blockSize = dataOf(m_blockSize).toInt();
    o.enforceEager = !m_cudaGraphs->isChecked();
    o.schedulingPolicy = dataOf(m_policy).toStdString();
    return o;
}

CapacityInput ServingParametersPanel::plannerInput() const
{
    const LaunchOptions o = options();
    CapacityInput in;
    static_cast<ServingSettings&>(in) = o;  // the same knobs, one struct
    in.model = m_shape->currentIndex() == 1 ? ernie03bShape() : m_model;
    if (in.device == "auto") in.device = cudaAvailable() ? "cuda" : "cpu";
    in.deviceTotalBytes = int64_t(m_planGiB->value() * kGiB);
    return in;
}

void ServingParametersPanel::setPlanDeviceGiB(double gib) { m_planGiB->setValue(gib); }
void ServingParametersPanel::setPlanForErnie03b(bool ernie) { m_shape->setCurrentIndex(ernie ? 1 : 0); }

void ServingParametersPanel::updatePlan()
{
    const CapacityInput in = plannerInput();
    const bool cpu = in.device == "cpu";
    m_gpuUtilization->setEnabled(!cpu);
    m_cudaGraphs->setEnabled(!cpu);
    // Quantization applies on both devices: the CPU keeps int8 Linears 8-bit (less memory, fewer
    // bytes a decode streams) and runs 4-bit ones dequantized.
    m_planGiB->setEnabled(!cpu);
    m_cpuKvGiB->setEnabled(cpu);
    m_maxModelLen->setMaximum(in.model.maxPositionEmbeddings > 0 ? std::max(in.model.maxPositionEmbeddings * 2, 1024)
                                                                 : 1 << 20);
    m_plan->showPlan(CapacityPlanner::plan(in), in);
    if (m_engine) {
        // What the engine really holds now (activations grow with the first batches).
        const EngineStats s = m_engine->stats();
        m_plan->showMeasured(&s.memory, s.numKvBlocksTotal, s.blockSize);
    }
    updateModelLabel();
    m_apply->setEnabled(m_engine && !m_loading);
}

void ServingParametersPanel::setEngine(Engine* engine, const LaunchOptions& loadedWith)
{
    m_engine = engine;
    if (engine) {
        m_model = engine->modelConfig();
        const EngineStats s = engine->stats();
        m_plan->showMeasured(&s.memory, s.numKvBlocksTotal, s.blockSize);
        if (s.memory.deviceTotalBytes > 0) m_planGiB->setValue(double(s.memory.deviceTotalBytes) / kGiB);
        m_modelDir = QString::fromStdString(utf8FromPath(loadedWith.modelDir));
        updateQuantizationChoices();
        setOptions(loadedWith);
        // The app caps its context setting at the model's own: show what was really loaded.
        m_maxModelLen->setValue(engine->config().maxModelLen);
    } else {
        m_plan->showMeasured(nullptr, 0, 0);
    }
    retranslateUi();
}

void ServingParametersPanel::showProfileMessage(std::function<QString()> text)
{
    // Kept as a function, so a language switch rewrites the line in the new language.
    m_profileMessageText = std::move(text);
    m_profileMessage->setText(m_profileMessageText ? m_profileMessageText() : QString());
}

QString ServingParametersPanel::profileMessage() const { return m_profileMessage->text(); }

void ServingParametersPanel::updateQuantizationChoices()
{
    // Grey out what the loaded model cannot take (the load's own check, through the planner): a
    // group size that does not divide its dimensions, AWQ without an AWQ checkpoint.
    auto* model = qobject_cast<QStandardItemModel*>(m_quantization->model());
    for (int i = 1; i < m_quantization->count(); ++i) {
        CapacityInput in;
        in.model = m_model;
        in.device = "cpu";
        in.quantization = m_quantization->itemData(i).toString().toStdString();
        const CapacityPlan plan = CapacityPlanner::plan(in);
        const bool applies = plan.problem != CapacityProblem::QuantizationDoesNotApply;
        model->item(i)->setEnabled(applies);
        m_quantization->setItemData(
            i, applies ? QVariant() : QVariant(GuiTerms::fromCli(QString::fromStdString(plan.quantizationError))),
            Qt::ToolTipRole);
    }
}

void ServingParametersPanel::setLoading(bool loading)
{
    m_loading = loading;
    m_apply->setText(loading ? tr("Reloading…") : tr("Apply and reload the model"));
    updatePlan();
}

QString ServingParametersPanel::currentProfileName() const { return m_profileBox->currentText(); }

void ServingParametersPanel::refreshProfileBox(const QString& select)
{
    const QSignalBlocker blocker(m_profileBox);
    m_profileBox->clear();
    for (const ServingProfile& p : m_profiles) m_profileBox->addItem(p.name);
    const int i = m_profileBox->findText(select);
    if (i >= 0) m_profileBox->setCurrentIndex(i);
    const bool any = !m_profiles.isEmpty();
    m_loadProfile->setEnabled(any);
    m_deleteProfile->setEnabled(any);
}

void ServingParametersPanel::storeProfiles() { m_settings.setServingProfiles(ServingProfile::listToJson(m_profiles)); }

bool ServingParametersPanel::saveProfile(const QString& name)
{
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty()) return false;
    ServingProfile p;
    p.name = trimmed;
    p.options = options();
    bool replaced = false;
    for (ServingProfile& existing : m_profiles)
        if (existing.name == trimmed) {
            existing = p;
            replaced = true;
        }
    if (!replaced) m_profiles << p;
    storeProfiles();
    refreshProfileBox(trimmed);
    showProfileMessage([trimmed] { return tr("Saved the profile \"%1\".").arg(trimmed); });
    return true;
}

bool ServingParametersPanel::loadProfile(const QString& name)
{
    for (const ServingProfile& p : m_profiles) {
        if (p.name != name) continue;
        setOptions(p.options);
        refreshProfileBox(name);
        showProfileMessage(
            [name] { return tr("Loaded the profile \"%1\": apply it to reload the model.").arg(name); });
        return true;
    }
    return false;
}

void ServingParametersPanel::deleteProfile(const QString& name)
{
    m_profiles.erase(
        std::remove_if(m_profiles.begin(), m_profiles.end(), [&](const ServingProfile& p) { return p.name == name; }),
        m_profiles.end());
    storeProfiles();
    refreshProfileBox({});
}

bool ServingParametersPanel::exportProfileYaml(const QString& path, QString* error)
{
    QString why;
    const bool written = writeProfileYaml(path, &why);
    if (written) showProfileMessage([path] { return tr("Wrote %1: run brook-serve --config %1").arg(path); });
    else showProfileMessage([path, why] { return tr("Could not write %1: %2").arg(path, why); });
    if (error) *error = why;
    return written;
}

bool ServingParametersPanel::writeProfileYaml(const QString& path, QString* error) const
{
    ServingProfile p;
    p.name = m_profileBox->currentText().isEmpty() ? QFileInfo(path).completeBaseName() : m_profileBox->currentText();
    p.options = options();
    QFile file(path);
    const QByteArray yaml = p.toServeYaml(m_modelDir).toUtf8();
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(yaml) != yaml.size()) {
        if (error) *error = file.errorString();
        return false;
    }
    return true;
}

bool ServingParametersPanel::importProfileYaml(const QString& path, QString* error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = file.errorString();
        return false;
    }
    auto profile = ServingProfile::fromServeYaml(QString::fromUtf8(file.readAll()), QFileInfo(path).completeBaseName());
    if (!profile) {
        if (error) *error = QString::fromStdString(profile.error());
        return false;
    }
    setOptions(profile->options);
    return saveProfile(profile->name);
}

void ServingParametersPanel::handleSaveProfile()
{
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Save serving profile"), tr("Profile name:"), QLineEdit::Normal,
                                               m_profileBox->currentText(), &ok);
    if (ok) saveProfile(name);
}

void ServingParametersPanel::handleExportYaml()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export as brook-serve YAML"),
        (m_profileBox->currentText().isEmpty() ? QStringLiteral("brook-serve") : m_profileBox->currentText()) +
            QStringLiteral(".yaml"),
        tr("YAML files (*.yaml *.yml)"));
    if (path.isEmpty()) return;
    exportProfileYaml(path);  // says how it went under the knobs
}

void ServingParametersPanel::handleImportYaml()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Import a brook-serve YAML file"), QString(),
                                                      tr("YAML files (*.yaml *.yml)"));
    if (path.isEmpty()) return;
    QString error;
    if (!importProfileYaml(path, &error))
        showProfileMessage([path, error] { return tr("Could not import %1: %2").arg(path, error); });
}

void ServingParametersPanel::retranslateUi()
{
    const QStringList labels = {tr("Device:"),
                                tr("dtype:"),
                                tr("Quantization:"),
                                tr("max-model-len:"),
                                tr("max-num-seqs:"),
                                tr("max-num-batched-tokens:"),
                                tr("gpu-memory-utilization:"),
                                tr("CPU KV cache (GiB):"),
                                tr("Block size:"),
                                tr("CUDA graphs:"),
                                tr("Scheduling policy:"),
                                tr("Plan for a GPU of (GiB):"),
                                tr("Model to plan for:")};
    for (int i = 0; i < m_labels.size(); ++i) m_labels[i]->setText(labels[i]);
    m_quantization->setItemText(0, tr("none"));
    m_maxModelLen->setSpecialValueText(tr("the model's own"));
    m_cudaGraphs->setText(tr("capture decode steps (off: enforce-eager)"));
    m_maxModelLen->setToolTip(tr("Prompt plus output tokens of one request."));
    m_maxNumSeqs->setToolTip(tr("Requests batched together at most."));
    m_maxBatchedTokens->setToolTip(
        tr("Tokens computed in one engine step at most: prefill chunks and decodes share it."));
    m_gpuUtilization->setToolTip(
        tr("Fraction of the GPU's memory Brook may take; the KV cache gets what weights and activations leave."));
    m_loadProfile->setText(tr("Load"));
    m_saveProfile->setText(tr("Save as…"));
    m_deleteProfile->setText(tr("Delete"));
    m_exportYaml->setText(tr("Export YAML…"));
    m_importYaml->setText(tr("Import YAML…"));
    m_apply->setText(m_loading ? tr("Reloading…") : tr("Apply and reload the model"));
    m_shape->setItemText(0, tr("the loaded model"));
    if (m_profileMessageText) m_profileMessage->setText(m_profileMessageText());
    updateModelLabel();
}

void ServingParametersPanel::updateModelLabel()
{
    if (m_engine && m_shape->currentIndex() == 0)
        m_modelLabel->setText(tr("Planning for %1 (%2 layers, %3 KV heads × %4)")
                                  .arg(QString::fromStdString(m_engine->config().modelName))
                                  .arg(m_model.numLayers)
                                  .arg(m_model.numKvHeads)
                                  .arg(m_model.headDim));
    else
        m_modelLabel->setText(m_engine ? tr("Planning for the ERNIE-4.5-0.3B shape.")
                                       : tr("Planning for the ERNIE-4.5-0.3B shape (no model loaded)."));
}

void ServingParametersPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
