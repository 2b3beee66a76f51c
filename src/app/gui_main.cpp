// brook: the desktop app. Wires the pieces together: settings, the history database, the
// translations, the log sink feeding the log view, and the main window (which owns the engine).
//
//   brook [--model DIR] [--data-dir DIR] [--language en|zh_CN] [--theme system|light|dark] [--import FILE.json]
//         [--screenshot FILE.png]
#include "gui/shell/app_settings.h"
#include "gui/shell/engine_controller.h"
#include "gui/shell/engine_host.h"
#include "gui/shell/gui_log_sink.h"
#include "gui/chat/history_store.h"
#include "gui/shell/event_loop_lag_monitor.h"
#include "gui/shell/main_window.h"
#include "gui/shell/theme_manager.h"
#include "gui/shell/translation_manager.h"
#include "platform/heap_trimmer.h"
#include "platform/server_malloc.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QPixmap>
#include <QSettings>
#include <QStandardPaths>
#include <QStyleFactory>
#include <QTimer>

#include <spdlog/spdlog.h>

int main(int argc, char** argv)
{
    // Before any thread starts: malloc set up for the engine's and the endpoint's threads
    // (server_malloc.h).
    brook::useServerMalloc(argv);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Brook"));
    QApplication::setApplicationName(QStringLiteral("Brook"));
    QApplication::setApplicationVersion(QStringLiteral(BROOK_VERSION));
#ifdef Q_OS_WIN
    // Settings in %APPDATA%\Brook\Brook.ini rather than the registry: beside the history (in
    // AppDataLocation), kept by the uninstaller, and easy to copy or reset. Linux keeps its native
    // format, already an INI file (~/.config/Brook/Brook.conf).
    QSettings::setDefaultFormat(QSettings::IniFormat);
#endif
    QApplication::setStyle(
        QStyleFactory::create(QStringLiteral("Fusion")));  // the same look, light or dark, everywhere

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Brook: chat with ERNIE-4.5 on this computer"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption model(QStringLiteral("model"), QStringLiteral("Model folder to load at start."),
                                   QStringLiteral("dir"));
    const QCommandLineOption dataDir(
        QStringLiteral("data-dir"),
        QStringLiteral("Folder for the history database and settings (default: the user's app data)."),
        QStringLiteral("dir"));
    const QCommandLineOption language(QStringLiteral("language"), QStringLiteral("en or zh_CN."),
                                      QStringLiteral("language"));
    const QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("system, light or dark."),
                                   QStringLiteral("theme"));
    const QCommandLineOption import(QStringLiteral("import"),
                                    QStringLiteral("Import a conversation (OpenAI JSON) at start."),
                                    QStringLiteral("file"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Save the main window as a PNG once it is shown (and the model loaded or failed), then quit."),
        QStringLiteral("file"));
    const QCommandLineOption serve(
        QStringLiteral("serve"),
        QStringLiteral("Start the local OpenAI-compatible endpoint once the model is loaded (the saved host and port)."));
    const QCommandLineOption port(QStringLiteral("port"),
                                  QStringLiteral("With --serve: the port to serve on (0: any free port, logged)."),
                                  QStringLiteral("port"));
    parser.addOptions({model, dataDir, language, theme, import, screenshot, serve, port});
    parser.process(app);

    // Every spdlog line (engine, server, app) also goes to the log view.
    auto sink = std::make_shared<brook::GuiLogSink>();
    spdlog::default_logger()->sinks().push_back(sink);

    const QString data = parser.isSet(dataDir) ? QDir(parser.value(dataDir)).absolutePath()
                                               : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(data);
    brook::AppSettings settings(parser.isSet(dataDir) ? QDir(data).filePath(QStringLiteral("brook.ini")) : QString());

    brook::TranslationManager translations;
    translations.setLanguage(parser.isSet(language) ? parser.value(language) : settings.language());
    brook::ThemeManager themes;
    themes.apply(parser.isSet(theme) ? parser.value(theme) : settings.theme());

    brook::HistoryStore store;
    if (auto opened = store.open(QDir(data).filePath(QStringLiteral("history.sqlite"))); !opened) {
        QMessageBox::critical(nullptr, QStringLiteral("Brook"),
                              QApplication::translate("main", "Cannot open the conversation history:\n%1")
                                  .arg(QString::fromStdString(opened.error())));
        return 1;
    }

    brook::MainWindow window(settings, store, translations, themes, sink);
    window.show();
    // The app runs for days with an engine and a server in it: return freed heap pages, and log
    // it when the GUI thread stops answering for more than 100 ms.
    const brook::HeapTrimmer heapTrimmer;
    const brook::EventLoopLagMonitor lagMonitor;
    if (parser.isSet(serve)) {
        brook::LocalEndpoint::Settings endpoint;
        endpoint.host = settings.serverHost();
        endpoint.port = settings.serverPort();
        endpoint.apiKey = settings.serverApiKey();
        if (parser.isSet(port)) {
            bool ok = false;
            endpoint.port = parser.value(port).toInt(&ok);
            if (!ok || endpoint.port < 0 || endpoint.port > 65535) {
                spdlog::error("--port must be a number from 0 to 65535, not '{}'", parser.value(port).toStdString());
                return 1;
            }
        }
        QObject::connect(&window.engineHost(), &brook::EngineHost::modelLoaded, &window, [&window, endpoint] {
            if (auto started = window.controller().startEndpoint(endpoint); !started)
                spdlog::error("the local endpoint did not start: {}", started.error());
        }, Qt::SingleShotConnection);  // a later load moves a serving endpoint by itself
    }
    if (parser.isSet(screenshot)) {
        // Proves on a machine without a display (QT_QPA_PLATFORM=offscreen) that the window comes
        // up: the packaging checks run the installed app this way. Exit code: 0 written, 2 not
        // written, 3 written but the model failed to load.
        const QString file = parser.value(screenshot);
        auto shoot = [&window, file](bool loaded) {
            QTimer::singleShot(500, &window, [&window, file, loaded] {  // let the last layout settle
                const bool saved = window.isVisible() && window.grab().save(file, "PNG");
                QApplication::exit(!saved ? 2 : loaded ? 0 : 3);
            });
        };
        if (parser.isSet(model)) {
            QObject::connect(&window.engineHost(), &brook::EngineHost::modelLoaded, &window, [shoot] { shoot(true); });
            QObject::connect(&window.engineHost(), &brook::EngineHost::modelLoadFailed, &window,
                             [shoot] { shoot(false); });
        } else {
            shoot(true);
        }
    }
    for (const QString& file : parser.values(import))
        if (const QString error = window.importConversation(file); !error.isEmpty())
            spdlog::error("{}", error.toStdString());
    if (parser.isSet(model)) {
        window.loadModel(QFileInfo(parser.value(model)).absoluteFilePath());
    } else if (const QStringList recent = settings.recentModels();
               !recent.isEmpty() && QFileInfo(recent.first()).isDir()) {
        window.loadModel(recent.first());  // the model used last time
    }
    const int code = app.exec();
    spdlog::default_logger()->sinks().pop_back();  // the sink's receiver is gone with the window
    return code;
}
