// VectorIconEngine: Brook's toolbar and message icons, drawn with QPainter paths at whatever size
// and device pixel ratio is asked for (crisp on high-DPI screens without shipping bitmaps or
// needing Qt's SVG plugin), in the palette's text colour so they follow light and dark themes.
#pragma once

#include <QIcon>
#include <QIconEngine>

namespace brook {

enum class IconShape {
    Send,
    Stop,
    NewChat,
    Copy,
    Edit,
    Regenerate,
    Delete,
    Folder,
    Download,
    Settings,
    Log,
    Server,
    PreviousBranch,
    NextBranch,
    Split,
    Logo,
};

class VectorIconEngine : public QIconEngine {
public:
    explicit VectorIconEngine(IconShape shape) : m_shape(shape) {}

    static QIcon icon(IconShape shape) { return QIcon(new VectorIconEngine(shape)); }

    void paint(QPainter* painter, const QRect& rect, QIcon::Mode mode, QIcon::State state) override;
    QPixmap pixmap(const QSize& size, QIcon::Mode mode, QIcon::State state) override;
    QPixmap scaledPixmap(const QSize& size, QIcon::Mode mode, QIcon::State state, qreal scale) override;
    QIconEngine* clone() const override { return new VectorIconEngine(m_shape); }
    QString key() const override { return QStringLiteral("brook-vector"); }

private:
    IconShape m_shape;
};

}  // namespace brook
