// GuiTerms: engine and launcher messages are written for brook-serve's command line ("use
// --quantization int4"); the app says the same in its own words: a setting's name in the serving
// parameters, not a flag, and advice that names where to change it.
#pragma once

#include "engine/result.h"

#include <QCoreApplication>
#include <QString>

namespace brook {

class GuiTerms {
    Q_DECLARE_TR_FUNCTIONS(GuiTerms)
public:
    // "--max-model-len" -> "max-model-len", the spelling of the serving panel's labels.
    static QString fromCli(const QString& message);
    // A failed load in the app's words, with advice about the serving parameters by the error's
    // field and code (translated).
    static QString describeLoadError(const Error& error);
};

}  // namespace brook
