// MessageTree on random trees: paths lead from a root to the asked leaf, siblings are the
// children of one parent in creation order, newest-leaf descent, subtree removal.
#include "gui/chat/message_tree.h"

#include <QtTest>

#include <random>

using namespace brook;

namespace {

QList<MessageRecord> randomTree(std::mt19937& rng, int size)
{
    QList<MessageRecord> out;
    for (int i = 0; i < size; ++i) {
        MessageRecord m;
        m.id = 10 + i * 3;  // ids need not be dense
        const int parentIndex = std::uniform_int_distribution<int>(-1, i - 1)(rng);
        m.parentId = parentIndex < 0 ? 0 : out[parentIndex].id;
        m.role = i % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
        out.append(m);
    }
    return out;
}

}  // namespace

class TestMessageTree : public QObject {
    Q_OBJECT
private slots:
    void pathsSiblingsAndLeavesAgreeWithParents()
    {
        std::mt19937 rng(7);
        for (int round = 0; round < 20; ++round) {
            const QList<MessageRecord> records = randomTree(rng, 2 + round * 3);
            QHash<qint64, qint64> parentOf;
            for (const auto& r : records) parentOf[r.id] = r.parentId;
            const MessageTree tree(records);
            QCOMPARE(tree.size(), records.size());
            for (const auto& r : records) {
                const QList<MessageRecord> path = tree.pathTo(r.id);
                QVERIFY(!path.isEmpty());
                QCOMPARE(path.last().id, r.id);
                QCOMPARE(path.first().parentId, 0);
                for (int i = 1; i < path.size(); ++i) QCOMPARE(path[i].parentId, path[i - 1].id);

                const QList<qint64> siblings = tree.siblings(r.id);
                QVERIFY(siblings.contains(r.id));
                QVERIFY(std::is_sorted(siblings.begin(), siblings.end()));
                for (qint64 s : siblings) QCOMPARE(parentOf[s], r.parentId);
                QCOMPARE(tree.siblingIndex(r.id), int(siblings.indexOf(r.id)));

                const qint64 leaf = tree.newestLeafUnder(r.id);
                QVERIFY(tree.children(leaf).isEmpty());
                bool below = false;  // r is on the leaf's path
                for (const auto& p : tree.pathTo(leaf)) below |= p.id == r.id;
                QVERIFY(below);
            }
            QCOMPARE(tree.pathTo(-5).last().id, tree.newestLeaf());  // unknown leaf: newest branch
        }
    }

    void removeSubtreeDropsDescendantsOnly()
    {
        std::mt19937 rng(99);
        const QList<MessageRecord> records = randomTree(rng, 60);
        MessageTree tree(records);
        const qint64 victim = records[5].id;
        QSet<qint64> doomed{victim};
        for (const auto& r : records)  // parents come before children, so one pass suffices
            if (doomed.contains(r.parentId)) doomed.insert(r.id);
        tree.removeSubtree(victim);
        QCOMPARE(tree.size(), records.size() - doomed.size());
        for (const auto& r : records) QCOMPARE(tree.contains(r.id), !doomed.contains(r.id));
        QVERIFY(!tree.children(records[5].parentId).contains(victim));
    }

    void emptyTree()
    {
        const MessageTree tree;
        QVERIFY(tree.pathTo(1).isEmpty());
        QCOMPARE(tree.newestLeaf(), 0);
        QVERIFY(tree.siblings(1).isEmpty());
    }
};

QTEST_APPLESS_MAIN(TestMessageTree)
#include "test_message_tree.moc"
