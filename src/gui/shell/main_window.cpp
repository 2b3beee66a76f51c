#include "gui/shell/main_window.h"

#include "gui/shell/app_settings.h"
#include "gui/chat/chat_area.h"
#include "gui/chat/chat_generator.h"
#include "gui/chat/chat_pane.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/conversation_actions.h"
#include "gui/chat/conversation_list_panel.h"
#include "gui/shell/download_dialog.h"
#include "gui/shell/endpoint_panel.h"
#include "gui/shell/engine_controller.h"
#include "gui/shell/engine_host.h"
#include "gui/performance/engine_monitor.h"
#include "gui/chat/history_store.h"
#include "gui/shell/local_endpoint.h"
#include "gui/shell/log_view.h"
#include "gui/shell/known_models.h"
#include "gui/shell/model_folder_check.h"
#include "gui/shell/model_downloader.h"
#include "gui/shell/model_library.h"
#include "gui/shell/models_dialog.h"
#include "gui/shell/model_panel.h"
#include "gui/shell/screen_fit.h"
#include "gui/shell/script_font_check.h"
#include "gui/performance/load_generator_panel.h"
#include "gui/performance/performance_window.h"
#include "gui/chat/preset_editor_dialog.h"
#include "gui/shell/theme_manager.h"
#include "gui/shell/translation_manager.h"
#include "gui/shell/vector_icon_engine.h"

#include "launch/engine_launcher.h"

#include <QActionGroup>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>

namespace brook {

MainWindow::MainWindow(AppSettings& settings, HistoryStore& store, TranslationManager& translations,
                       ThemeManager& theme, std::shared_ptr<GuiLogSink> logSink, QWidget* parent)
    : QMainWindow(parent), m_settings(settings), m_store(store), m_translations(translations), m_theme(theme),
      m_logSink(std::move(logSink)), m_presets(settings.presets())
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowIcon(VectorIconEngine::icon(IconShape::Logo));
    m_controller = new EngineController(this);
    m_engineHost = &m_controller->host();

    // Older versions stored every "New chat"; drafts are no longer stored, and these go.
    m_store.deleteEmptyConversations();
    m_conversations = new ConversationListPanel(m_store, this);
    m_modelPanel = new ModelPanel(this);
    m_modelPanel->setRecentModels(m_settings.recentModels());
    m_chatArea = new ChatArea(this);
    m_conversationActions = new ConversationActions(m_store, *m_chatArea, *m_conversations, this);
    m_stack = new QStackedWidget(this);
    m_stack->addWidget(m_modelPanel);
    m_stack->addWidget(m_chatArea);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_conversations);
    splitter->addWidget(m_stack);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({250, 950});
    setCentralWidget(splitter);

    createActions();
    createMenus();
    createDocks();
    m_performance = new PerformanceWindow(m_settings, this);
    connect(m_performance, &PerformanceWindow::applyRequested, this, &MainWindow::applyServingOptions);
    m_performance->loadPanel()->setEndpointProvider([this](QString* error) -> QString {
        // The load generator talks HTTP to the local endpoint, started on demand.
        return m_controller->ensureEndpoint(m_endpointPanel->settings(), error);
    });

    m_modelStatus = new QLabel(this);
    m_engineStatus = new QLabel(this);
    statusBar()->addWidget(m_modelStatus, 1);
    statusBar()->addPermanentWidget(m_engineStatus);
    m_fontNotice = new QLabel(this);
    m_fontNotice->setObjectName(QStringLiteral("fontNotice"));
    statusBar()->addWidget(m_fontNotice);
    updateFontNotice();
    connect(&m_translations, &TranslationManager::languageChanged, this, &MainWindow::updateFontNotice);
    m_statusTimer = new QTimer(this);
    m_statusTimer->setInterval(1000);
    connect(m_statusTimer, &QTimer::timeout, this, &MainWindow::handleStatusPoll);
    m_statusTimer->start();

    connect(m_controller, &EngineController::engineChanged, this, &MainWindow::handleEngineChanged);
    connect(m_controller, &EngineController::endpointFailed, m_endpointPanel, &EndpointPanel::showError);
    connect(m_engineHost, &EngineHost::modelLoaded, this, &MainWindow::handleModelLoaded);
    connect(m_engineHost, &EngineHost::modelLoadFailed, this, &MainWindow::handleModelLoadFailed);
    connect(m_engineHost, &EngineHost::loadStageChanged, m_modelPanel, &ModelPanel::showLoading);
    connect(m_engineHost, &EngineHost::memoryEstimated, m_modelPanel, &ModelPanel::showEstimate);
    connect(m_engineHost, &EngineHost::loadStageChanged, this, [this](EngineHost::Stage stage, int percent) {
        m_modelStatus->setText(ModelPanel::stageName(stage));
        m_performance->showReloadProgress(ModelPanel::stageName(stage), percent);
    });
    connect(m_modelPanel, &ModelPanel::openFolderRequested, this, &MainWindow::openModelFolder);
    connect(m_modelPanel, &ModelPanel::downloadRequested, this, &MainWindow::openDownloadDialog);
    connect(m_modelPanel, &ModelPanel::recentModelRequested, this, &MainWindow::loadModel);
    connect(m_conversations, &ConversationListPanel::conversationActivated, this,
            [this](qint64 id) { openConversation(id); });
    connect(m_conversations, &ConversationListPanel::openBesideRequested, this,
            [this](qint64 id) { openConversation(id, true); });
    connect(m_conversations, &ConversationListPanel::newConversationRequested, this, &MainWindow::newChat);
    connect(m_conversations, &ConversationListPanel::renameRequested, m_conversationActions,
            &ConversationActions::renameInteractively);
    connect(m_conversations, &ConversationListPanel::deleteRequested, m_conversationActions,
            &ConversationActions::deleteInteractively);
    connect(m_conversations, &ConversationListPanel::exportRequested, this, [this](qint64 id) {
        openConversation(id);
        m_conversationActions->exportInteractively(QStringLiteral("md"), m_engineHost->modelName());
    });
    connect(m_conversationActions, &ConversationActions::conversationImported, this,
            [this](qint64 id) { openConversation(id); });
    connect(m_conversationActions, &ConversationActions::statusMessage, this,
            [this](const QString& m) { statusBar()->showMessage(m, 5000); });
    connect(m_chatArea, &ChatArea::paneCountChanged, this, &MainWindow::updateView);
    connect(m_chatArea, &ChatArea::paneCountChanged, this, &MainWindow::saveOpenTabs);
    connect(m_chatArea, &ChatArea::currentPaneChanged, this, [this](ChatPane* pane) {
        if (pane) m_conversations->setCurrentConversation(pane->session()->conversationId());
        updateView();
    });

    ScreenFit::resizeToFit(this, QSize(1280, 820));
    restoreGeometry(m_settings.windowGeometry());
    ScreenFit::keepOnScreen(this);  // a geometry saved on a larger screen
    restoreState(m_settings.windowState());
    retranslateUi();
    updateView();
}

MainWindow::~MainWindow()
{
    // Order matters: the performance window (its load generator talks to the server) and the
    // server and the panes (whose sessions hold the generator) go first; then the controller lets
    // go of the engine and shuts it down.
    delete m_performance;
    m_performance = nullptr;
    m_controller->endpoint().stop();
    delete m_chatArea;
    m_chatArea = nullptr;
    delete m_controller;
    m_controller = nullptr;
}

EngineHost& MainWindow::engineHost() { return m_controller->host(); }
ChatGenerator& MainWindow::generator() { return m_controller->generator(); }
LocalEndpoint& MainWindow::endpoint() { return m_controller->endpoint(); }

void MainWindow::createActions()
{
    auto make = [this](IconShape icon, const QKeySequence& shortcut = {}) {
        auto* a = new QAction(VectorIconEngine::icon(icon), QString(), this);
        if (!shortcut.isEmpty()) a->setShortcut(shortcut);
        return a;
    };
    m_newChat = make(IconShape::NewChat, QKeySequence::New);
    m_openModel = make(IconShape::Folder, QKeySequence::Open);
    m_download = make(IconShape::Download);
    m_models = new QAction(this);
    m_models->setObjectName(QStringLiteral("modelsAction"));
    m_models->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_import = new QAction(this);
    m_exportMarkdown = new QAction(this);
    m_exportJson = new QAction(this);
    m_quit = new QAction(this);
    m_quit->setShortcut(QKeySequence::Quit);
    m_send = make(IconShape::Send, QKeySequence(Qt::CTRL | Qt::Key_Return));
    m_send->setShortcutContext(Qt::WidgetWithChildrenShortcut);  // the input box handles Ctrl+Enter itself
    m_stop = make(IconShape::Stop);
    m_regenerate = make(IconShape::Regenerate, QKeySequence(Qt::CTRL | Qt::Key_R));
    m_conversationSettings = make(IconShape::Settings, QKeySequence(Qt::CTRL | Qt::Key_Comma));
    m_presetsAction = new QAction(this);
    m_autoPreset = new QAction(this);
    m_autoPreset->setCheckable(true);
    m_autoPreset->setChecked(m_settings.autoPreset());
    m_closeTab = new QAction(this);
    m_closeTab->setShortcut(QKeySequence::Close);
    m_enterSends = new QAction(this);
    m_enterSends->setObjectName(QStringLiteral("enterSendsAction"));
    m_enterSends->setCheckable(true);
    m_enterSends->setChecked(m_settings.enterSends());
    m_focusSearch = new QAction(this);
    m_focusSearch->setObjectName(QStringLiteral("focusSearchAction"));
    m_focusSearch->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    m_focusList = new QAction(this);
    m_focusList->setObjectName(QStringLiteral("focusListAction"));
    m_focusList->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
    m_focusInput = new QAction(this);
    m_focusInput->setObjectName(QStringLiteral("focusInputAction"));
    m_focusInput->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    m_sideBySide = make(IconShape::Split, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    m_english = new QAction(QStringLiteral("English"), this);
    m_chinese = new QAction(QStringLiteral("简体中文"), this);
    auto* languages = new QActionGroup(this);
    for (QAction* a : {m_english, m_chinese}) {
        a->setCheckable(true);
        languages->addAction(a);
    }
    m_themeSystem = new QAction(this);
    m_themeLight = new QAction(this);
    m_themeDark = new QAction(this);
    auto* themes = new QActionGroup(this);
    for (QAction* a : {m_themeSystem, m_themeLight, m_themeDark}) {
        a->setCheckable(true);
        themes->addAction(a);
    }
    m_about = new QAction(this);
    m_performanceAction = new QAction(this);
    m_performanceAction->setObjectName(QStringLiteral("performanceAction"));
    m_performanceAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));

    connect(m_newChat, &QAction::triggered, this, &MainWindow::newChat);
    connect(m_enterSends, &QAction::toggled, this, [this](bool on) {
        m_settings.setEnterSends(on);
        for (ChatPane* p : m_chatArea->panes()) p->setEnterSends(on);
    });
    connect(m_focusSearch, &QAction::triggered, this, [this] {
        m_conversations->searchBox()->setFocus(Qt::ShortcutFocusReason);
        m_conversations->searchBox()->selectAll();
    });
    connect(m_focusList, &QAction::triggered, this, [this] {
        QListWidget* list = m_conversations->list();
        if (list->currentRow() < 0 && list->count() > 0) list->setCurrentRow(0);
        list->setFocus(Qt::ShortcutFocusReason);
    });
    connect(m_focusInput, &QAction::triggered, this, [this] {
        if (ChatPane* p = m_chatArea->currentPane()) p->input()->setFocus(Qt::ShortcutFocusReason);
    });
    connect(m_openModel, &QAction::triggered, this, &MainWindow::openModelFolder);
    connect(m_download, &QAction::triggered, this, &MainWindow::openDownloadDialog);
    connect(m_models, &QAction::triggered, this, &MainWindow::showModels);
    connect(m_import, &QAction::triggered, m_conversationActions, &ConversationActions::importInteractively);
    connect(m_exportMarkdown, &QAction::triggered, this,
            [this] { m_conversationActions->exportInteractively(QStringLiteral("md"), m_engineHost->modelName()); });
    connect(m_exportJson, &QAction::triggered, this,
            [this] { m_conversationActions->exportInteractively(QStringLiteral("json"), m_engineHost->modelName()); });
    connect(m_quit, &QAction::triggered, this, &QWidget::close);
    connect(m_send, &QAction::triggered, this, [this] {
        if (ChatPane* p = m_chatArea->currentPane()) p->sendInput();
    });
    connect(m_stop, &QAction::triggered, this, [this] {
        if (ChatPane* p = m_chatArea->currentPane()) p->stopGeneration();
    });
    connect(m_regenerate, &QAction::triggered, this, [this] {
        if (ChatPane* p = m_chatArea->currentPane()) p->regenerateLast();
    });
    connect(m_conversationSettings, &QAction::triggered, this, [this] {
        if (ChatPane* p = m_chatArea->currentPane()) p->openSettings();
    });
    connect(m_presetsAction, &QAction::triggered, this, &MainWindow::handleEditPresets);
    connect(m_autoPreset, &QAction::toggled, this, [this](bool on) {
        m_settings.setAutoPreset(on);
        for (ChatPane* p : m_chatArea->panes()) p->setAutoPreset(on);
    });
    connect(m_closeTab, &QAction::triggered, this, [this] {
        if (ChatPane* p = m_chatArea->currentPane()) m_chatArea->closePane(p);
    });
    connect(m_sideBySide, &QAction::triggered, this, [this] {
        if (ChatPane* p = m_chatArea->currentPane()) m_chatArea->moveToOtherSide(p);
    });
    connect(m_english, &QAction::triggered, this, [this] { setLanguage(QStringLiteral("en")); });
    connect(m_chinese, &QAction::triggered, this, [this] { setLanguage(QStringLiteral("zh_CN")); });
    connect(m_themeSystem, &QAction::triggered, this, [this] { setTheme(QStringLiteral("system")); });
    connect(m_themeLight, &QAction::triggered, this, [this] { setTheme(QStringLiteral("light")); });
    connect(m_themeDark, &QAction::triggered, this, [this] { setTheme(QStringLiteral("dark")); });
    connect(m_about, &QAction::triggered, this, &MainWindow::handleAbout);
    connect(m_performanceAction, &QAction::triggered, this, &MainWindow::showPerformance);
    (m_translations.language() == QLatin1String("zh_CN") ? m_chinese : m_english)->setChecked(true);
    (m_theme.theme() == QLatin1String("dark")    ? m_themeDark
     : m_theme.theme() == QLatin1String("light") ? m_themeLight
                                                 : m_themeSystem)
        ->setChecked(true);
}

void MainWindow::createMenus()
{
    m_fileMenu = menuBar()->addMenu(QString());
    m_fileMenu->addAction(m_newChat);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_openModel);
    m_recentMenu = m_fileMenu->addMenu(QString());
    m_fileMenu->addAction(m_download);
    m_fileMenu->addAction(m_models);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_import);
    m_exportMenu = m_fileMenu->addMenu(QString());
    m_exportMenu->addAction(m_exportMarkdown);
    m_exportMenu->addAction(m_exportJson);
    m_fileMenu->addSeparator();
    m_fileMenu->addAction(m_quit);
    m_chatMenu = menuBar()->addMenu(QString());
    for (QAction* a : {m_send, m_stop, m_regenerate}) m_chatMenu->addAction(a);
    m_chatMenu->addSeparator();
    for (QAction* a : {m_conversationSettings, m_presetsAction, m_autoPreset}) m_chatMenu->addAction(a);
    m_chatMenu->addAction(m_enterSends);
    m_chatMenu->addSeparator();
    m_chatMenu->addAction(m_sideBySide);
    m_chatMenu->addAction(m_closeTab);
    m_goMenu = menuBar()->addMenu(QString());
    for (QAction* a : {m_focusSearch, m_focusList, m_focusInput}) m_goMenu->addAction(a);
    m_viewMenu = menuBar()->addMenu(QString());
    m_languageMenu = m_viewMenu->addMenu(QString());
    m_languageMenu->addAction(m_english);
    m_languageMenu->addAction(m_chinese);
    m_themeMenu = m_viewMenu->addMenu(QString());
    for (QAction* a : {m_themeSystem, m_themeLight, m_themeDark}) m_themeMenu->addAction(a);
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_performanceAction);
    m_helpMenu = menuBar()->addMenu(QString());
    m_helpMenu->addAction(m_about);

    auto* toolbar = addToolBar(QString());
    toolbar->setObjectName(QStringLiteral("mainToolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setIconSize(QSize(18, 18));
    for (QAction* a : {m_newChat, m_openModel, m_download}) toolbar->addAction(a);
    toolbar->addSeparator();
    for (QAction* a : {m_regenerate, m_sideBySide, m_conversationSettings}) toolbar->addAction(a);
    toolbar->addSeparator();
    toolbar->addAction(m_performanceAction);
    updateRecentMenu();
}

void MainWindow::createDocks()
{
    m_logView = new LogView(m_logSink, this);
    m_monitor = new EngineMonitor(this);
    connect(m_monitor, &EngineMonitor::performanceRequested, this, &MainWindow::showPerformance);
    m_endpointPanel = new EndpointPanel(m_controller->endpoint(), this);
    m_endpointPanel->setSettings({m_settings.serverHost(), m_settings.serverPort(), m_settings.serverApiKey()});
    connect(m_endpointPanel, &EndpointPanel::startRequested, this, &MainWindow::handleEndpointStart);
    connect(m_endpointPanel, &EndpointPanel::stopRequested, &m_controller->endpoint(), &LocalEndpoint::stop);
    connect(m_endpointPanel, &EndpointPanel::settingsChanged, this, [this](const LocalEndpoint::Settings& s) {
        m_settings.setServerHost(s.host);
        m_settings.setServerPort(s.port);
        m_settings.setServerApiKey(s.apiKey);
    });
    auto dock = [this](QDockWidget*& out, QWidget* content, const char* name, Qt::DockWidgetArea area, IconShape icon) {
        out = new QDockWidget(this);
        out->setObjectName(QLatin1String(name));
        out->setWidget(content);
        addDockWidget(area, out);
        out->toggleViewAction()->setIcon(VectorIconEngine::icon(icon));
        m_viewMenu->addAction(out->toggleViewAction());
        out->hide();
    };
    dock(m_endpointDock, m_endpointPanel, "endpointDock", Qt::RightDockWidgetArea, IconShape::Server);
    dock(m_monitorDock, m_monitor, "monitorDock", Qt::RightDockWidgetArea, IconShape::Settings);
    dock(m_logDock, m_logView, "logDock", Qt::BottomDockWidgetArea, IconShape::Log);
    m_logDock->toggleViewAction()->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
}

void MainWindow::retranslateUi()
{
    setWindowTitle(m_engineHost->isLoaded() ? tr("Brook — %1").arg(m_engineHost->modelName()) : tr("Brook"));
    m_fileMenu->setTitle(tr("&File"));
    m_recentMenu->setTitle(tr("Recent models"));
    m_exportMenu->setTitle(tr("Export conversation"));
    m_chatMenu->setTitle(tr("&Chat"));
    m_viewMenu->setTitle(tr("&View"));
    m_languageMenu->setTitle(tr("Language"));
    m_themeMenu->setTitle(tr("Theme"));
    m_helpMenu->setTitle(tr("&Help"));
    m_newChat->setText(tr("New chat"));
    m_openModel->setText(tr("Open model folder…"));
    m_download->setText(tr("Download model…"));
    m_models->setText(tr("Models…"));
    m_models->setToolTip(tr("The models on this disk: load, unload, delete, show in the file manager"));
    m_import->setText(tr("Import conversation (JSON)…"));
    m_exportMarkdown->setText(tr("As Markdown…"));
    m_exportJson->setText(tr("As JSON (OpenAI messages)…"));
    m_quit->setText(tr("Quit"));
    m_send->setText(tr("Send"));
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Stop generating (Esc)"));
    m_regenerate->setText(tr("Regenerate"));
    m_conversationSettings->setText(tr("Conversation settings…"));
    m_presetsAction->setText(tr("Prompt presets…"));
    m_autoPreset->setText(tr("Choose a preset automatically by keywords"));
    m_closeTab->setText(tr("Close chat"));
    m_enterSends->setText(tr("Enter sends (Shift+Enter for a new line)"));
    m_goMenu->setTitle(tr("&Go"));
    m_focusSearch->setText(tr("Search conversations"));
    m_focusList->setText(tr("Conversation list"));
    m_focusInput->setText(tr("Message box"));
    m_themeSystem->setText(tr("Follow the system"));
    m_themeLight->setText(tr("Light"));
    m_themeDark->setText(tr("Dark"));
    m_about->setText(tr("About Brook"));
    m_performanceAction->setText(tr("Performance…"));
    m_performanceAction->setToolTip(
        tr("Live charts, serving parameters, load generator and request inspector (Ctrl+Shift+D)"));
    m_endpointDock->setWindowTitle(tr("Local endpoint"));
    m_monitorDock->setWindowTitle(tr("Engine at a glance"));
    m_logDock->setWindowTitle(tr("Log"));
    if (auto* toolbar = findChild<QToolBar*>(QStringLiteral("mainToolbar"))) toolbar->setWindowTitle(tr("Toolbar"));
    updateRecentMenu();
    updateView();  // the texts that depend on the state
    handleStatusPoll();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = m_settings.recentModels();
    for (const QString& dir : recent) m_recentMenu->addAction(dir, this, [this, dir] { loadModel(dir); });
    const QString loaded = m_engineHost->isLoaded() ? m_engineHost->modelDir() : QString();
    for (ChatPane* pane : m_chatArea->panes()) pane->setModels(recent, loaded);
    if (recent.isEmpty()) m_recentMenu->addAction(tr("(none yet)"))->setEnabled(false);
    m_modelPanel->setRecentModels(recent);
}

bool MainWindow::showingWelcome() const { return m_stack->currentWidget() == m_modelPanel; }

void MainWindow::updateView()
{
    // The welcome page while there is neither a model nor an open chat, or a load just failed.
    // Also in front of an empty new chat while no model is loaded: it has nothing else to offer.
    ChatPane* current = m_chatArea->currentPane();
    const bool emptyDraft = current && !current->session()->isStored() && current->session()->isEmpty();
    const bool welcome = !m_engineHost->isLoaded() &&
                         (m_chatArea->panes().isEmpty() || !m_modelPanel->errorText().isEmpty() || emptyDraft);
    m_stack->setCurrentWidget(welcome ? static_cast<QWidget*>(m_modelPanel) : m_chatArea);
    ChatPane* pane = current;
    for (QAction* a : {m_send, m_stop, m_conversationSettings, m_exportMarkdown, m_exportJson, m_closeTab, m_sideBySide,
                       m_focusInput})
        a->setEnabled(pane != nullptr);
    // Regenerate needs an answer to redo; export needs something stored.
    const bool hasMessages = pane && !pane->session()->visibleMessages().isEmpty();
    m_regenerate->setEnabled(hasMessages && !pane->session()->isGenerating());
    m_exportMarkdown->setEnabled(hasMessages);
    m_exportJson->setEnabled(hasMessages);
    // Says where the chat goes: into a split view, or to the other half of it.
    if (m_chatArea->sideCount() < 2) m_sideBySide->setText(tr("Split view: show this chat beside the others"));
    else
        m_sideBySide->setText(m_chatArea->sideIndexOf(pane) == 0 ? tr("Move this chat to the right half")
                                                                 : tr("Move this chat to the left half"));
}

void MainWindow::loadModel(const QString& dir)
{
    // The folder is looked at first: the wrong folder must not take the running model's chats away.
    if (const QString problem = ModelFolderCheck::problem(dir); !problem.isEmpty()) {
        m_loadingDir = dir;
        showLoadFailure(problem);
        return;
    }
    m_loadingDir = dir;
    if (!m_controller->load(m_settings.launchOptions(dir))) {
        statusBar()->showMessage(tr("A model is already loading."), 4000);
        return;
    }
    m_modelPanel->showLoading(EngineHost::Stage::Checking, 0);
    if (!m_engineHost->isLoaded()) m_stack->setCurrentWidget(m_modelPanel);
}

ModelsDialog* MainWindow::showModels()
{
    if (!m_modelsDialog) {
        m_modelsDialog = new ModelsDialog(
            [this] {
                const QString cache =
                    QString::fromStdString(ModelDownloader::optionsFor(m_settings.hubEndpoint()).cacheDir.string());
                return ModelLibrary::scan(cache, m_settings.recentModels(), m_settings.modelsLastUsed());
            },
            this);
        connect(m_modelsDialog, &ModelsDialog::loadRequested, this, &MainWindow::loadModel);
        connect(m_modelsDialog, &ModelsDialog::unloadRequested, this, &MainWindow::unloadModel);
    }
    m_modelsDialog->setLoadedDir(m_engineHost->isLoaded() ? m_engineHost->modelDir() : QString());
    m_modelsDialog->show();
    m_modelsDialog->raise();
    return m_modelsDialog;
}

void MainWindow::unloadModel()
{
    if (!m_engineHost->unload()) return;
    // The chats stay open; they answer again once a model is loaded.
    statusBar()->showMessage(tr("The model was unloaded."), 5000);
    if (m_modelsDialog) m_modelsDialog->setLoadedDir(QString());
    retranslateUi();
    updateRecentMenu();
    updateView();
}

void MainWindow::showPerformance()
{
    m_performance->show();
    m_performance->raise();
    m_performance->activateWindow();
}

bool MainWindow::applyServingOptions(const LaunchOptions& options)
{
    if (!m_engineHost->isLoaded() || m_engineHost->isLoading()) {
        m_performance->showApplyError(tr("Load a model first; new parameters apply by reloading it."));
        return false;
    }
    m_previousServing = m_settings.servingOptions();
    m_settings.setServingOptions(options);
    m_applyingServing = true;
    m_performance->setReloading(true);
    // The same path as opening a model: the chats stay, and move to the new engine when it is ready.
    loadModel(m_engineHost->modelDir());
    return true;
}

void MainWindow::openModelFolder()
{
    const QString start = m_settings.recentModels().value(0, QDir::homePath());
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a model folder"), start);
    if (!dir.isEmpty()) loadModel(dir);
}

void MainWindow::openDownloadDialog()
{
    DownloadDialog dialog(m_settings.hubEndpoint(), this);
    dialog.setKnownModels(m_settings.servingOptions(), KnownModels::hostMemoryBytes());
    connect(&dialog, &DownloadDialog::openFolderRequested, this, &MainWindow::openModelFolder, Qt::QueuedConnection);
    connect(&dialog, &DownloadDialog::modelDownloaded, &dialog, &QDialog::accept);
    dialog.exec();
    m_settings.setHubEndpoint(dialog.endpoint());
    if (!dialog.downloadedFolder().isEmpty()) loadModel(dialog.downloadedFolder());
}

void MainWindow::handleEngineChanged(Engine* engine)
{
    // The controller has moved the generator and the endpoint to the new engine already.
    m_monitor->setEngine(engine);
    for (ChatPane* pane : m_chatArea->panes()) applyModelDefaults(pane);
    // Last: a profile comparison starts its load run as soon as the engine (and endpoint) are back.
    m_performance->setEngine(engine, m_settings.launchOptions(m_engineHost->modelDir()), m_engineHost->modelDir());
}

void MainWindow::handleModelLoaded(const QString& name)
{
    if (m_applyingServing) {
        m_applyingServing = false;
        m_performance->setReloading(false);
        statusBar()->showMessage(tr("The new serving parameters are in effect."), 5000);
    }
    m_settings.addRecentModel(m_loadingDir);
    m_settings.setModelUsed(QDir::cleanPath(m_loadingDir), QDateTime::currentDateTime());
    updateRecentMenu();
    if (m_modelsDialog) m_modelsDialog->setLoadedDir(m_engineHost->modelDir());
    m_modelPanel->showIdle();
    statusBar()->showMessage(tr("%1 is ready.").arg(name), 5000);
    retranslateUi();
    if (m_chatArea->panes().isEmpty()) reopenLastTabs();
    updateView();
}

void MainWindow::reopenLastTabs()
{
    const QList<qint64> ids = m_settings.openConversations();
    m_tabsRestored = true;  // from now on the open tabs are this session's
    for (qint64 id : ids) openConversation(id);
    if (m_chatArea->panes().isEmpty()) newChat();
    else m_chatArea->showPane(m_chatArea->panes().first());
}

void MainWindow::saveOpenTabs()
{
    // Until the last session's tabs are back (the first model load), closing a tab or the window
    // must not overwrite them.
    if (!m_tabsRestored) return;
    QList<qint64> ids;
    for (ChatPane* pane : m_chatArea->panes())
        if (pane->session()->isStored()) ids << pane->session()->conversationId();
    m_settings.setOpenConversations(ids);
}

void MainWindow::handleModelLoadFailed(const QString& message)
{
    if (m_applyingServing) {
        // The old engine is still running: keep it and its chats, and the old knobs for next time.
        m_applyingServing = false;
        m_settings.setServingOptions(m_previousServing);
        m_performance->setReloading(false);
        m_performance->showApplyError(
            tr("The new parameters did not load; the model runs on with the previous ones:\n%1").arg(message));
        statusBar()->showMessage(tr("The new serving parameters did not load."), 5000);
        if (m_engineHost->isLoaded()) return;
    }
    showLoadFailure(message);
}

void MainWindow::showLoadFailure(const QString& message)
{
    const QString text = tr("Could not load %1:\n%2").arg(m_loadingDir, message);
    if (m_engineHost->isLoaded()) {
        // The running model stays, and so do its chats: say so without leaving them.
        m_modelPanel->showIdle();
        updateView();
        statusBar()->showMessage(tr("%1 keeps running.").arg(m_engineHost->modelName()) + QLatin1Char(' ') +
                                     QString(text).replace(QLatin1Char('\n'), QLatin1Char(' ')),
                                 15000);
        auto* box =
            new QMessageBox(QMessageBox::Warning, tr("The model did not load"),
                            text + QStringLiteral("\n\n") +
                                tr("%1 keeps running; your chats are unchanged.").arg(m_engineHost->modelName()),
                            QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("loadFailureBox"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    m_modelPanel->showError(text);
    m_stack->setCurrentWidget(m_modelPanel);
    statusBar()->showMessage(tr("The model did not load."), 5000);
}

void MainWindow::applyModelDefaults(ChatPane* pane) const
{
    pane->setModelDefaults(m_controller->chatDefaults(), m_controller->maxModelLen());
}

ChatPane* MainWindow::makePane(qint64 conversationId, bool beside)
{
    auto* session = new ChatSession(m_store, m_controller->generator(), conversationId);
    if (!session->isStored()) session->setSettings(m_controller->chatDefaults());  // a draft starts from the model's
    connect(session, &ChatSession::stored, this, [this](qint64 id) {
        m_conversations->reload();
        m_conversations->setCurrentConversation(id);
        saveOpenTabs();
    });
    auto* pane = new ChatPane(session, &m_presets, m_chatArea);
    pane->setAutoPreset(m_autoPreset->isChecked());
    applyModelDefaults(pane);
    connect(session, &ChatSession::messagesChanged, this, &MainWindow::updateView);
    connect(session, &ChatSession::generatingChanged, this, &MainWindow::updateView);
    pane->setEnterSends(m_enterSends->isChecked());
    pane->setModels(m_settings.recentModels(), m_engineHost->isLoaded() ? m_engineHost->modelDir() : QString());
    connect(pane, &ChatPane::modelRequested, this, &MainWindow::loadModel);
    connect(pane, &ChatPane::openModelFolderRequested, this, &MainWindow::openModelFolder);
    connect(session, &ChatSession::titleChanged, m_conversations, &ConversationListPanel::reload);
    connect(session, &ChatSession::messageCompleted, m_conversations, &ConversationListPanel::reload);
    m_chatArea->addPane(pane, beside);
    m_chatArea->showPane(pane);
    updateView();
    return pane;
}

ChatPane* MainWindow::newChat()
{
    // A draft: stored with its first message, so an untouched "New chat" never reaches the
    // history. An empty one already open is reused rather than piling up empty tabs.
    for (ChatPane* pane : m_chatArea->panes()) {
        if (!pane->session()->isStored() && pane->session()->isEmpty()) {
            m_chatArea->showPane(pane);
            return pane;
        }
    }
    return makePane(0, false);
}

ChatPane* MainWindow::openConversation(qint64 id, bool beside)
{
    if (ChatPane* pane = m_chatArea->paneFor(id)) {
        if (beside) m_chatArea->moveToOtherSide(pane);
        m_chatArea->showPane(pane);
        return pane;
    }
    if (!m_store.conversation(id)) return nullptr;
    return makePane(id, beside);
}

QString MainWindow::importConversation(const QString& path)
{
    QString error;
    if (const qint64 id = m_conversationActions->importFile(path, &error)) openConversation(id);
    return error;
}

void MainWindow::handleEditPresets()
{
    PresetEditorDialog dialog(m_presets, this);
    if (dialog.exec() != QDialog::Accepted) return;
    m_presets = dialog.library();
    m_settings.setPresets(m_presets);
    for (ChatPane* p : m_chatArea->panes()) p->refreshPresets();
}

void MainWindow::handleEndpointStart()
{
    auto port = m_controller->startEndpoint(m_endpointPanel->settings());
    if (!port) m_endpointPanel->showError(QString::fromStdString(port.error()));
}

void MainWindow::handleStatusPoll()
{
    if (!m_engineHost->isLoaded()) {
        if (!m_engineHost->isLoading()) m_modelStatus->setText(tr("No model loaded"));
        m_engineStatus->clear();
        return;
    }
    const EngineStats s = m_engineHost->engine()->stats();
    m_modelStatus->setText(tr("%1 on %2").arg(m_engineHost->modelName(), m_engineHost->backendName().toUpper()));
    QString text = tr("running %1 · waiting %2 · KV cache %3%")
                       .arg(s.numRunning)
                       .arg(s.numWaiting)
                       .arg(s.kvCacheUsage * 100.0, 0, 'f', 0);
    const LocalEndpoint& endpoint = m_controller->endpoint();
    if (endpoint.isRunning()) text += QStringLiteral(" · ") + tr("API on :%1").arg(endpoint.port());
    m_engineStatus->setText(text);
}

void MainWindow::handleAbout()
{
    QMessageBox::about(
        this, tr("About Brook"),
        tr("<b>Brook %1</b><br>Runs ERNIE-4.5 locally: a C++ engine with paged KV cache and continuous "
           "batching, an OpenAI-compatible endpoint and this desktop app.<br>Backend: %2")
            .arg(QStringLiteral(BROOK_VERSION), cudaAvailable() ? QStringLiteral("CUDA") : QStringLiteral("CPU")));
}

void MainWindow::setLanguage(const QString& language)
{
    if (!m_translations.setLanguage(language)) {
        statusBar()->showMessage(tr("This language is not available."), 5000);
        return;
    }
    m_settings.setLanguage(m_translations.language());
    (m_translations.language() == QLatin1String("zh_CN") ? m_chinese : m_english)->setChecked(true);
}

void MainWindow::updateFontNotice()
{
    const QString notice = ScriptFontCheck::missingFontNotice(m_translations.language());
    m_fontNotice->setText(notice);
    m_fontNotice->setVisible(!notice.isEmpty());
}

void MainWindow::setTheme(const QString& theme)
{
    m_theme.apply(theme);
    m_settings.setTheme(theme);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_settings.setWindowGeometry(saveGeometry());
    m_settings.setWindowState(saveState());
    saveOpenTabs();
    m_settings.sync();
    m_performance->close();
    m_controller->stopAll();
    QMainWindow::closeEvent(event);
}

void MainWindow::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QMainWindow::changeEvent(event);
}

}  // namespace brook
