#include "gui/chat/code_block_view.h"

#include "gui/chat/auto_height_browser.h"
#include "gui/shell/vector_icon_engine.h"

#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace brook {

CodeBlockView::CodeBlockView(QWidget* parent) : QFrame(parent)
{
    setObjectName(QStringLiteral("codeBlock"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::AlternateBase);  // a role, not a colour: follows theme switches

    m_language = new QLabel(this);
    m_copy = new QToolButton(this);
    m_copy->setObjectName(QStringLiteral("copyCode"));
    m_copy->setIcon(VectorIconEngine::icon(IconShape::Copy));
    m_copy->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_copy->setAutoRaise(true);
    connect(m_copy, &QToolButton::clicked, this, &CodeBlockView::handleCopy);

    m_view = new AutoHeightBrowser(this);
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_view->setLineWrapMode(QTextEdit::WidgetWidth);

    auto* header = new QHBoxLayout;
    header->setContentsMargins(8, 2, 2, 0);
    header->addWidget(m_language);
    header->addStretch();
    header->addWidget(m_copy);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 6, 6);
    layout->setSpacing(0);
    layout->addLayout(header);
    layout->addWidget(m_view);
    retranslateUi();
}

void CodeBlockView::setCode(const QString& code, const QString& language)
{
    m_code = code;
    m_view->setPlainText(code);
    m_language->setText(language);
}

void CodeBlockView::handleCopy()
{
    QApplication::clipboard()->setText(m_code);
    m_copy->setText(tr("Copied"));
    QTimer::singleShot(1500, this, [this] { retranslateUi(); });
    emit copied(m_code);
}

void CodeBlockView::retranslateUi()
{
    m_copy->setText(tr("Copy"));
    m_copy->setToolTip(tr("Copy this code"));
}

void CodeBlockView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QFrame::changeEvent(event);
}

}  // namespace brook
