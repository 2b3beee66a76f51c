#include "gui/shell/translation_manager.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>

#include <spdlog/spdlog.h>

namespace brook {

TranslationManager::TranslationManager(QObject* parent) : QObject(parent) {}

TranslationManager::~TranslationManager() { removeTranslators(); }

QString TranslationManager::resourcePath(const QString& language)
{
    return QStringLiteral(":/i18n/brook_%1.qm").arg(language);
}

void TranslationManager::removeTranslators()
{
    if (!m_installed) return;
    QCoreApplication::removeTranslator(&m_app);
    QCoreApplication::removeTranslator(&m_qt);
    m_installed = false;
}

bool TranslationManager::setLanguage(const QString& language)
{
    if (language == m_language && (m_installed || language == QLatin1String("en"))) return true;
    removeTranslators();
    bool ok = true;
    if (language != QLatin1String("en")) {
        if (m_app.load(resourcePath(language))) {
            QCoreApplication::installTranslator(&m_app);
            // Qt's own strings (dialog buttons): optional, present when qt6-translations is installed.
            if (m_qt.load(QLocale(language), QStringLiteral("qtbase"), QStringLiteral("_"),
                          QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
                QCoreApplication::installTranslator(&m_qt);
            m_installed = true;
        } else {
            spdlog::warn("no translation catalogue for '{}' at {}", language.toStdString(),
                         resourcePath(language).toStdString());
            ok = false;
        }
    }
    const QString effective = ok ? language : QStringLiteral("en");
    if (effective != m_language) {
        m_language = effective;
        QLocale::setDefault(QLocale(effective == QLatin1String("en") ? QStringLiteral("en_US") : effective));
        emit languageChanged(m_language);
    }
    return ok;
}

}  // namespace brook
