// ScreenFit: windows open at a size chosen for a large screen (1400×940 for the Performance
// window) but never larger than the screen they open on: at 1366×768 or 1024×700 they take most of
// it and scroll inside instead of running off its edges.
#pragma once

#include <QSize>

class QWidget;

namespace brook {

class ScreenFit {
public:
    static constexpr double kShare = 0.92;  // of the available area, leaving the desktop's panels and a margin

    // `preferred`, shrunk to the share of the available area of the screen `widget` is on.
    static QSize fitted(const QWidget* widget, QSize preferred);
    static void resizeToFit(QWidget* widget, QSize preferred);
    // After restoring a geometry saved on a larger screen: shrink (and move) it onto this one.
    static void keepOnScreen(QWidget* widget);
};

}  // namespace brook
