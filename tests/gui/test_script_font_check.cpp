// Chinese without a Chinese font: the window says which package to install. The test runs itself
// as a child process whose fontconfig sees no fonts at all (FONTCONFIG_FILE naming an empty
// folder), as on a minimal install; there the zh_CN window shows the notice and the English one
// does not. With the machine's own fonts (scripts/install-deps.sh installs fonts-noto-cjk) a
// Chinese font is found and no notice is shown.
#include "gui/chat/history_store.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/gui_log_sink.h"
#include "gui/shell/main_window.h"
#include "gui/shell/script_font_check.h"
#include "gui/shell/theme_manager.h"
#include "gui/shell/translation_manager.h"

#include <QApplication>
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdio>

using namespace brook;

namespace {

// The child: a zh_CN window, then English, reporting what the notice showed in each.
int runWindowChild(const QString& dataDir)
{
    if (ScriptFontCheck::canDraw(QStringLiteral("zh_CN"))) return 3;  // the empty fontconfig did not take
    AppSettings settings(QDir(dataDir).filePath(QStringLiteral("brook.ini")));
    HistoryStore store;
    if (!store.open(QDir(dataDir).filePath(QStringLiteral("history.sqlite"))).ok()) return 4;
    TranslationManager translations;
    if (!translations.setLanguage(QStringLiteral("zh_CN"))) return 5;
    ThemeManager theme;
    MainWindow window(settings, store, translations, theme, std::make_shared<GuiLogSink>());
    window.show();
    auto* notice = window.findChild<QLabel*>(QStringLiteral("fontNotice"));
    if (!notice) return 6;
    std::printf("zh_CN visible=%d text=%s\n", int(notice->isVisible()), notice->text().toUtf8().constData());
    translations.setLanguage(QStringLiteral("en"));
    std::printf("en visible=%d\n", int(notice->isVisible()));
    std::fflush(stdout);
    return 0;
}

}  // namespace

class TestScriptFontCheck : public QObject {
    Q_OBJECT
private slots:
    void languagesAndTheirScripts()
    {
        QCOMPARE(ScriptFontCheck::writingSystem(QStringLiteral("zh_CN")), QFontDatabase::SimplifiedChinese);
        QCOMPARE(ScriptFontCheck::writingSystem(QStringLiteral("en")), QFontDatabase::Any);
        QVERIFY(ScriptFontCheck::canDraw(QStringLiteral("en")));
        QVERIFY(ScriptFontCheck::missingFontNotice(QStringLiteral("en")).isEmpty());
    }

    void theInstalledFontsDrawChinese()
    {
        QVERIFY2(ScriptFontCheck::canDraw(QStringLiteral("zh_CN")),
                 "no font with Chinese glyphs: scripts/install-deps.sh installs fonts-noto-cjk");
        QVERIFY(ScriptFontCheck::missingFontNotice(QStringLiteral("zh_CN")).isEmpty());
    }

    void withoutAChineseFontTheWindowSaysWhatToInstall()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("no-fonts")));
        QFile config(dir.filePath(QStringLiteral("fonts.conf")));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(QStringLiteral("<?xml version=\"1.0\"?>\n<fontconfig><dir>%1</dir><cachedir>%2</cachedir></fontconfig>\n")
                         .arg(dir.filePath(QStringLiteral("no-fonts")), dir.filePath(QStringLiteral("cache")))
                         .toUtf8());
        config.close();
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("FONTCONFIG_FILE"), config.fileName());
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        child.setProcessEnvironment(env);
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--window-child"), dir.path()});
        QVERIFY(child.waitForFinished(60000));
        const QString out = QString::fromUtf8(child.readAllStandardOutput());
        QVERIFY2(child.exitStatus() == QProcess::NormalExit && child.exitCode() == 0,
                 qPrintable(QStringLiteral("child exit %1: %2").arg(child.exitCode()).arg(out)));
        QVERIFY2(out.contains(QStringLiteral("zh_CN visible=1")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("fonts-noto-cjk")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("中文")), qPrintable(out));  // the Chinese catalogue's text
        QVERIFY2(out.contains(QStringLiteral("en visible=0")), qPrintable(out));  // English needs no CJK font
    }
};

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    if (argc == 3 && QByteArray(argv[1]) == "--window-child") return runWindowChild(QString::fromLocal8Bit(argv[2]));
    TestScriptFontCheck test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_script_font_check.moc"
