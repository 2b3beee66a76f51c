// ModelNames: what a model folder is called on screen. A Hugging Face cache snapshot
// (.../models--baidu--ERNIE-4.5-0.3B-PT/snapshots/<commit>) is "baidu/ERNIE-4.5-0.3B-PT", not the
// commit hash; any other folder is its own name.
#pragma once

#include <QString>

namespace brook {

class ModelNames {
public:
    static QString displayName(const QString& modelDir);
    // The models--owner--name folder a snapshot lives in, or "" for a folder outside the cache.
    static QString hubCacheEntry(const QString& modelDir);
};

}  // namespace brook
