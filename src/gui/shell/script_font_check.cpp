#include "gui/shell/script_font_check.h"

#include <QCoreApplication>

#include <spdlog/spdlog.h>

namespace brook::ScriptFontCheck {

QFontDatabase::WritingSystem writingSystem(const QString& language)
{
    if (language.startsWith(QLatin1String("zh_CN"))) return QFontDatabase::SimplifiedChinese;
    return QFontDatabase::Any;
}

bool canDraw(const QString& language)
{
    const QFontDatabase::WritingSystem system = writingSystem(language);
    return system == QFontDatabase::Any || !QFontDatabase::families(system).isEmpty();
}

QString missingFontNotice(const QString& language)
{
    if (canDraw(language)) return {};
    spdlog::warn("no installed font can draw the {} interface: its text shows as empty boxes (Debian/Ubuntu: "
                 "sudo apt install fonts-noto-cjk)",
                 language.toStdString());
    return QCoreApplication::translate(
        "ScriptFontCheck",
        "No Chinese font is installed, so Chinese text shows as empty boxes. Install one "
        "(Debian/Ubuntu: sudo apt install fonts-noto-cjk) and restart Brook.");
}

}  // namespace brook::ScriptFontCheck
