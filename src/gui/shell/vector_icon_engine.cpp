#include "gui/shell/vector_icon_engine.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>
#include <QPalette>
#include <QtMath>

namespace brook {

namespace {

// Draws on a 24x24 design grid; the painter is scaled to the target rectangle.
void drawShape(QPainter& p, IconShape shape, const QColor& color)
{
    QPen pen(color, 2.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    switch (shape) {
    case IconShape::Send: {
        QPainterPath path;
        path.moveTo(3, 11);
        path.lineTo(21, 3);
        path.lineTo(13, 21);
        path.lineTo(11, 13);
        path.closeSubpath();
        p.setBrush(color);
        p.drawPath(path);
        break;
    }
    case IconShape::Stop:
        p.setBrush(color);
        p.drawRoundedRect(QRectF(5, 5, 14, 14), 2, 2);
        break;
    case IconShape::NewChat:
        p.drawRoundedRect(QRectF(3, 4, 18, 14), 3, 3);
        p.drawLine(QPointF(12, 7.5), QPointF(12, 14.5));
        p.drawLine(QPointF(8.5, 11), QPointF(15.5, 11));
        p.drawLine(QPointF(7, 18), QPointF(5, 21.5));
        break;
    case IconShape::Copy:
        p.drawRoundedRect(QRectF(8, 8, 12, 13), 2, 2);
        p.drawPolyline(QPolygonF({QPointF(16, 5), QPointF(16, 3), QPointF(4, 3), QPointF(4, 17), QPointF(6, 17)}));
        break;
    case IconShape::Edit: {
        QPainterPath path;
        path.moveTo(4, 20);
        path.lineTo(5, 15);
        path.lineTo(16, 4);
        path.lineTo(20, 8);
        path.lineTo(9, 19);
        path.closeSubpath();
        p.drawPath(path);
        p.drawLine(QPointF(13.5, 6.5), QPointF(17.5, 10.5));
        break;
    }
    case IconShape::Regenerate: {
        p.drawArc(QRectF(4, 4, 16, 16), 40 * 16, 280 * 16);
        QPainterPath head;
        head.moveTo(20.5, 3.5);
        head.lineTo(20.5, 9.5);
        head.lineTo(14.5, 9.5);
        p.drawPath(head);
        break;
    }
    case IconShape::Delete:
        p.drawLine(QPointF(3, 6), QPointF(21, 6));
        p.drawPolyline(QPolygonF({QPointF(9, 6), QPointF(9, 3), QPointF(15, 3), QPointF(15, 6)}));
        p.drawPolyline(QPolygonF({QPointF(5.5, 6), QPointF(7, 21), QPointF(17, 21), QPointF(18.5, 6)}));
        p.drawLine(QPointF(10, 10), QPointF(10, 17));
        p.drawLine(QPointF(14, 10), QPointF(14, 17));
        break;
    case IconShape::Folder: {
        QPainterPath path;
        path.moveTo(3, 6);
        path.lineTo(9, 6);
        path.lineTo(11, 8);
        path.lineTo(21, 8);
        path.lineTo(21, 19);
        path.lineTo(3, 19);
        path.closeSubpath();
        p.drawPath(path);
        break;
    }
    case IconShape::Download:
        p.drawLine(QPointF(12, 3), QPointF(12, 15));
        p.drawPolyline(QPolygonF({QPointF(7, 10), QPointF(12, 15), QPointF(17, 10)}));
        p.drawPolyline(QPolygonF({QPointF(4, 16), QPointF(4, 20), QPointF(20, 20), QPointF(20, 16)}));
        break;
    case IconShape::Settings: {
        p.drawEllipse(QPointF(12, 12), 3, 3);
        QPainterPath gear;
        for (int i = 0; i < 16; ++i) {
            const double a = i * M_PI / 8;
            const double r = (i % 2 == 0) ? 9.0 : 7.0;
            const QPointF pt(12 + r * qCos(a), 12 + r * qSin(a));
            i == 0 ? gear.moveTo(pt) : gear.lineTo(pt);
        }
        gear.closeSubpath();
        p.drawPath(gear);
        break;
    }
    case IconShape::Log:
        for (int i = 0; i < 4; ++i) p.drawLine(QPointF(4, 5 + i * 4.7), QPointF(i % 2 ? 15 : 20, 5 + i * 4.7));
        break;
    case IconShape::Server:
        p.drawRoundedRect(QRectF(3, 3.5, 18, 7), 2, 2);
        p.drawRoundedRect(QRectF(3, 13.5, 18, 7), 2, 2);
        p.setBrush(color);
        p.drawEllipse(QPointF(7, 7), 1, 1);
        p.drawEllipse(QPointF(7, 17), 1, 1);
        break;
    case IconShape::PreviousBranch: p.drawPolyline(QPolygonF({QPointF(15, 5), QPointF(8, 12), QPointF(15, 19)})); break;
    case IconShape::NextBranch: p.drawPolyline(QPolygonF({QPointF(9, 5), QPointF(16, 12), QPointF(9, 19)})); break;
    case IconShape::Split:
        p.drawRoundedRect(QRectF(3, 4, 18, 16), 2, 2);
        p.drawLine(QPointF(12, 4), QPointF(12, 20));
        break;
    case IconShape::Logo: {
        // Three flowing strokes: a brook.
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0x2f, 0x6f, 0xeb));
        p.drawRoundedRect(QRectF(1, 1, 22, 22), 6, 6);
        QPen wave(Qt::white, 2.2, Qt::SolidLine, Qt::RoundCap);
        p.setPen(wave);
        p.setBrush(Qt::NoBrush);
        for (int i = 0; i < 3; ++i) {
            QPainterPath path;
            const double y = 7.5 + i * 4.5;
            path.moveTo(5, y);
            path.cubicTo(8, y - 3, 11, y + 3, 14, y);
            path.cubicTo(16, y - 2, 18, y - 2, 19.5, y);
            p.drawPath(path);
        }
        break;
    }
    }
}

}  // namespace

void VectorIconEngine::paint(QPainter* painter, const QRect& rect, QIcon::Mode mode, QIcon::State)
{
    const QPalette palette = QApplication::palette();
    QColor color = palette.color(mode == QIcon::Disabled ? QPalette::Disabled : QPalette::Active, QPalette::ButtonText);
    if (mode == QIcon::Selected) color = palette.color(QPalette::HighlightedText);
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    const double side = std::min(rect.width(), rect.height());
    painter->translate(rect.x() + (rect.width() - side) / 2.0, rect.y() + (rect.height() - side) / 2.0);
    painter->scale(side / 24.0, side / 24.0);
    drawShape(*painter, m_shape, color);
    painter->restore();
}

QPixmap VectorIconEngine::pixmap(const QSize& size, QIcon::Mode mode, QIcon::State state)
{
    return scaledPixmap(size, mode, state, 1.0);
}

// QIcon passes `size` already in device pixels (logical size x scale).
QPixmap VectorIconEngine::scaledPixmap(const QSize& size, QIcon::Mode mode, QIcon::State state, qreal scale)
{
    QPixmap pixmap(size);
    pixmap.fill(Qt::transparent);
    {
        QPainter painter(&pixmap);
        paint(&painter, QRect(QPoint(0, 0), size), mode, state);
    }
    pixmap.setDevicePixelRatio(scale);
    return pixmap;
}

}  // namespace brook
