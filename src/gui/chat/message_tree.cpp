#include "gui/chat/message_tree.h"

#include <algorithm>

namespace brook {

MessageTree::MessageTree(const QList<MessageRecord>& messages)
{
    for (const MessageRecord& m : messages) add(m);
}

void MessageTree::add(const MessageRecord& message)
{
    if (message.id == 0 || m_byId.contains(message.id)) return;
    m_byId.insert(message.id, message);
    QList<qint64>& siblings = m_children[message.parentId];
    siblings.insert(std::lower_bound(siblings.begin(), siblings.end(), message.id), message.id);
}

void MessageTree::removeSubtree(qint64 id)
{
    auto it = m_byId.find(id);
    if (it == m_byId.end()) return;
    const QList<qint64> kids = m_children.value(id);
    for (qint64 child : kids) removeSubtree(child);
    m_children.remove(id);
    m_children[it->parentId].removeAll(id);
    m_byId.erase(it);
}

const MessageRecord* MessageTree::find(qint64 id) const
{
    auto it = m_byId.constFind(id);
    return it == m_byId.constEnd() ? nullptr : &*it;
}

QList<MessageRecord> MessageTree::pathTo(qint64 leafId) const
{
    if (!m_byId.contains(leafId)) leafId = newestLeaf();
    QList<MessageRecord> path;
    // Bounded by the tree size: a corrupted parent cycle cannot loop forever.
    for (qint64 id = leafId; id != 0 && path.size() <= m_byId.size();) {
        const MessageRecord* m = find(id);
        if (!m) break;
        path.prepend(*m);
        id = m->parentId;
    }
    return path;
}

QList<qint64> MessageTree::children(qint64 parentId) const { return m_children.value(parentId); }

QList<qint64> MessageTree::siblings(qint64 id) const
{
    const MessageRecord* m = find(id);
    return m ? children(m->parentId) : QList<qint64>{};
}

int MessageTree::siblingIndex(qint64 id) const { return int(siblings(id).indexOf(id)); }

qint64 MessageTree::newestLeafUnder(qint64 id) const
{
    if (!m_byId.contains(id)) return 0;
    for (int guard = 0; guard <= m_byId.size(); ++guard) {
        const QList<qint64> kids = m_children.value(id);
        if (kids.isEmpty()) break;
        id = kids.last();
    }
    return id;
}

qint64 MessageTree::newestLeaf() const
{
    // The newest message overall, then down its newest children (it normally is a leaf already).
    qint64 newest = 0;
    for (auto it = m_byId.constBegin(); it != m_byId.constEnd(); ++it) newest = std::max(newest, it.key());
    return newest ? newestLeafUnder(newest) : 0;
}

}  // namespace brook
