#include "gui/chat/chat_pane.h"

#include "gui/chat/chat_session.h"
#include "gui/chat/chat_settings_dialog.h"
#include "gui/chat/message_bubble.h"
#include "gui/chat/preset_library.h"
#include "gui/shell/model_names.h"
#include "gui/shell/vector_icon_engine.h"

#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QShortcut>
#include <QToolButton>
#include <QVBoxLayout>

namespace brook {

ChatPane::ChatPane(ChatSession* session, const PresetLibrary* presets, QWidget* parent)
    : QWidget(parent), m_session(session), m_presets(presets)
{
    m_session->setParent(this);

    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("paneTitle"));
    QFont titleFont = m_title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The header must not set the pane's minimum width: a long title (or a long translation)
    // would push two side-by-side panes past the screen. The title gives way, elided.
    m_title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_title->setMinimumWidth(40);
    m_modelPicker = new QComboBox(this);
    m_modelPicker->setObjectName(QStringLiteral("modelPicker"));
    m_modelPicker->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_modelPicker->setMinimumContentsLength(10);
    connect(m_modelPicker, qOverload<int>(&QComboBox::activated), this, &ChatPane::handleModelPicked);
    m_presetLabel = new QLabel(this);
    m_presetCombo = new QComboBox(this);
    m_presetCombo->setObjectName(QStringLiteral("presetCombo"));
    m_presetCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_presetCombo->setMinimumContentsLength(8);
    m_settingsButton = new QToolButton(this);
    m_settingsButton->setObjectName(QStringLiteral("conversationSettings"));
    m_settingsButton->setIcon(VectorIconEngine::icon(IconShape::Settings));
    m_settingsButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_settingsButton->setAutoRaise(true);
    connect(m_presetCombo, qOverload<int>(&QComboBox::activated), this, &ChatPane::handlePresetActivated);
    connect(m_settingsButton, &QToolButton::clicked, this, &ChatPane::openSettings);

    // Two rows, so a narrow pane keeps all of it: the model on top, then the conversation's title,
    // preset and settings.
    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(m_modelPicker, 1);
    modelRow->addStretch(1);
    auto* titleRow = new QHBoxLayout;
    titleRow->addWidget(m_title, 1);
    titleRow->addWidget(m_presetLabel);
    titleRow->addWidget(m_presetCombo);
    titleRow->addWidget(m_settingsButton);
    auto* header = new QVBoxLayout;
    header->setSpacing(4);
    header->addLayout(modelRow);
    header->addLayout(titleRow);

    m_messagesWidget = new QWidget;
    m_messagesLayout = new QVBoxLayout(m_messagesWidget);
    m_messagesLayout->setContentsMargins(12, 12, 12, 12);
    m_messagesLayout->setSpacing(10);
    m_messagesLayout->addStretch();
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setWidget(m_messagesWidget);
    m_scroll->setFrameShape(QFrame::NoFrame);
    connect(m_scroll->verticalScrollBar(), &QScrollBar::rangeChanged, this, &ChatPane::handleScrollRangeChanged);
    connect(m_scroll->verticalScrollBar(), &QScrollBar::valueChanged, this,
            [this](int value) { m_followBottom = value >= m_scroll->verticalScrollBar()->maximum() - 4; });

    m_emptyHint = new QLabel(this);
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setWordWrap(true);
    m_emptyHint->setForegroundRole(QPalette::PlaceholderText);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("paneError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #d9534f;"));
    m_error->setVisible(false);

    m_input = new QPlainTextEdit(this);
    m_input->setObjectName(QStringLiteral("chatInput"));
    m_input->setMaximumHeight(96);
    m_input->setMinimumHeight(60);
    m_input->installEventFilter(this);
    m_input->setTabChangesFocus(true);  // Tab leaves the composer: the keyboard reaches every control
    m_send = new QPushButton(VectorIconEngine::icon(IconShape::Send), QString(), this);
    m_send->setObjectName(QStringLiteral("sendButton"));
    m_send->setDefault(true);
    m_stop = new QPushButton(VectorIconEngine::icon(IconShape::Stop), QString(), this);
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_stop->setEnabled(false);
    connect(m_send, &QPushButton::clicked, this, &ChatPane::sendInput);
    connect(m_stop, &QPushButton::clicked, this, &ChatPane::stopGeneration);

    auto* buttons = new QVBoxLayout;
    buttons->addWidget(m_send);
    buttons->addWidget(m_stop);
    buttons->addStretch();
    auto* inputRow = new QHBoxLayout;
    inputRow->addWidget(m_input, 1);
    inputRow->addLayout(buttons);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(header);
    layout->addWidget(m_scroll, 1);
    layout->addWidget(m_emptyHint);
    layout->addWidget(m_error);
    layout->addLayout(inputRow);

    // Esc stops this pane's generation wherever the focus is inside the pane.
    auto* stop = new QShortcut(QKeySequence(Qt::Key_Escape), this, this, &ChatPane::stopGeneration);
    stop->setContext(Qt::WidgetWithChildrenShortcut);

    connect(m_session, &ChatSession::messagesChanged, this, &ChatPane::handleMessagesChanged);
    connect(m_session, &ChatSession::streamingTextChanged, this, &ChatPane::handleStreamingText);
    connect(m_session, &ChatSession::generatingChanged, this, &ChatPane::handleGeneratingChanged);
    connect(m_session, &ChatSession::errorOccurred, this, &ChatPane::handleError);
    connect(m_session, &ChatSession::titleChanged, this, [this](const QString&) {
        m_title->setText(displayTitle());
        m_title->setToolTip(displayTitle());  // the whole title where the header cuts it
        emit titleChanged(displayTitle());
    });
    connect(m_session, &ChatSession::settingsChanged, this, &ChatPane::updatePresetCombo);

    retranslateUi();
    updatePresetCombo();
    handleMessagesChanged();
}

QString ChatPane::displayTitle() const { return m_session->title().isEmpty() ? tr("New chat") : m_session->title(); }

void ChatPane::setEnterSends(bool enabled)
{
    m_enterSends = enabled;
    retranslateUi();  // the hints name the keys
}

void ChatPane::setModelDefaults(const ChatSettings& defaults, int maxModelLen)
{
    m_modelDefaults = defaults;
    m_maxModelLen = maxModelLen;
}

QList<MessageBubble*> ChatPane::bubbles() const { return m_bubbles; }

QString ChatPane::errorText() const { return m_error->isVisible() ? m_error->text() : QString(); }

void ChatPane::retranslateUi()
{
    m_title->setText(displayTitle());
    m_presetLabel->setText(tr("Preset:"));
    m_settingsButton->setText(tr("Settings"));
    m_settingsButton->setToolTip(tr("System prompt and sampling for this conversation"));
    if (m_enterSends) {
        m_emptyHint->setText(tr("Ask anything. Enter sends, Shift+Enter starts a new line, Esc stops."));
        m_input->setPlaceholderText(tr("Type a message… (Enter to send, Shift+Enter for a new line)"));
        m_send->setToolTip(tr("Send (Enter or Ctrl+Enter)"));
    } else {
        m_emptyHint->setText(tr("Ask anything. Ctrl+Enter sends, Esc stops."));
        m_input->setPlaceholderText(tr("Type a message… (Ctrl+Enter to send)"));
        m_send->setToolTip(tr("Send (Ctrl+Enter)"));
    }
    m_send->setText(tr("Send"));
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Stop generating (Esc)"));
    updatePresetCombo();
    updateModelPicker();
}

void ChatPane::refreshPresets() { updatePresetCombo(); }

void ChatPane::setModels(const QStringList& modelDirs, const QString& loadedDir)
{
    m_modelDirs = modelDirs;
    m_loadedDir = loadedDir;
    if (!loadedDir.isEmpty() && !m_modelDirs.contains(loadedDir)) m_modelDirs.prepend(loadedDir);
    updateModelPicker();
}

void ChatPane::updateModelPicker()
{
    const QSignalBlocker blocker(m_modelPicker);
    m_modelPicker->clear();
    if (m_loadedDir.isEmpty()) m_modelPicker->addItem(tr("No model loaded"), QString());
    for (const QString& dir : std::as_const(m_modelDirs)) {
        m_modelPicker->addItem(ModelNames::displayName(dir), dir);
        m_modelPicker->setItemData(m_modelPicker->count() - 1, dir, Qt::ToolTipRole);
    }
    m_modelPicker->addItem(tr("Open a model folder…"), QStringLiteral("open:"));
    m_modelPicker->setCurrentIndex(std::max(0, m_modelPicker->findData(m_loadedDir)));
    m_modelPicker->setToolTip(m_loadedDir.isEmpty() ? tr("No model loaded")
                                                    : tr("Loaded: %1").arg(QDir::toNativeSeparators(m_loadedDir)));
}

void ChatPane::handleModelPicked(int index)
{
    const QString dir = m_modelPicker->itemData(index).toString();
    if (dir == QLatin1String("open:")) {
        updateModelPicker();  // back on the loaded model until a folder is chosen
        emit openModelFolderRequested();
    } else if (!dir.isEmpty() && dir != m_loadedDir) {
        updateModelPicker();  // shows the loaded one until the new one is in
        emit modelRequested(dir);
    }
}

void ChatPane::updatePresetCombo()
{
    const QString current = m_session->settings().presetName;
    m_presetCombo->clear();
    m_presetCombo->addItem(tr("(none)"), QString());
    int selected = 0;
    for (const PromptPreset& p : m_presets->presets()) {
        // Built-ins keep their translated names until the user renames them.
        QString name = p.name;
        if (p.builtin && p.id == QLatin1String("general") && p.name == QLatin1String("General")) name = tr("General");
        if (p.builtin && p.id == QLatin1String("writing") && p.name == QLatin1String("Writing")) name = tr("Writing");
        if (p.builtin && p.id == QLatin1String("summary") && p.name == QLatin1String("Summary")) name = tr("Summary");
        if (p.builtin && p.id == QLatin1String("json-extract") && p.name == QLatin1String("JSON extraction"))
            name = tr("JSON extraction");
        m_presetCombo->addItem(name, p.id);
        if (p.id == current) selected = m_presetCombo->count() - 1;
    }
    m_presetCombo->setCurrentIndex(selected);
}

void ChatPane::handlePresetActivated(int index)
{
    const QString id = m_presetCombo->itemData(index).toString();
    ChatSettings settings = m_session->settings();
    if (const PromptPreset* p = m_presets->find(id)) {
        p->applyTo(settings);
    } else {
        settings.presetName.clear();
        settings.inputTemplate.clear();
    }
    m_session->setSettings(settings);
}

void ChatPane::sendInput()
{
    const QString text = m_input->toPlainText();
    if (text.trimmed().isEmpty() || m_session->isGenerating()) return;
    m_error->setVisible(false);
    if (m_autoPreset) {
        if (auto chosen = m_presets->chooseFor(text); chosen && chosen->id != m_session->settings().presetName) {
            ChatSettings settings = m_session->settings();
            chosen->applyTo(settings);
            m_session->setSettings(settings);
        }
    }
    m_followBottom = true;
    if (m_session->send(text)) m_input->clear();
}

void ChatPane::stopGeneration() { m_session->stop(); }

void ChatPane::regenerateLast()
{
    const QList<MessageRecord> path = m_session->visibleMessages();
    if (path.isEmpty() || m_session->isGenerating()) return;
    m_error->setVisible(false);
    m_session->regenerate(path.last().id);
}

void ChatPane::openSettings()
{
    ChatSettingsDialog dialog(m_session->settings(), m_modelDefaults, m_maxModelLen, this);
    if (dialog.exec() == QDialog::Accepted) m_session->setSettings(dialog.settings());
}

void ChatPane::handleMessagesChanged()
{
    // Rebuild the bubbles of the shown branch (a conversation holds tens of messages, not
    // thousands; streaming never comes through here).
    // deleteLater: the bubble whose button asked for this change is still inside its click handler.
    for (MessageBubble* b : std::as_const(m_bubbles)) {
        m_messagesLayout->removeWidget(b);
        b->hide();
        b->deleteLater();
    }
    m_bubbles.clear();
    const MessageTree& tree = m_session->tree();
    const QList<MessageRecord> path = m_session->visibleMessages();
    int row = 0;
    for (const MessageRecord& m : path) {
        const QList<qint64> siblings = tree.siblings(m.id);
        auto* bubble = new MessageBubble(m, int(siblings.indexOf(m.id)), int(siblings.size()), m_messagesWidget);
        connect(bubble, &MessageBubble::editRequested, this, &ChatPane::handleEditRequested);
        connect(bubble, &MessageBubble::regenerateRequested, m_session, [this](qint64 id) {
            m_error->setVisible(false);
            m_session->regenerate(id);
        });
        connect(bubble, &MessageBubble::deleteRequested, m_session, &ChatSession::deleteMessage);
        connect(bubble, &MessageBubble::branchRequested, m_session, &ChatSession::switchBranch);
        bubble->setActionsEnabled(!m_session->isGenerating());
        m_messagesLayout->insertWidget(row++, bubble);
        m_bubbles.append(bubble);
    }
    if (m_session->isGenerating()) {
        MessageRecord streaming;
        streaming.role = QStringLiteral("assistant");
        m_streamingBubble = new MessageBubble(streaming, 0, 1, m_messagesWidget);
        m_streamingBubble->setStreamingText(m_session->streamingText(), 0);
        m_messagesLayout->insertWidget(row, m_streamingBubble);
        m_bubbles.append(m_streamingBubble);
    }
    m_emptyHint->setVisible(path.isEmpty() && !m_session->isGenerating());
    m_scroll->setVisible(!m_emptyHint->isVisible());
}

void ChatPane::handleStreamingText(const QString& text, int outputTokens)
{
    if (m_streamingBubble) m_streamingBubble->setStreamingText(text, outputTokens);
}

void ChatPane::handleGeneratingChanged(bool generating)
{
    m_send->setEnabled(!generating);
    m_stop->setEnabled(generating);
    for (MessageBubble* b : bubbles()) b->setActionsEnabled(!generating);
    emit generatingChanged(generating);
}

void ChatPane::handleError(const QString& message) { showError(message); }

void ChatPane::showError(const QString& message)
{
    m_error->setText(message);
    m_error->setVisible(true);
}

void ChatPane::handleEditRequested(qint64 messageId, const QString& text)
{
    m_error->setVisible(false);
    m_followBottom = true;
    m_session->editAndResend(messageId, text);
}

void ChatPane::handleScrollRangeChanged(int, int maximum)
{
    if (m_followBottom) m_scroll->verticalScrollBar()->setValue(maximum);
}

bool ChatPane::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_input && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            const Qt::KeyboardModifiers mods = key->modifiers() & ~Qt::KeypadModifier;
            if (mods & Qt::ControlModifier) {
                sendInput();
                return true;
            }
            if (mods & Qt::ShiftModifier) {
                m_input->insertPlainText(QStringLiteral("\n"));  // a plain newline, not a line separator
                return true;
            }
            if (m_enterSends && mods == Qt::NoModifier) {
                sendInput();
                return true;
            }
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ChatPane::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
