#include "gui/shell/screen_fit.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

#include <algorithm>

namespace brook {

namespace {

QRect availableFor(const QWidget* widget)
{
    const QScreen* screen = widget->screen() ? widget->screen() : QGuiApplication::primaryScreen();
    return screen ? screen->availableGeometry() : QRect();
}

}  // namespace

QSize ScreenFit::fitted(const QWidget* widget, QSize preferred)
{
    const QRect available = availableFor(widget);
    if (available.isEmpty()) return preferred;
    return {std::min(preferred.width(), int(available.width() * kShare)),
            std::min(preferred.height(), int(available.height() * kShare))};
}

void ScreenFit::resizeToFit(QWidget* widget, QSize preferred) { widget->resize(fitted(widget, preferred)); }

void ScreenFit::keepOnScreen(QWidget* widget)
{
    const QRect available = availableFor(widget);
    if (available.isEmpty()) return;
    const QSize size = widget->size().boundedTo(available.size());
    if (size != widget->size()) widget->resize(size);
    QPoint topLeft = widget->pos();
    topLeft.setX(
        std::clamp(topLeft.x(), available.left(), std::max(available.left(), available.right() - size.width())));
    topLeft.setY(
        std::clamp(topLeft.y(), available.top(), std::max(available.top(), available.bottom() - size.height())));
    if (topLeft != widget->pos()) widget->move(topLeft);
}

}  // namespace brook
