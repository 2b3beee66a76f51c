#include "gui/chat/conversation_list_panel.h"

#include "gui/chat/history_store.h"
#include "gui/shell/vector_icon_engine.h"

#include <QEvent>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

namespace brook {

ConversationListPanel::ConversationListPanel(HistoryStore& store, QWidget* parent) : QWidget(parent), m_store(store)
{
    m_new = new QPushButton(VectorIconEngine::icon(IconShape::NewChat), QString(), this);
    m_new->setObjectName(QStringLiteral("newChat"));
    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("conversationSearch"));
    m_search->setClearButtonEnabled(true);
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("conversationList"));
    m_list->setContextMenuPolicy(Qt::CustomContextMenu);
    m_list->setUniformItemSizes(true);
    m_list->setTextElideMode(Qt::ElideRight);
    m_searchDelay = new QTimer(this);
    m_searchDelay->setSingleShot(true);
    m_searchDelay->setInterval(200);

    connect(m_new, &QPushButton::clicked, this, &ConversationListPanel::newConversationRequested);
    connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
    connect(m_searchDelay, &QTimer::timeout, this, &ConversationListPanel::reload);
    connect(m_list, &QListWidget::itemClicked, this, &ConversationListPanel::handleItemActivated);
    connect(m_list, &QListWidget::itemActivated, this, &ConversationListPanel::handleItemActivated);
    connect(m_list, &QListWidget::customContextMenuRequested, this, &ConversationListPanel::handleContextMenu);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 0, 6);
    layout->addWidget(m_new);
    layout->addWidget(m_search);
    layout->addWidget(m_list, 1);
    retranslateUi();
}

void ConversationListPanel::reload()
{
    const QLocale locale;
    m_list->clear();
    for (const ConversationRecord& c : m_store.conversations(m_search->text())) {
        auto* item = new QListWidgetItem(c.title.isEmpty() ? tr("New chat") : c.title, m_list);
        item->setData(Qt::UserRole, c.id);
        item->setToolTip(
            tr("%1\nLast message: %2").arg(item->text(), locale.toString(c.updatedAt, QLocale::ShortFormat)));
        if (c.id == m_current) m_list->setCurrentItem(item);
    }
}

void ConversationListPanel::setCurrentConversation(qint64 id)
{
    m_current = id;
    for (int i = 0; i < m_list->count(); ++i)
        if (m_list->item(i)->data(Qt::UserRole).toLongLong() == id) m_list->setCurrentRow(i);
}

void ConversationListPanel::handleItemActivated(QListWidgetItem* item)
{
    if (item) emit conversationActivated(item->data(Qt::UserRole).toLongLong());
}

void ConversationListPanel::handleContextMenu(const QPoint& position)
{
    QListWidgetItem* item = m_list->itemAt(position);
    if (!item) return;
    const qint64 id = item->data(Qt::UserRole).toLongLong();
    QMenu menu(this);
    menu.addAction(tr("Open"), this, [this, id] { emit conversationActivated(id); });
    menu.addAction(VectorIconEngine::icon(IconShape::Split), tr("Open side by side"), this,
                   [this, id] { emit openBesideRequested(id); });
    menu.addAction(tr("Rename…"), this, [this, id] { emit renameRequested(id); });
    menu.addAction(tr("Export…"), this, [this, id] { emit exportRequested(id); });
    menu.addSeparator();
    menu.addAction(VectorIconEngine::icon(IconShape::Delete), tr("Delete"), this,
                   [this, id] { emit deleteRequested(id); });
    menu.exec(m_list->viewport()->mapToGlobal(position));
}

void ConversationListPanel::retranslateUi()
{
    m_new->setText(tr("New chat"));
    m_new->setToolTip(tr("Start a new conversation (Ctrl+N)"));
    m_search->setPlaceholderText(tr("Search conversations"));
    reload();
}

void ConversationListPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
