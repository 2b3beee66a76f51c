#include "gui/shell/model_library.h"

#include "gui/shell/model_names.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <algorithm>

namespace brook {

namespace {

qint64 folderBytes(const QString& dir)
{
    // Cache snapshots are symlinks into blobs/: count what they point at.
    qint64 total = 0;
    QDirIterator it(dir, QDir::Files | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) total += QFileInfo(it.next()).size();
    return total;
}

QString quantizationOf(const QString& dir)
{
    QFile file(QDir(dir).filePath(QStringLiteral("config.json")));
    if (!file.open(QIODevice::ReadOnly)) return {};
    const QJsonObject config = QJsonDocument::fromJson(file.readAll()).object();
    const QJsonObject q = config.value(QStringLiteral("quantization_config")).toObject();
    if (!q.isEmpty())
        return QStringLiteral("%1 %2-bit")
            .arg(q.value(QStringLiteral("quant_method")).toString(),
                 QString::number(q.value(QStringLiteral("bits")).toInt()));
    return config.value(QStringLiteral("torch_dtype")).toString();
}

bool holdsModel(const QString& dir) { return QFileInfo(QDir(dir).filePath(QStringLiteral("config.json"))).isFile(); }

}  // namespace

ModelEntry ModelLibrary::describe(const QString& dir, const QHash<QString, QDateTime>& lastUsed)
{
    ModelEntry e;
    e.dir = QDir::cleanPath(dir);
    e.name = ModelNames::displayName(e.dir);
    e.bytes = folderBytes(e.dir);
    e.quantization = quantizationOf(e.dir);
    e.lastUsed = lastUsed.value(e.dir);
    e.inHubCache = !ModelNames::hubCacheEntry(e.dir).isEmpty();
    return e;
}

QList<ModelEntry> ModelLibrary::scan(const QString& hubCacheDir, const QStringList& openedFolders,
                                     const QHash<QString, QDateTime>& lastUsed)
{
    QList<ModelEntry> out;
    QSet<QString> seen;
    auto add = [&](const QString& dir) {
        const QString clean = QDir::cleanPath(dir);
        if (seen.contains(clean) || !holdsModel(clean)) return;
        seen.insert(clean);
        out << describe(clean, lastUsed);
    };
    for (const QString& dir : openedFolders) add(dir);
    const QDir cache(hubCacheDir);
    for (const QString& repo : cache.entryList({QStringLiteral("models--*")}, QDir::Dirs | QDir::NoDotAndDotDot)) {
        // The newest snapshot holding a model stands for the repository.
        const QDir snapshots(cache.filePath(repo + QStringLiteral("/snapshots")));
        const QFileInfoList revisions = snapshots.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time);
        for (const QFileInfo& revision : revisions) {
            if (!holdsModel(revision.absoluteFilePath())) continue;
            add(revision.absoluteFilePath());
            break;
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const ModelEntry& a, const ModelEntry& b) {
        if (a.lastUsed != b.lastUsed) return a.lastUsed > b.lastUsed;
        return a.name.localeAwareCompare(b.name) < 0;
    });
    return out;
}

bool ModelLibrary::remove(const ModelEntry& entry, QString* error)
{
    const QString target = entry.inHubCache ? ModelNames::hubCacheEntry(entry.dir) : entry.dir;
    if (target.isEmpty() || !QFileInfo(target).isDir() || !QDir(target).removeRecursively()) {
        if (error) *error = QDir::toNativeSeparators(target);
        return false;
    }
    return true;
}

}  // namespace brook
