// TranslationManager: switches the UI language at run time. It installs Brook's translator (the
// .qm files qt_add_translations embeds under :/i18n/) and Qt's own for dialogs; Qt then sends
// every widget a LanguageChange event and each retranslates itself. GUI thread only.
#pragma once

#include <QObject>
#include <QStringList>
#include <QTranslator>

namespace brook {

class TranslationManager : public QObject {
    Q_OBJECT
public:
    explicit TranslationManager(QObject* parent = nullptr);
    ~TranslationManager() override;

    static QStringList languages() { return {QStringLiteral("en"), QStringLiteral("zh_CN")}; }
    static QString resourcePath(const QString& language);  // ":/i18n/brook_zh_CN.qm"

    QString language() const { return m_language; }
    // False (and English stays) when the language's catalogue cannot be loaded.
    bool setLanguage(const QString& language);

signals:
    void languageChanged(const QString& language);

private:
    void removeTranslators();

    QString m_language = QStringLiteral("en");
    QTranslator m_app;
    QTranslator m_qt;
    bool m_installed = false;
};

}  // namespace brook
