#include "gui/shell/theme_manager.h"

#include <QApplication>
#include <QStyle>

namespace brook {

ThemeManager::ThemeManager() : m_system(QApplication::palette()) {}

QPalette ThemeManager::darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x31), base(0x1f, 0x21, 0x24), text(0xe6, 0xe6, 0xe6), disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x2f, 0x32, 0x37));
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9d, 0xa3));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x38, 0x3d));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(0x6a, 0xa5, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xeb));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Mid, QColor(0x50, 0x53, 0x58));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Light, QColor(0x45, 0x48, 0x4d));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

QPalette ThemeManager::lightPalette()
{
    QPalette p = QApplication::style()->standardPalette();
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xeb));
    p.setColor(QPalette::AlternateBase, QColor(0xf3, 0xf4, 0xf6));
    return p;
}

void ThemeManager::apply(const QString& theme)
{
    m_theme = theme;
    if (theme == QLatin1String("dark")) QApplication::setPalette(darkPalette());
    else if (theme == QLatin1String("light")) QApplication::setPalette(lightPalette());
    else QApplication::setPalette(m_system);
}

}  // namespace brook
