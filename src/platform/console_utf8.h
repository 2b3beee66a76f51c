// Console text in UTF-8 everywhere. Linux terminals already are; a Windows console shows the
// bytes a program writes in its output code page, which is a legacy one (936, 1252, ...) unless
// set, so Chinese replies would print as mojibake. Input arrives as UTF-8 by the programs'
// manifest (packaging/windows/brook.exe.manifest). Call at the start of main.
#pragma once

namespace brook {

void useUtf8Console();

}  // namespace brook
