// ModelLibrary: the models on this disk, for the Models page: every snapshot in the Hugging Face
// cache (models--owner--name/snapshots/<commit> holding a config.json) and every folder opened
// before, each with its size on disk, its quantization (config.json's quantization_config, else its
// torch_dtype) and when the app last loaded it. Reads folders only; deleting is explicit.
#pragma once

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace brook {

struct ModelEntry {
    QString dir;           // the folder a load opens
    QString name;          // ModelNames::displayName
    qint64 bytes = 0;      // on disk (symlinked cache blobs counted once each)
    QString quantization;  // "awq 4-bit", "bfloat16", ...
    QDateTime lastUsed;    // invalid: never loaded here
    bool inHubCache = false;
};

class ModelLibrary {
public:
    // Newest use first, then by name. `openedFolders` that no longer hold a model are left out.
    static QList<ModelEntry> scan(const QString& hubCacheDir, const QStringList& openedFolders,
                                  const QHash<QString, QDateTime>& lastUsed);
    static ModelEntry describe(const QString& dir, const QHash<QString, QDateTime>& lastUsed);
    // Deletes the model's files: a cache entry goes whole (models--owner--name), a folder goes.
    static bool remove(const ModelEntry& entry, QString* error);
};

}  // namespace brook
