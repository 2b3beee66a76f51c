// MessageTree: one conversation's messages as a tree (parent ids), answering what the chat
// pane needs: the path from the root to a leaf (what the model sees), a message's siblings
// (the branches made by regenerate or edit) and the newest leaf below a message. Plain value
// type; rebuilt from HistoryStore rows.
#pragma once

#include "gui/chat/message_record.h"

#include <QHash>
#include <QList>

namespace brook {

class MessageTree {
public:
    MessageTree() = default;
    explicit MessageTree(const QList<MessageRecord>& messages);

    void add(const MessageRecord& message);  // id must be set and new
    void removeSubtree(qint64 id);
    bool contains(qint64 id) const { return m_byId.contains(id); }
    const MessageRecord* find(qint64 id) const;
    bool isEmpty() const { return m_byId.isEmpty(); }
    int size() const { return int(m_byId.size()); }

    // Root -> leaf. An unknown leaf gives the path to the newest leaf of the whole tree.
    QList<MessageRecord> pathTo(qint64 leafId) const;
    // Children of parentId (0: the roots), oldest first.
    QList<qint64> children(qint64 parentId) const;
    // The message's siblings including itself, oldest first, and its index among them.
    QList<qint64> siblings(qint64 id) const;
    int siblingIndex(qint64 id) const;
    // Follows the newest child from `id` down to a leaf.
    qint64 newestLeafUnder(qint64 id) const;
    qint64 newestLeaf() const;  // over the whole tree; 0 when empty

private:
    QHash<qint64, MessageRecord> m_byId;
    QHash<qint64, QList<qint64>> m_children;  // parent id -> child ids, ascending (= creation order)
};

}  // namespace brook
