// AutoHeightBrowser: a read-only QTextBrowser that is exactly as tall as its text at the current
// width (no inner scroll bar), so message bubbles stack in one scroll area like a chat.
#pragma once

#include <QTextBrowser>

namespace brook {

class AutoHeightBrowser : public QTextBrowser {
    Q_OBJECT
public:
    explicit AutoHeightBrowser(QWidget* parent = nullptr);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;  // passes scrolling on to the chat view

private slots:
    void handleContentsChanged();

private:
    int contentHeight() const;
};

}  // namespace brook
