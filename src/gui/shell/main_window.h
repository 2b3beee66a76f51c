// MainWindow: the app's window. Conversations list on the left; on the right the chat panes (tabs,
// optionally side by side) or, while no model is loaded, the welcome/loading panel; docks for the
// log, the engine monitor and the local endpoint. What runs the model (EngineHost, the shared
// ChatGenerator, the LocalEndpoint) belongs to its EngineController; the window wires menus,
// shortcuts (Enter or Ctrl+Enter send, Esc stop, Ctrl+N new chat, Ctrl+K search, Ctrl+Shift+L the
// list, Ctrl+Shift+M the message box), language and theme switching.
// GUI thread only.
#pragma once

#include "launch/launch_options.h"
#include "gui/chat/preset_library.h"

#include <QMainWindow>

#include <memory>

class QAction;
class QActionGroup;
class QDockWidget;
class QLabel;
class QMenu;
class QStackedWidget;
class QTimer;

namespace brook {

class AppSettings;
class ChatArea;
class ChatGenerator;
class ChatPane;
class ConversationActions;
class ConversationListPanel;
class EndpointPanel;
class Engine;
class EngineController;
class EngineHost;
class EngineMonitor;
class GuiLogSink;
class HistoryStore;
class LocalEndpoint;
class LogView;
class ModelPanel;
class ModelsDialog;
class PerformanceWindow;
class ThemeManager;
class TranslationManager;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(AppSettings& settings, HistoryStore& store, TranslationManager& translations, ThemeManager& theme,
               std::shared_ptr<GuiLogSink> logSink, QWidget* parent = nullptr);
    ~MainWindow() override;

    EngineController& controller() { return *m_controller; }
    EngineHost& engineHost();
    ChatGenerator& generator();
    LocalEndpoint& endpoint();
    ChatArea* chatArea() const { return m_chatArea; }
    ConversationListPanel* conversationList() const { return m_conversations; }
    ModelPanel* modelPanel() const { return m_modelPanel; }
    EndpointPanel* endpointPanel() const { return m_endpointPanel; }
    ConversationActions* conversationActions() const { return m_conversationActions; }
    PerformanceWindow* performanceWindow() const { return m_performance; }
    bool showingWelcome() const;

public slots:
    void loadModel(const QString& dir);
    ChatPane* newChat();
    ChatPane* openConversation(qint64 id, bool beside = false);
    void setLanguage(const QString& language);
    void setTheme(const QString& theme);
    void openModelFolder();
    void openDownloadDialog();
    ModelsDialog* showModels();  // the Models page (non-modal)
    void unloadModel();
    void showPerformance();
    // Reloads the loaded model with new serving knobs; open chats keep their history.
    bool applyServingOptions(const brook::LaunchOptions& options);
    // Imports an OpenAI-style JSON conversation and opens it; returns an error message or "".
    QString importConversation(const QString& path);

protected:
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;

private slots:
    void handleEngineChanged(brook::Engine* engine);
    void handleModelLoaded(const QString& name);
    void handleModelLoadFailed(const QString& message);
    void handleEditPresets();
    void handleEndpointStart();
    void handleStatusPoll();
    void updateFontNotice();  // shown while no installed font can draw the UI language
    void handleAbout();

private:
    void createActions();
    void createMenus();
    void createDocks();
    void retranslateUi();
    void updateRecentMenu();
    void updateView();
    void applyModelDefaults(ChatPane* pane) const;
    void showLoadFailure(const QString& message);  // on the welcome page, or beside a model that keeps running
    void reopenLastTabs();                         // the tabs open when the app last closed, or a new chat
    void saveOpenTabs();
    ChatPane* makePane(qint64 conversationId, bool beside);

    AppSettings& m_settings;
    HistoryStore& m_store;
    TranslationManager& m_translations;
    ThemeManager& m_theme;
    std::shared_ptr<GuiLogSink> m_logSink;
    PresetLibrary m_presets;

    EngineController* m_controller;
    EngineHost* m_engineHost;  // m_controller's, for the window's reads
    QString m_loadingDir;

    ConversationListPanel* m_conversations;
    ConversationActions* m_conversationActions;
    QStackedWidget* m_stack;
    ModelPanel* m_modelPanel;
    ChatArea* m_chatArea;
    QDockWidget* m_logDock;
    QDockWidget* m_monitorDock;
    QDockWidget* m_endpointDock;
    LogView* m_logView;
    PerformanceWindow* m_performance;
    bool m_applyingServing = false;
    bool m_tabsRestored = false;  // reopenLastTabs ran
    ModelsDialog* m_modelsDialog = nullptr;
    LaunchOptions m_previousServing;
    EngineMonitor* m_monitor;
    EndpointPanel* m_endpointPanel;
    QLabel* m_modelStatus;
    QLabel* m_engineStatus;
    QLabel* m_fontNotice;
    QTimer* m_statusTimer;

    QMenu* m_fileMenu;
    QMenu* m_recentMenu;
    QMenu* m_exportMenu;
    QMenu* m_chatMenu;
    QMenu* m_viewMenu;
    QMenu* m_goMenu;
    QMenu* m_languageMenu;
    QMenu* m_themeMenu;
    QMenu* m_helpMenu;
    QAction* m_newChat;
    QAction* m_openModel;
    QAction* m_download;
    QAction* m_models;
    QAction* m_import;
    QAction* m_exportMarkdown;
    QAction* m_exportJson;
    QAction* m_quit;
    QAction* m_send;
    QAction* m_stop;
    QAction* m_regenerate;
    QAction* m_conversationSettings;
    QAction* m_presetsAction;
    QAction* m_autoPreset;
    QAction* m_closeTab;
    QAction* m_enterSends;
    QAction* m_focusSearch;
    QAction* m_focusList;
    QAction* m_focusInput;
    QAction* m_sideBySide;
    QAction* m_english;
    QAction* m_chinese;
    QAction* m_themeSystem;
    QAction* m_themeLight;
    QAction* m_themeDark;
    QAction* m_about;
    QAction* m_performanceAction;
};

}  // namespace brook
