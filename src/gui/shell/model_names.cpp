#include "gui/shell/model_names.h"

#include <QDir>
#include <QFileInfo>
#include <QStringList>

namespace brook {

QString ModelNames::hubCacheEntry(const QString& modelDir)
{
    // By the path alone (the folder may be gone): <cache>/models--owner--name/snapshots/<commit>.
    const QStringList parts = QDir::cleanPath(QDir::fromNativeSeparators(modelDir)).split(QLatin1Char('/'));
    const qsizetype n = parts.size();
    if (n < 3 || parts[n - 2] != QLatin1String("snapshots") || !parts[n - 3].startsWith(QLatin1String("models--")))
        return {};
    return parts.mid(0, n - 2).join(QLatin1Char('/'));
}

QString ModelNames::displayName(const QString& modelDir)
{
    const QString entry = hubCacheEntry(modelDir);
    if (!entry.isEmpty()) {
        QString name = QFileInfo(entry).fileName().mid(int(qstrlen("models--")));
        return name.replace(QStringLiteral("--"), QStringLiteral("/"));
    }
    const QString name = QFileInfo(QDir::cleanPath(modelDir)).fileName();
    return name.isEmpty() ? modelDir : name;
}

}  // namespace brook
