// ModelFolderCheck: a quick look at a folder before a load starts (no file is read): does it hold
// config.json, tokenizer.model and safetensors weights? Opening the wrong folder then costs nothing:
// the running model and its chats stay as they are. The load itself validates everything else.
#pragma once

#include <QCoreApplication>
#include <QString>

namespace brook {

class ModelFolderCheck {
    Q_DECLARE_TR_FUNCTIONS(ModelFolderCheck)
public:
    // Empty when the folder looks like a model; else what is missing, translated.
    static QString problem(const QString& dir);
};

}  // namespace brook
