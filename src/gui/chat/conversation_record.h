// ConversationRecord: one stored conversation: its title, its per-conversation settings and
// which leaf of its message tree is shown (the branch the user last looked at).
#pragma once

#include "gui/chat/chat_settings.h"

#include <QDateTime>
#include <QString>

namespace brook {

struct ConversationRecord {
    qint64 id = 0;
    QString title;
    ChatSettings settings;
    qint64 currentLeafId = 0;  // 0: no messages yet
    QDateTime createdAt;
    QDateTime updatedAt;
};

}  // namespace brook
