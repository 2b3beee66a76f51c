// AppSettings: the app's persisted preferences (QSettings): language, theme, window layout,
// recent models, engine launch choices, hub source, local endpoint and prompt presets.
// Typed accessors so keys live in one place. GUI thread only.
#pragma once

#include "launch/launch_options.h"
#include "gui/chat/preset_library.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QSettings>
#include <QString>
#include <QStringList>

#include <memory>

namespace brook {

class AppSettings {
public:
    static constexpr int kMaxRecentModels = 8;

    // Empty path: the platform's native store for the application; else an INI file (tests).
    explicit AppSettings(const QString& iniPath = {});

    QString language() const;  // "en" or "zh_CN"; the system's by default
    void setLanguage(const QString& language);
    QString theme() const;  // "system", "light" or "dark"
    void setTheme(const QString& theme);
    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);
    QByteArray windowState() const;
    void setWindowState(const QByteArray& state);

    // The conversations open in tabs when the window closed, in tab order (reopened at start).
    QList<qint64> openConversations() const;
    void setOpenConversations(const QList<qint64>& ids);
    // Enter sends and Shift+Enter starts a new line (on by default); off: Enter is a new line.
    // Ctrl+Enter sends either way.
    bool enterSends() const;
    void setEnterSends(bool enabled);

    QStringList recentModels() const;  // newest first
    // When each model folder was last loaded (the Models page's "Last used").
    QHash<QString, QDateTime> modelsLastUsed() const;
    void setModelUsed(const QString& dir, const QDateTime& when);
    void addRecentModel(const QString& dir);

    QString device() const;   // auto | cpu | cuda
    int maxModelLen() const;  // 0: the model's own
    LaunchOptions launchOptions(const QString& modelDir) const;
    // The serving knobs every load uses (ServingProfile's fields): the desktop defaults, with the
    // device and context length above, until the performance window applies others.
    LaunchOptions servingOptions() const;
    void setServingOptions(const LaunchOptions& options);
    QJsonArray servingProfiles() const;  // ServingProfile::listToJson
    void setServingProfiles(const QJsonArray& profiles);

    QString hubEndpoint() const;  // empty: https://huggingface.co (or HF_ENDPOINT)
    void setHubEndpoint(const QString& endpoint);

    QString serverHost() const;
    void setServerHost(const QString& host);
    int serverPort() const;
    void setServerPort(int port);
    QString serverApiKey() const;
    void setServerApiKey(const QString& key);

    PresetLibrary presets() const;
    void setPresets(const PresetLibrary& presets);
    bool autoPreset() const;  // pick a preset by keywords when sending
    void setAutoPreset(bool enabled);

    void sync();
    QString fileName() const { return m_settings->fileName(); }

private:
    std::unique_ptr<QSettings> m_settings;
};

}  // namespace brook
