#include "gui/shell/app_settings.h"

#include "engine/utf8_path.h"

#include "gui/performance/serving_profile.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

namespace brook {

AppSettings::AppSettings(const QString& iniPath)
    : m_settings(iniPath.isEmpty() ? std::make_unique<QSettings>()
                                   : std::make_unique<QSettings>(iniPath, QSettings::IniFormat))
{}

QString AppSettings::language() const
{
    const QString fallback =
        QLocale::system().language() == QLocale::Chinese ? QStringLiteral("zh_CN") : QStringLiteral("en");
    const QString value = m_settings->value("ui/language", fallback).toString();
    return value == QLatin1String("zh_CN") ? value : QStringLiteral("en");
}

void AppSettings::setLanguage(const QString& language) { m_settings->setValue("ui/language", language); }

QString AppSettings::theme() const
{
    const QString value = m_settings->value("ui/theme", "system").toString();
    return value == QLatin1String("light") || value == QLatin1String("dark") ? value : QStringLiteral("system");
}

void AppSettings::setTheme(const QString& theme) { m_settings->setValue("ui/theme", theme); }
QByteArray AppSettings::windowGeometry() const { return m_settings->value("ui/geometry").toByteArray(); }
void AppSettings::setWindowGeometry(const QByteArray& g) { m_settings->setValue("ui/geometry", g); }
QByteArray AppSettings::windowState() const { return m_settings->value("ui/state").toByteArray(); }
void AppSettings::setWindowState(const QByteArray& s) { m_settings->setValue("ui/state", s); }

QList<qint64> AppSettings::openConversations() const
{
    QList<qint64> ids;
    for (const QString& id : m_settings->value("chats/open").toStringList())
        if (const qint64 value = id.toLongLong(); value > 0) ids << value;
    return ids;
}

void AppSettings::setOpenConversations(const QList<qint64>& ids)
{
    QStringList list;
    for (qint64 id : ids) list << QString::number(id);
    m_settings->setValue("chats/open", list);
}

bool AppSettings::enterSends() const { return m_settings->value("chats/enterSends", true).toBool(); }
void AppSettings::setEnterSends(bool enabled) { m_settings->setValue("chats/enterSends", enabled); }

QHash<QString, QDateTime> AppSettings::modelsLastUsed() const
{
    QHash<QString, QDateTime> out;
    const QVariantMap map = m_settings->value("models/lastUsed").toMap();
    for (auto it = map.begin(); it != map.end(); ++it) out.insert(it.key(), it.value().toDateTime());
    return out;
}

void AppSettings::setModelUsed(const QString& dir, const QDateTime& when)
{
    QVariantMap map = m_settings->value("models/lastUsed").toMap();  // one value: folder paths make poor keys
    map.insert(dir, when);
    m_settings->setValue("models/lastUsed", map);
}

QStringList AppSettings::recentModels() const { return m_settings->value("models/recent").toStringList(); }

void AppSettings::addRecentModel(const QString& dir)
{
    QStringList list = recentModels();
    list.removeAll(dir);
    list.prepend(dir);
    while (list.size() > kMaxRecentModels) list.removeLast();
    m_settings->setValue("models/recent", list);
}

QString AppSettings::device() const { return m_settings->value("engine/device", "auto").toString(); }
int AppSettings::maxModelLen() const { return m_settings->value("engine/maxModelLen", 8192).toInt(); }

LaunchOptions AppSettings::launchOptions(const QString& modelDir) const
{
    LaunchOptions o = servingOptions();
    o.modelDir = pathFromUtf8(modelDir.toStdString());
    return o;
}

LaunchOptions AppSettings::servingOptions() const
{
    const QByteArray json = m_settings->value("serving/options").toByteArray();
    if (!json.isEmpty()) return ServingProfile::fromJson(QJsonDocument::fromJson(json).object()).options;
    // A desktop serves a handful of panes plus the local endpoint, not hundreds of streams.
    LaunchOptions o = ServingProfile::desktopDefaults();
    o.device = device().toStdString();
    o.maxModelLen = maxModelLen();
    return o;
}

void AppSettings::setServingOptions(const LaunchOptions& options)
{
    ServingProfile p;
    p.options = options;
    m_settings->setValue("serving/options", QJsonDocument(p.toJson()).toJson(QJsonDocument::Compact));
}

QJsonArray AppSettings::servingProfiles() const
{
    return QJsonDocument::fromJson(m_settings->value("serving/profiles").toByteArray()).array();
}

void AppSettings::setServingProfiles(const QJsonArray& profiles)
{
    m_settings->setValue("serving/profiles", QJsonDocument(profiles).toJson(QJsonDocument::Compact));
}

QString AppSettings::hubEndpoint() const { return m_settings->value("hub/endpoint").toString(); }
void AppSettings::setHubEndpoint(const QString& endpoint) { m_settings->setValue("hub/endpoint", endpoint.trimmed()); }

QString AppSettings::serverHost() const { return m_settings->value("server/host", "127.0.0.1").toString(); }
void AppSettings::setServerHost(const QString& host) { m_settings->setValue("server/host", host.trimmed()); }
int AppSettings::serverPort() const { return m_settings->value("server/port", 8000).toInt(); }
void AppSettings::setServerPort(int port) { m_settings->setValue("server/port", port); }
QString AppSettings::serverApiKey() const { return m_settings->value("server/apiKey").toString(); }
void AppSettings::setServerApiKey(const QString& key) { m_settings->setValue("server/apiKey", key); }

PresetLibrary AppSettings::presets() const
{
    const QByteArray json = m_settings->value("presets/json").toByteArray();
    return PresetLibrary::fromJson(QJsonDocument::fromJson(json).array());
}

void AppSettings::setPresets(const PresetLibrary& presets)
{
    m_settings->setValue("presets/json", QJsonDocument(presets.toJson()).toJson(QJsonDocument::Compact));
}

bool AppSettings::autoPreset() const { return m_settings->value("chat/autoPreset", false).toBool(); }
void AppSettings::setAutoPreset(bool enabled) { m_settings->setValue("chat/autoPreset", enabled); }

void AppSettings::sync() { m_settings->sync(); }

}  // namespace brook
