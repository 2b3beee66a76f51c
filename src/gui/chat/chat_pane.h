// ChatPane: the widget for one open conversation: its messages as bubbles in a scroll area (the
// reply being generated streams into the last one), the input box (Enter or Ctrl+Enter sends,
// Shift+Enter adds a line, Tab moves on, Esc stops),
// a preset picker and the conversation's settings. All logic lives in its ChatSession; the pane
// only shows it and forwards what the user asks for.
#pragma once

#include "gui/chat/chat_settings.h"

#include <QPointer>
#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QToolButton;
class QVBoxLayout;

namespace brook {

class ChatSession;
class MessageBubble;
class PresetLibrary;

class ChatPane : public QWidget {
    Q_OBJECT
public:
    // Takes ownership of the session. `presets` is shared and must outlive the pane.
    ChatPane(ChatSession* session, const PresetLibrary* presets, QWidget* parent = nullptr);

    ChatSession* session() const { return m_session; }
    QString displayTitle() const;  // the title, or "New chat" when it has none yet
    void setAutoPreset(bool enabled) { m_autoPreset = enabled; }
    // On (the default): Enter sends and Shift+Enter starts a new line; off: Enter is a new line.
    // Ctrl+Enter sends either way.
    void setEnterSends(bool enabled);
    bool enterSends() const { return m_enterSends; }
    void refreshPresets();  // after the library was edited
    // The loaded model's defaults (the settings dialog's "Reset") and context length.
    void setModelDefaults(const ChatSettings& defaults, int maxModelLen);
    // The model picker at the top: the models to offer (folders, newest first) and the loaded one
    // ("" while none is). Picking another asks for it (modelRequested); the last entry opens a folder.
    void setModels(const QStringList& modelDirs, const QString& loadedDir);
    QComboBox* modelPicker() const { return m_modelPicker; }

    QPlainTextEdit* input() const { return m_input; }
    QList<MessageBubble*> bubbles() const;
    QString errorText() const;

public slots:
    void sendInput();
    void stopGeneration();
    void regenerateLast();
    void openSettings();

signals:
    void titleChanged(const QString& title);
    void generatingChanged(bool generating);
    void modelRequested(const QString& modelDir);
    void openModelFolderRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private slots:
    void handleMessagesChanged();
    void handleStreamingText(const QString& text, int outputTokens);
    void handleGeneratingChanged(bool generating);
    void handleError(const QString& message);
    void handlePresetActivated(int index);
    void handleEditRequested(qint64 messageId, const QString& text);
    void handleScrollRangeChanged(int minimum, int maximum);

private:
    void retranslateUi();
    void updatePresetCombo();
    void updateModelPicker();
    void handleModelPicked(int index);
    void showError(const QString& message);

    ChatSession* m_session;
    const PresetLibrary* m_presets;
    bool m_autoPreset = false;
    bool m_enterSends = true;
    ChatSettings m_modelDefaults;
    int m_maxModelLen = 0;
    bool m_followBottom = true;

    QLabel* m_title;
    QComboBox* m_modelPicker;
    QStringList m_modelDirs;
    QString m_loadedDir;
    QLabel* m_presetLabel;
    QComboBox* m_presetCombo;
    QToolButton* m_settingsButton;
    QScrollArea* m_scroll;
    QWidget* m_messagesWidget;
    QVBoxLayout* m_messagesLayout;
    QList<MessageBubble*> m_bubbles;  // in display order, the streaming one last
    QPointer<MessageBubble> m_streamingBubble;
    QLabel* m_emptyHint;
    QLabel* m_error;
    QPlainTextEdit* m_input;
    QPushButton* m_send;
    QPushButton* m_stop;
};

}  // namespace brook
