#include "gui/shell/model_folder_check.h"

#include <QDir>
#include <QFileInfo>

namespace brook {

QString ModelFolderCheck::problem(const QString& dir)
{
    const QFileInfo info(dir);
    if (!info.exists()) return tr("%1 does not exist.").arg(dir);
    if (!info.isDir()) return tr("%1 is not a folder.").arg(dir);
    const QDir folder(dir);
    QStringList missing;
    if (!folder.exists(QStringLiteral("config.json"))) missing << QStringLiteral("config.json");
    if (!folder.exists(QStringLiteral("tokenizer.model"))) missing << QStringLiteral("tokenizer.model");
    if (folder.entryList({QStringLiteral("*.safetensors")}, QDir::Files).isEmpty())
        missing << tr("weights (*.safetensors)");
    if (missing.isEmpty()) return {};
    return tr("%1 is not a model folder: %2 missing. Choose the folder that holds the model's config.json.")
        .arg(dir, missing.join(QStringLiteral(", ")));
}

}  // namespace brook
