#include "gui/chat/auto_height_browser.h"

#include <QAbstractTextDocumentLayout>
#include <QScrollBar>
#include <QWheelEvent>

#include <cmath>

namespace brook {

AutoHeightBrowser::AutoHeightBrowser(QWidget* parent) : QTextBrowser(parent)
{
    setFrameShape(QFrame::NoFrame);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setOpenExternalLinks(true);
    setTextInteractionFlags(Qt::TextBrowserInteraction | Qt::TextSelectableByKeyboard);
    viewport()->setAutoFillBackground(false);
    setAutoFillBackground(false);
    document()->setDocumentMargin(2);
    connect(document(), &QTextDocument::contentsChanged, this, &AutoHeightBrowser::handleContentsChanged);
}

int AutoHeightBrowser::contentHeight() const { return int(std::ceil(document()->size().height())) + 2 * frameWidth(); }

QSize AutoHeightBrowser::sizeHint() const { return QSize(QTextBrowser::sizeHint().width(), contentHeight()); }
QSize AutoHeightBrowser::minimumSizeHint() const { return QSize(40, contentHeight()); }

void AutoHeightBrowser::resizeEvent(QResizeEvent* event)
{
    QTextBrowser::resizeEvent(event);
    handleContentsChanged();
}

void AutoHeightBrowser::handleContentsChanged()
{
    document()->setTextWidth(viewport()->width());
    const int h = contentHeight();
    if (h != height()) setFixedHeight(h);
}

void AutoHeightBrowser::wheelEvent(QWheelEvent* event) { event->ignore(); }

}  // namespace brook
