// Translations: translations/brook_zh_CN.ts has no unfinished or empty entry, stays so when
// lupdate re-scans the sources (a new tr() string without a Chinese translation fails here), every
// %1 placeholder survives translation, and the embedded catalogue switches the UI at run time.
#include "gui/shell/translation_manager.h"

#include <QCoreApplication>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

using namespace brook;

namespace {

struct Entry {
    QString context, source, translation;
    bool unfinished = false;
    bool vanished = false;
};

QList<Entry> readTs(const QString& path)
{
    QList<Entry> out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return out;
    QXmlStreamReader xml(&file);
    QString context;
    Entry current;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement()) continue;
        if (xml.name() == QLatin1String("name")) context = xml.readElementText();
        else if (xml.name() == QLatin1String("message")) current = Entry{context, {}, {}, false, false};
        else if (xml.name() == QLatin1String("source")) current.source = xml.readElementText();
        else if (xml.name() == QLatin1String("translation")) {
            const QString type = xml.attributes().value(QLatin1String("type")).toString();
            current.unfinished = type == QLatin1String("unfinished");
            current.vanished = type == QLatin1String("vanished") || type == QLatin1String("obsolete");
            current.translation = xml.readElementText();
            out.append(current);
        }
    }
    return out;
}

QString describe(const Entry& e) { return e.context + QStringLiteral(": \"") + e.source + QLatin1Char('"'); }

QStringList placeholders(const QString& text)
{
    QStringList out;
    auto it = QRegularExpression(QStringLiteral("%\\d")).globalMatch(text);
    while (it.hasNext()) out << it.next().captured();
    out.sort();
    return out;
}

void checkComplete(const QList<Entry>& entries)
{
    QStringList problems;
    for (const Entry& e : entries) {
        if (e.vanished) continue;
        if (e.unfinished || e.translation.trimmed().isEmpty()) problems << QStringLiteral("unfinished ") + describe(e);
        else if (placeholders(e.source) != placeholders(e.translation))
            problems << QStringLiteral("placeholders differ ") + describe(e);
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
}

}  // namespace

class TestTranslations : public QObject {
    Q_OBJECT
private slots:
    void chineseCatalogueIsComplete()
    {
        const QList<Entry> entries = readTs(QStringLiteral(BROOK_SOURCE_DIR "/translations/brook_zh_CN.ts"));
        QVERIFY(entries.size() > 150);
        checkComplete(entries);
    }

    void everySourceStringIsInTheCatalogue()
    {
        // lupdate re-scans the GUI sources into a copy: strings added since the .ts was last
        // updated come in unfinished and fail the check above.
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("brook_zh_CN.ts"));
        QVERIFY(QFile::copy(QStringLiteral(BROOK_SOURCE_DIR "/translations/brook_zh_CN.ts"), copy));
        QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
        QProcess lupdate;
        lupdate.start(QStringLiteral(BROOK_LUPDATE),
                      {QStringLiteral("-I"), QStringLiteral(BROOK_SOURCE_DIR "/src"), QStringLiteral("-no-obsolete"),
                       QStringLiteral("-locations"), QStringLiteral("none"),
                       QStringLiteral(BROOK_SOURCE_DIR "/src/gui"),
                       QStringLiteral(BROOK_SOURCE_DIR "/src/app/gui_main.cpp"), QStringLiteral("-ts"), copy});
        QVERIFY(lupdate.waitForFinished(120000));
        QVERIFY2(lupdate.exitCode() == 0, lupdate.readAllStandardError().constData());
        const QList<Entry> entries = readTs(copy);
        QVERIFY(entries.size() > 150);
        checkComplete(entries);
        // Contexts carry the namespace, as tr() does at run time.
        QVERIFY(std::any_of(entries.begin(), entries.end(),
                            [](const Entry& e) { return e.context == QLatin1String("brook::MainWindow"); }));
    }

    void theEmbeddedCatalogueSwitchesAtRunTime()
    {
        TranslationManager manager;
        QCOMPARE(QCoreApplication::translate("brook::MainWindow", "&File"), QStringLiteral("&File"));
        QVERIFY(manager.setLanguage(QStringLiteral("zh_CN")));
        QCOMPARE(manager.language(), QStringLiteral("zh_CN"));
        QCOMPARE(QCoreApplication::translate("brook::MainWindow", "&File"), QStringLiteral("文件(&F)"));
        QCOMPARE(QCoreApplication::translate("brook::ChatPane", "Send"), QStringLiteral("发送"));
        QVERIFY(manager.setLanguage(QStringLiteral("en")));
        QCOMPARE(QCoreApplication::translate("brook::MainWindow", "&File"), QStringLiteral("&File"));
        QVERIFY(!manager.setLanguage(QStringLiteral("xx_YY")));  // unknown: stays English
        QCOMPARE(manager.language(), QStringLiteral("en"));
    }
};

QTEST_GUILESS_MAIN(TestTranslations)
#include "test_translations.moc"
