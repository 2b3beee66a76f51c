// ThemeManager: light and dark palettes. "system" keeps the palette the platform gave the app at
// start (so it follows the desktop's light or dark setting); "light" and "dark" force one.
// GUI thread only; create it after QApplication.
#pragma once

#include <QPalette>
#include <QString>

namespace brook {

class ThemeManager {
public:
    ThemeManager();  // remembers the system palette

    void apply(const QString& theme);  // "system", "light" or "dark"
    QString theme() const { return m_theme; }
    static QPalette darkPalette();
    static QPalette lightPalette();

private:
    QPalette m_system;
    QString m_theme = QStringLiteral("system");
};

}  // namespace brook
