// Whether the installed fonts can draw a UI language's script. A minimal Linux install may have
// no font with Chinese glyphs; the zh_CN interface (and any Chinese chat) is then drawn as empty
// boxes, which is what a fresh Debian 12 showed. The .deb recommends a CJK font; this covers the
// tarball and installs without recommended packages: the window says which package to add.
#pragma once

#include <QFontDatabase>
#include <QString>

namespace brook::ScriptFontCheck {

// The writing system a UI language needs beyond Latin (Any for English and unknown languages).
QFontDatabase::WritingSystem writingSystem(const QString& language);

// True when some installed font family supports the language's writing system.
bool canDraw(const QString& language);

// The notice for a language whose script no font can draw, or an empty string when one can.
// Written with English first: in the language itself it may be the very text that cannot render.
QString missingFontNotice(const QString& language);

}  // namespace brook::ScriptFontCheck
