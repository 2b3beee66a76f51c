#include "gui/chat/chat_area.h"

#include "gui/chat/chat_pane.h"
#include "gui/chat/chat_session.h"

#include <QApplication>
#include <QEvent>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QVBoxLayout>

namespace brook {

ChatArea::ChatArea(QWidget* parent) : QWidget(parent)
{
    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_splitter);
    m_active = makeSide();
    connect(qApp, &QApplication::focusChanged, this, &ChatArea::handleFocusChanged);
}

ChatArea::~ChatArea()
{
    disconnect(qApp, nullptr, this, nullptr);
    for (QTabWidget* side : m_sides) side->disconnect(this);
    blockSignals(true);
}

QTabWidget* ChatArea::makeSide()
{
    auto* tabs = new QTabWidget(m_splitter);
    tabs->setTabsClosable(true);
    tabs->setMovable(true);
    tabs->setDocumentMode(true);
    tabs->setElideMode(Qt::ElideRight);
    connect(tabs, &QTabWidget::tabCloseRequested, this, &ChatArea::handleTabCloseRequested);
    connect(tabs, &QTabWidget::currentChanged, this, [this, tabs] { setActive(tabs); });
    m_splitter->addWidget(tabs);
    m_sides.append(tabs);
    // A new second side gets half the width, not whatever its contents ask for.
    const int width = m_splitter->width() / int(m_sides.size());
    QList<int> sizes;
    for (qsizetype i = 0; i < m_sides.size(); ++i) sizes << width;
    m_splitter->setSizes(sizes);
    return tabs;
}

QTabWidget* ChatArea::sideOf(ChatPane* pane) const
{
    for (QTabWidget* side : m_sides)
        if (side->indexOf(pane) >= 0) return side;
    return nullptr;
}

void ChatArea::setActive(QTabWidget* side)
{
    if (!side) return;
    m_active = side;
    emit currentPaneChanged(currentPane());
}

void ChatArea::addPane(ChatPane* pane, bool beside)
{
    QTabWidget* side = m_active ? m_active : m_sides.first();
    if (beside) {
        if (m_sides.size() < 2) side = makeSide();
        else side = m_sides[0] == m_active ? m_sides[1] : m_sides[0];
    }
    const int index = side->addTab(pane, pane->displayTitle());
    connect(pane, &ChatPane::titleChanged, this, [this, pane] { updateTabTitle(pane); });
    connect(pane, &ChatPane::generatingChanged, this, [this, pane] { updateTabTitle(pane); });
    updateTabTitle(pane);
    side->setCurrentIndex(index);
    setActive(side);
    emit paneCountChanged(int(panes().size()));
}

void ChatArea::updateTabTitle(ChatPane* pane)
{
    QTabWidget* side = sideOf(pane);
    if (!side) return;
    const int index = side->indexOf(pane);
    // A dot marks a pane that is generating, so background tabs show their activity.
    const QString title = pane->displayTitle();
    side->setTabText(index, pane->session()->isGenerating() ? QStringLiteral("● ") + title : title);
    side->setTabToolTip(index, title);
}

ChatPane* ChatArea::currentPane() const
{
    if (m_active)
        if (auto* pane = qobject_cast<ChatPane*>(m_active->currentWidget())) return pane;
    for (QTabWidget* side : m_sides)
        if (auto* pane = qobject_cast<ChatPane*>(side->currentWidget())) return pane;
    return nullptr;
}

ChatPane* ChatArea::paneFor(qint64 conversationId) const
{
    if (conversationId == 0) return nullptr;  // drafts have no id yet
    for (ChatPane* pane : panes())
        if (pane->session()->conversationId() == conversationId) return pane;
    return nullptr;
}

QList<ChatPane*> ChatArea::panes() const
{
    QList<ChatPane*> out;
    for (QTabWidget* side : m_sides)
        for (int i = 0; i < side->count(); ++i)
            if (auto* pane = qobject_cast<ChatPane*>(side->widget(i))) out.append(pane);
    return out;
}

void ChatArea::showPane(ChatPane* pane)
{
    if (QTabWidget* side = sideOf(pane)) {
        side->setCurrentWidget(pane);
        setActive(side);
        pane->input()->setFocus();
    }
}

void ChatArea::closePane(ChatPane* pane)
{
    QTabWidget* side = sideOf(pane);
    if (!side) return;
    side->removeTab(side->indexOf(pane));
    pane->deleteLater();  // its session stops its generation
    removeEmptySides();
    emit paneCountChanged(int(panes().size()));
    emit currentPaneChanged(currentPane());
}

void ChatArea::moveToOtherSide(ChatPane* pane)
{
    QTabWidget* from = sideOf(pane);
    if (!from) return;
    QTabWidget* to = nullptr;
    if (m_sides.size() < 2) to = makeSide();
    else to = m_sides[0] == from ? m_sides[1] : m_sides[0];
    from->removeTab(from->indexOf(pane));
    to->setCurrentIndex(to->addTab(pane, pane->displayTitle()));
    updateTabTitle(pane);
    setActive(to);
    removeEmptySides();
}

void ChatArea::changeEvent(QEvent* event)
{
    // Tab texts are set, not translated by Qt: an untitled tab's "New chat" follows the language.
    if (event->type() == QEvent::LanguageChange)
        for (ChatPane* pane : panes()) updateTabTitle(pane);
    QWidget::changeEvent(event);
}

int ChatArea::sideCount() const { return int(m_sides.size()); }

int ChatArea::sideIndexOf(const ChatPane* pane) const
{
    for (qsizetype i = 0; i < m_sides.size(); ++i)
        if (m_sides[i]->indexOf(const_cast<ChatPane*>(pane)) >= 0) return int(i);
    return -1;
}

void ChatArea::removeEmptySides()
{
    // Keep at least one side; drop an empty second one.
    for (qsizetype i = m_sides.size() - 1; i >= 0 && m_sides.size() > 1; --i) {
        if (m_sides[i]->count() == 0) {
            QTabWidget* side = m_sides.takeAt(i);
            if (m_active == side) m_active = m_sides.first();
            side->deleteLater();
        }
    }
}

void ChatArea::handleTabCloseRequested(int index)
{
    auto* side = qobject_cast<QTabWidget*>(sender());
    if (!side) return;
    if (auto* pane = qobject_cast<ChatPane*>(side->widget(index))) closePane(pane);
}

void ChatArea::handleFocusChanged(QWidget*, QWidget* now)
{
    for (QWidget* w = now; w; w = w->parentWidget()) {
        if (auto* side = qobject_cast<QTabWidget*>(w); side && m_sides.contains(side)) {
            if (side != m_active) setActive(side);
            return;
        }
    }
}

}  // namespace brook
